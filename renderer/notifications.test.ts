// The browser's notifications under Node, with the browser's Notification and the
// tab's visibility stood in: nothing for what waited at load, nothing while the tab is
// in view or without permission, one per new item otherwise, naming peer and role only;
// a click brings the tab forward and opens the item.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sectionOf, wantsNotification, type AttentionItem, type NotificationPrefs } from '../shared/attention';
import { BrowserNotifier, notificationState } from './notifications';

const item = (key: string, stamp: string, patch: Partial<AttentionItem> = {}): AttentionItem => ({
  key,
  kind: 'not_delivered',
  section: sectionOf.not_delivered,
  object: { kind: 'thread', id: 9 },
  count: 1,
  stamp,
  at: '2026-01-01T00:00:00Z',
  peer: 'bob',
  peerRole: 'researcher',
  role: 'assistant',
  root: { kind: 'conversation', id: 3, gone: false },
  title: 'the secret plan',
  reason: 'paused',
  ...patch,
});

class StandInNotification {
  static permission: NotificationPermission = 'granted';
  static shown: StandInNotification[] = [];
  onclick: (() => void) | null = null;
  closed = false;
  constructor(
    readonly title: string,
    readonly options: NotificationOptions,
  ) {
    StandInNotification.shown.push(this);
  }
  close() {
    this.closed = true;
  }
}

describe('browser notifications', () => {
  const page = { visibilityState: 'visible' as DocumentVisibilityState };
  const focus = vi.fn();
  beforeEach(() => {
    StandInNotification.shown = [];
    StandInNotification.permission = 'granted';
    page.visibilityState = 'visible';
    focus.mockReset();
    vi.stubGlobal('Notification', StandInNotification);
    vi.stubGlobal('document', page);
    vi.stubGlobal('window', { focus });
  });
  afterEach(() => vi.unstubAllGlobals());

  it('stay silent for a kind or a connection the person turned off, and stay silent when it is news again', () => {
    let prefs: NotificationPrefs | null = null;
    const notifier = new BrowserNotifier(
      () => undefined,
      () => prefs,
    );
    notifier.update([]);
    page.visibilityState = 'hidden';
    prefs = {
      kinds: [
        { kind: 'answer', notify: false },
        { kind: 'not_delivered', notify: true },
      ],
      connections: [
        { id: 1, name: 'bob', notify: true },
        { id: 2, name: 'carol', notify: false },
      ],
    };
    notifier.update([
      item('a', 'e1', { kind: 'answer', section: 'answered' }),
      item('c', 'e1', { peer: 'carol' }),
      item('b', 'e1'),
    ]);
    expect(StandInNotification.shown.map((n) => n.options.tag)).toEqual(['b']);
    // Turned back on, only what is new since then notifies: what was silent stays told.
    prefs = null;
    notifier.update([item('a', 'e1', { kind: 'answer', section: 'answered' }), item('c', 'e2', { peer: 'carol' })]);
    expect(StandInNotification.shown.map((n) => n.options.tag)).toEqual(['b', 'c']);
  });

  it.each<[string, Partial<AttentionItem>, boolean]>([
    ['a kind left on', { kind: 'not_delivered' }, true],
    ['a kind turned off', { kind: 'answer' }, false],
    ['a connection turned off', { peer: 'carol' }, false],
    ['a connection left on', { peer: 'bob' }, true],
    ['no peer at all, its kind on', { peer: null }, true],
    ['a connection never listed', { peer: 'dave' }, true],
  ])('wantsNotification: %s', (_what, patch, wanted) => {
    const prefs: NotificationPrefs = {
      kinds: [{ kind: 'answer', notify: false }],
      connections: [
        { id: 1, name: 'bob', notify: true },
        { id: 2, name: 'carol', notify: false },
      ],
    };
    expect(wantsNotification(prefs, item('x', 'e1', patch))).toBe(wanted);
    expect(wantsNotification(null, item('x', 'e1', patch))).toBe(true);
  });

  it('show what is new only while the tab is hidden, once each, and a click opens it', () => {
    const opened: AttentionItem[] = [];
    const notifier = new BrowserNotifier((i) => opened.push(i));
    notifier.update([item('a', 'e1')]); // at load: not news
    page.visibilityState = 'hidden';
    notifier.update([item('a', 'e1')]);
    expect(StandInNotification.shown).toEqual([]);

    notifier.update([item('a', 'e1'), item('b', 'e2', { kind: 'answer', section: 'answered', peer: null })]);
    expect(StandInNotification.shown.map((n) => [n.title, n.options.body, n.options.tag])).toEqual([
      ['Answered', 'assistant answered', 'b'],
    ]);
    // Something more in an item it showed: news again.
    notifier.update([item('a', 'e3', { count: 2 })]);
    expect(StandInNotification.shown.map((n) => n.options.body)).toEqual([
      'assistant answered',
      'Not delivered to bob/researcher',
    ]);
    expect(JSON.stringify(StandInNotification.shown.map((n) => [n.title, n.options]))).not.toContain('secret');

    StandInNotification.shown[1]!.onclick!();
    expect(focus).toHaveBeenCalled();
    expect(opened.map((i) => i.key)).toEqual(['a']);
    expect(StandInNotification.shown[1]!.closed).toBe(true);
  });

  it('show nothing while the tab is in view, or without permission', () => {
    const notifier = new BrowserNotifier(() => undefined);
    notifier.update([]);
    notifier.update([item('a', 'e1')]); // in view
    StandInNotification.permission = 'denied';
    page.visibilityState = 'hidden';
    notifier.update([item('b', 'e2')]);
    StandInNotification.permission = 'default';
    notifier.update([item('c', 'e3')]);
    expect(StandInNotification.shown).toEqual([]);
  });

  it('leave the desktop app to main: its page has the preload bridge', () => {
    vi.stubGlobal('window', { focus, parley: {} });
    expect(notificationState()).toBe('unsupported');
    vi.stubGlobal('window', { focus });
    expect(notificationState()).toBe('granted');
  });
});
