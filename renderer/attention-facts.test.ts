// Tables for what the window says about what waits: where each item opens, how it reads,
// and the counts beside the sidebar's places.
import { describe, expect, it } from 'vitest';
import { sectionOf, type AttentionItem, type AttentionKind, type UnreadMark } from '../shared/attention';
import { describeItem, indexMarks, placeOf, sidebarCounts, unreadOf, type Place } from './attention-facts';

const item = (patch: Partial<AttentionItem> & Pick<AttentionItem, 'kind'>): AttentionItem => ({
  key: `${patch.kind}:x`,
  section: sectionOf[patch.kind],
  object: { kind: 'thread', id: 9 },
  count: 1,
  stamp: 'c1',
  at: '2026-01-01T00:00:00Z',
  peer: 'bob',
  peerRole: 'researcher',
  role: 'assistant',
  root: { kind: 'conversation', id: 3, gone: false },
  title: 'assistant with bob/researcher',
  reason: null,
  ...patch,
});

describe('where an item opens', () => {
  const rows: Array<[string, Pick<AttentionItem, 'object' | 'root'>, Place]> = [
    [
      'a conversation',
      { object: { kind: 'conversation', id: 3 }, root: null },
      { view: { kind: 'conversation', id: 3 }, expand: [] },
    ],
    ['a task', { object: { kind: 'task', id: 4 }, root: null }, { view: { kind: 'tasks', id: 4 }, expand: [] }],
    [
      'a connection',
      { object: { kind: 'connection', id: 2 }, root: null },
      { view: { kind: 'settings', tab: 'connections' }, expand: [] },
    ],
    [
      'an agent conversation under a conversation: opened there',
      { object: { kind: 'thread', id: 9 }, root: { kind: 'conversation', id: 3, gone: false } },
      { view: { kind: 'conversation', id: 3 }, expand: [9] },
    ],
    [
      'under a task',
      { object: { kind: 'thread', id: 9 }, root: { kind: 'task', id: 4, gone: false } },
      { view: { kind: 'tasks', id: 4 }, expand: [9] },
    ],
    [
      'one the peer started',
      { object: { kind: 'thread', id: 9 }, root: { kind: 'thread', id: 9, gone: false } },
      { view: { kind: 'peer' }, expand: [9] },
    ],
    [
      'one asked on behalf of one the peer started: inside it',
      { object: { kind: 'thread', id: 10 }, root: { kind: 'thread', id: 9, gone: false } },
      { view: { kind: 'peer' }, expand: [9, 10] },
    ],
    [
      'one whose root is gone',
      { object: { kind: 'thread', id: 9 }, root: { kind: 'conversation', id: 3, gone: true } },
      { view: { kind: 'orphaned' }, expand: [9] },
    ],
  ];
  for (const [what, given, place] of rows) it(what, () => expect(placeOf(given)).toEqual(place));
});

describe('how an item reads', () => {
  const rows: Array<[AttentionKind, Partial<AttentionItem>, { headline: string; detail: string }]> = [
    ['held', {}, { headline: 'assistant wants to send to bob/researcher', detail: 'Held for approval' }],
    [
      'held_in',
      {},
      { headline: 'bob/researcher wrote to assistant', detail: 'Held for approval before the agent takes it' },
    ],
    [
      'not_delivered',
      { reason: 'paused' },
      { headline: 'A text not delivered to bob/researcher', detail: 'assistant · the connection is paused' },
    ],
    [
      'not_delivered',
      { reason: 'thread', count: 3 },
      {
        headline: '3 texts not delivered to bob/researcher',
        detail: 'assistant · the peer closed this agent conversation',
      },
    ],
    [
      'agent_failed',
      { object: { kind: 'task', id: 4 }, peer: null, peerRole: null, title: 'the report', reason: 'exit 3' },
      { headline: 'assistant failed', detail: 'Task: the report' },
    ],
    [
      'agent_failed',
      { object: { kind: 'conversation', id: 3 }, peer: null, peerRole: null, reason: 'exit 3' },
      { headline: 'assistant failed', detail: 'exit 3' },
    ],
    [
      'peer_paused',
      { object: { kind: 'connection', id: 2 }, peerRole: null, role: null },
      { headline: 'bob paused the connection', detail: 'Their roles refuse what yours send until they unpause it' },
    ],
    [
      'peer_revoked',
      { object: { kind: 'connection', id: 2 }, peerRole: null, role: null },
      { headline: 'bob revoked the connection', detail: 'For good: nothing goes either way any more' },
    ],
    ['answer', { count: 2, peer: null }, { headline: 'assistant answered', detail: '2 new messages' }],
    [
      'answer',
      { object: { kind: 'conversation', id: 3 } },
      { headline: 'bob/researcher answered', detail: 'To assistant · 1 new' },
    ],
    ['task_update', { title: 'the report', peer: null }, { headline: 'the report', detail: 'assistant · news' }],
    ['peer_asked', {}, { headline: 'bob/researcher asked assistant', detail: 'A new text' }],
  ];
  for (const [kind, patch, expected] of rows)
    it(`${kind}: ${expected.headline}`, () => expect(describeItem(item({ kind, ...patch }))).toEqual(expected));
});

describe('unread counts', () => {
  const marks: UnreadMark[] = [
    { object: { kind: 'conversation', id: 3 }, count: 2, peerStarted: false },
    { object: { kind: 'task', id: 4 }, count: 1, peerStarted: false },
    { object: { kind: 'task', id: 5 }, count: 4, peerStarted: false },
    { object: { kind: 'thread', id: 9 }, count: 1, peerStarted: true },
    { object: { kind: 'thread', id: 10 }, count: 3, peerStarted: true },
    { object: { kind: 'thread', id: 11 }, count: 1, peerStarted: false },
  ];
  it('per object, and nothing for what has none', () => {
    const index = indexMarks(marks);
    expect(unreadOf({ kind: 'conversation', id: 3 }, index, [])).toBe(2);
    expect(unreadOf({ kind: 'thread', id: 11 }, index, [])).toBe(1);
    expect(unreadOf({ kind: 'conversation', id: 99 }, index, [])).toBe(0);
  });
  it('a connection by its items (a peer’s pause, its revoke)', () => {
    const items = [
      item({ kind: 'peer_paused', object: { kind: 'connection', id: 2 } }),
      item({ kind: 'peer_revoked', object: { kind: 'connection', id: 2 } }),
      item({ kind: 'answer', object: { kind: 'conversation', id: 3 } }),
    ];
    expect(unreadOf({ kind: 'connection', id: 2 }, new Map(), items)).toBe(2);
    expect(unreadOf({ kind: 'connection', id: 7 }, new Map(), items)).toBe(0);
  });
  it('the sidebar counts tasks with news and agent conversations under “Started by peers”', () => {
    expect(sidebarCounts(marks)).toEqual({ tasks: 2, peerStarted: 2 });
    expect(sidebarCounts([])).toEqual({ tasks: 0, peerStarted: 0 });
  });
});
