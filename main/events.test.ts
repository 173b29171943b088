// Who hears a change event: a signed-in person in its audience, every observer, and no one
// who left, even in the middle of an emit.
import { describe, expect, it } from 'vitest';
import type { AppEvent } from '../shared/api-contract';
import type { Person } from '../shared/domain';
import { EventHub, type Audience } from './events';

const person = (id: number, kind: Person['kind']): Person => ({ id, name: `p${id}`, kind, createdAt: '' });
const changed = (id: number): AppEvent => ({ type: 'changed', kind: 'conversation', id });

describe('EventHub', () => {
  it.each<[string, Audience, string[]]>([
    ['everyone', 'everyone', ['owner', 'member', 'observer']],
    ['the owners', 'owners', ['owner', 'observer']],
    ['one person', { personId: 2 }, ['member', 'observer']],
    ['someone else', { personId: 9 }, ['observer']],
  ])('tells an event for %s to those in it and to every observer', (_name, audience, heard) => {
    const hub = new EventHub();
    const seen: string[] = [];
    hub.subscribe({ person: person(1, 'owner') }, () => seen.push('owner'));
    hub.subscribe({ person: person(2, 'member') }, () => seen.push('member'));
    hub.subscribe({ person: null }, () => seen.push('signed out'));
    hub.observe((_event, told) => {
      expect(told).toBe(audience);
      seen.push('observer');
    });
    hub.emit(changed(1), audience);
    expect(seen.sort()).toEqual([...heard].sort());
  });

  it('stops telling a session the moment it ends, even one ended by an earlier listener of the same event', () => {
    const hub = new EventHub();
    const viewer: { person: Person | null } = { person: person(1, 'owner') };
    const seen: string[] = [];
    let stopSecond = () => {};
    let stopObserver = () => {};
    hub.subscribe(viewer, (event) => {
      seen.push(`first ${String(event.type === 'changed' && event.id)}`);
      stopSecond();
      stopObserver();
    });
    stopSecond = hub.subscribe(viewer, () => seen.push('second'));
    // Observers hear an event before the sessions do: the first event reaches this one.
    stopObserver = hub.observe(() => seen.push('observer'));
    hub.emit(changed(1), 'everyone');
    hub.emit(changed(2), 'everyone');
    expect(seen).toEqual(['observer', 'first 1', 'first 2']);

    // A session whose person was removed or signed out hears nothing more.
    viewer.person = null;
    hub.emit(changed(3), 'everyone');
    expect(seen).toEqual(['observer', 'first 1', 'first 2']);
  });

  it('stops telling an observer the moment it stops, even when an earlier observer of the same event stops it', () => {
    const hub = new EventHub();
    const seen: string[] = [];
    let stopSecond = () => {};
    hub.observe(() => {
      seen.push('first');
      stopSecond();
    });
    stopSecond = hub.observe(() => seen.push('second'));
    hub.emit(changed(1), 'everyone');
    expect(seen).toEqual(['first']);
  });

  it('tells a listener added during an emit only of later events', () => {
    const hub = new EventHub();
    const seen: number[] = [];
    let added = false;
    hub.observe((event) => {
      if (added || event.type !== 'changed') return;
      added = true;
      hub.observe((later) => later.type === 'changed' && seen.push(later.id));
    });
    hub.emit(changed(1), 'everyone');
    hub.emit(changed(2), 'everyone');
    expect(seen).toEqual([2]);
  });
});
