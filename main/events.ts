// Change events for signed-in clients. Each event carries its audience, computed by the
// access rules (./access), so a person's client never learns even the ids of what they
// may not read; a session that ends (its person removed, its token replaced) hears
// nothing from that moment on.
import type { AppEvent } from '../shared/api-contract';
import type { Person } from '../shared/domain';
import { inAudience, type Audience } from './access/rules';

export type { Audience };

type Listener = (event: AppEvent) => void;

/** Who listens: read on every event, so a session signed out meanwhile is skipped. */
export interface EventViewer {
  readonly person: Person | null;
}

export class EventHub {
  private readonly listeners = new Set<{ viewer: EventViewer; listener: Listener }>();

  subscribe(viewer: EventViewer, listener: Listener): () => void {
    const entry = { viewer, listener };
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }

  private readonly observers = new Set<(event: AppEvent, audience: Audience) => void>();

  /**
   * Sees every event regardless of audience, with the audience it went to: for
   * main-process code (what waits on people follows what they heard of) and tests.
   */
  observe(listener: (event: AppEvent, audience: Audience) => void): () => void {
    this.observers.add(listener);
    return () => this.observers.delete(listener);
  }

  emit(event: AppEvent, audience: Audience): void {
    for (const observer of this.observers) observer(event, audience);
    for (const { viewer, listener } of this.listeners) {
      const person = viewer.person;
      if (person && inAudience(person, audience)) listener(event);
    }
  }
}
