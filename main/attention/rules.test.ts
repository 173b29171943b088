// What waits on a person, as tables: which item new rows and events make, how one
// object's events gather, the list's order, how far a floor rises, what a notification
// says (never the text itself) and when it is due.
import { describe, expect, it } from 'vitest';
import {
  freshItems,
  notificationFor,
  sectionOf,
  titleWithCount,
  type AttentionItem,
  type AttentionKind,
} from '../../shared/attention';
import type { AttentionEventRow, ReadFloor } from '../store/queries/attention';
import { contentItemKind, groupEvents, newsOf, nextFloor, orderItems } from './rules';

describe('which item new content makes', () => {
  const rows: Array<[string, Parameters<typeof contentItemKind>[0], AttentionKind | null]> = [
    ['a role’s message in a conversation', { kind: 'conversation' }, 'answer'],
    ['a task’s log entry', { kind: 'task' }, 'task_update'],
    ['a text in an agent conversation the peer started', { kind: 'thread', startedByPeer: true }, 'peer_asked'],
    ['an answer to an ask made here (its root says so)', { kind: 'thread', startedByPeer: false }, null],
  ];
  for (const [what, object, kind] of rows)
    it(`${what}: ${kind ?? 'no item, only the mark'}`, () => expect(contentItemKind(object)).toBe(kind));
});

describe('whose news a text that came in is', () => {
  const rows: Array<[string, Parameters<typeof newsOf>[0], ReturnType<typeof newsOf>]> = [
    [
      'an answer to an ask from a conversation: the conversation’s',
      { root_kind: 'conversation', root_id: 3, root_gone: 0 },
      { kind: 'conversation', id: 3 },
    ],
    ['from a task: the task’s', { root_kind: 'task', root_id: 4, root_gone: 0 }, { kind: 'task', id: 4 }],
    [
      'a text in one the peer started, or an answer to what was asked on its behalf: that one’s',
      { root_kind: 'thread', root_id: 9, root_gone: 0 },
      { kind: 'thread', id: 9 },
    ],
    ['an answer whose topic is gone: nobody’s', { root_kind: 'conversation', root_id: 3, root_gone: 1 }, null],
  ];
  for (const [what, text, whose] of rows) it(what, () => expect(newsOf(text)).toEqual(whose));
});

describe('sections', () => {
  const rows: Array<[AttentionKind, string]> = [
    ['held', 'waiting'],
    ['held_in', 'waiting'],
    ['permission', 'waiting'],
    ['not_delivered', 'waiting'],
    ['agent_failed', 'waiting'],
    ['peer_paused', 'waiting'],
    ['peer_revoked', 'waiting'],
    ['answer', 'answered'],
    ['task_update', 'done'],
    ['peer_asked', 'done'],
  ];
  it('has a row for every kind', () => expect(rows.map(([k]) => k).sort()).toEqual(Object.keys(sectionOf).sort()));
  for (const [kind, section] of rows) it(`${kind} is ${section}`, () => expect(sectionOf[kind]).toBe(section));
});

const event = (patch: Partial<AttentionEventRow> & Pick<AttentionEventRow, 'id'>): AttentionEventRow => ({
  kind: 'text_failed',
  object_kind: 'thread',
  object_id: 7,
  reason: 'role',
  at: `2026-01-01T00:00:0${patch.id}.000Z`,
  ...patch,
});

describe('gathering events', () => {
  it('makes one item per object and kind, counting them, with the newest reason', () => {
    const groups = groupEvents([
      event({ id: 1, reason: 'queue' }),
      event({ id: 2, kind: 'turn_failed', reason: 'exit 1' }),
      event({ id: 3, reason: 'paused' }),
      event({ id: 4, object_id: 8 }),
      event({ id: 5, kind: 'peer_paused', object_kind: 'connection', object_id: 2, reason: null }),
      event({ id: 6, kind: 'peer_paused', object_kind: 'connection', object_id: 2, reason: null }),
      event({ id: 7, kind: 'turn_failed', object_kind: 'conversation', object_id: 7, reason: 'boom' }),
    ]);
    expect(groups.map((g) => [g.kind, `${g.object.kind}:${g.object.id}`, g.count, g.first, g.last, g.reason])).toEqual([
      ['not_delivered', 'thread:7', 2, 1, 3, 'paused'],
      ['agent_failed', 'thread:7', 1, 2, 2, 'exit 1'],
      ['not_delivered', 'thread:8', 1, 4, 4, 'role'],
      ['peer_paused', 'connection:2', 2, 5, 6, null],
      ['agent_failed', 'conversation:7', 1, 7, 7, 'boom'],
    ]);
    expect(groups[0]!.at).toBe(event({ id: 3 }).at);
  });
  it('a peer’s revoke is an item of its own beside its pause', () => {
    const groups = groupEvents([
      event({ id: 1, kind: 'peer_paused', object_kind: 'connection', object_id: 2 }),
      event({ id: 2, kind: 'peer_revoked', object_kind: 'connection', object_id: 2 }),
    ]);
    expect(groups.map((g) => g.kind)).toEqual(['peer_paused', 'peer_revoked']);
  });
});

const item = (patch: Partial<AttentionItem> & Pick<AttentionItem, 'kind' | 'at'>): AttentionItem => ({
  key: `${patch.kind}:${patch.at}`,
  section: sectionOf[patch.kind],
  object: { kind: 'thread', id: 1 },
  count: 1,
  stamp: '1',
  peer: 'bob',
  peerRole: 'researcher',
  role: 'assistant',
  root: null,
  title: 'assistant with bob/researcher',
  reason: null,
  ...patch,
});

describe('the order of the list', () => {
  it('waiting first, then answered, then done; newest first within each', () => {
    const items = [
      item({ kind: 'answer', at: '2026-01-01T10:00:00Z' }),
      item({ kind: 'task_update', at: '2026-01-01T12:00:00Z' }),
      item({ kind: 'not_delivered', at: '2026-01-01T09:00:00Z' }),
      item({ kind: 'held', at: '2026-01-01T11:00:00Z' }),
      item({ kind: 'answer', at: '2026-01-01T11:30:00Z' }),
    ];
    expect(orderItems(items).map((i) => `${i.kind}@${i.at.slice(11, 16)}`)).toEqual([
      'held@11:00',
      'not_delivered@09:00',
      'answer@11:30',
      'answer@10:00',
      'task_update@12:00',
    ]);
  });
});

describe('how far a floor rises', () => {
  const floor: ReadFloor = { message_id: 10, task_log_id: 5, text_id: 100, event_id: 3 };
  const newest: ReadFloor = { message_id: 20, task_log_id: 9, text_id: 150, event_id: 8 };
  const rows: Array<[string, Parameters<typeof nextFloor>[2], ReadFloor]> = [
    ['nothing unread: to the newest rows', {}, newest],
    [
      'something unread: to just below the first of it',
      { message_id: 15, text_id: 101, event_id: 4 },
      { message_id: 14, task_log_id: 9, text_id: 100, event_id: 3 },
    ],
    ['never down', { message_id: 3, task_log_id: 2 }, { message_id: 10, task_log_id: 5, text_id: 150, event_id: 8 }],
  ];
  for (const [what, first, expected] of rows) it(what, () => expect(nextFloor(floor, newest, first)).toEqual(expected));
});

describe('what a notification says', () => {
  // Never a text, a message, a task's title or an error: only who, and what happened.
  const secret = 'the secret plan';
  const rows: Array<[AttentionKind, Partial<AttentionItem>, { title: string; body: string }]> = [
    ['held', {}, { title: 'Waiting on you', body: 'assistant wants to send to bob/researcher' }],
    ['held_in', {}, { title: 'Waiting on you', body: 'bob/researcher wrote to assistant: approve it first' }],
    ['permission', { peer: null, peerRole: null }, { title: 'Waiting on you', body: 'assistant asks for permission' }],
    ['not_delivered', { reason: 'paused' }, { title: 'Waiting on you', body: 'Not delivered to bob/researcher' }],
    ['agent_failed', { peer: null, peerRole: null }, { title: 'Waiting on you', body: 'assistant failed' }],
    ['agent_failed', {}, { title: 'Waiting on you', body: 'assistant failed, with bob/researcher' }],
    ['peer_paused', { peerRole: null, role: null }, { title: 'Waiting on you', body: 'bob paused the connection' }],
    ['peer_revoked', { peerRole: null, role: null }, { title: 'Waiting on you', body: 'bob revoked the connection' }],
    ['answer', { peer: null, peerRole: null }, { title: 'Answered', body: 'assistant answered' }],
    ['answer', {}, { title: 'Answered', body: 'bob/researcher answered' }],
    ['task_update', { peer: null, peerRole: null }, { title: 'Done', body: 'assistant on a task' }],
    ['peer_asked', {}, { title: 'Done', body: 'bob/researcher asked assistant' }],
  ];
  for (const [kind, patch, expected] of rows)
    it(`${kind}: “${expected.title}: ${expected.body}”`, () => {
      const said = notificationFor(item({ kind, at: '2026-01-01T00:00:00Z', title: secret, reason: secret, ...patch }));
      expect(said).toEqual(expected);
      expect(JSON.stringify(said)).not.toContain(secret);
    });
});

describe('when a notification is due', () => {
  it('for a new item and for one that gained something; not again for the same', () => {
    const notified = new Map<string, string>();
    const a = item({ kind: 'answer', at: '1', key: 'a', stamp: 'm5' });
    const b = item({ kind: 'not_delivered', at: '2', key: 'b', stamp: 'e1' });
    expect(freshItems(notified, [a, b]).map((i) => i.key)).toEqual(['a', 'b']);
    expect(freshItems(notified, [a, b])).toEqual([]);
    expect(freshItems(notified, [a, { ...b, stamp: 'e2', count: 2 }]).map((i) => i.key)).toEqual(['b']);
    // Read (gone from the list), then the same again: nothing new to say.
    expect(freshItems(notified, [])).toEqual([]);
    expect(freshItems(notified, [a])).toEqual([]);
  });
});

describe('the window title', () => {
  it('counts what waits, and says nothing when nothing does', () => {
    expect(titleWithCount(0)).toBe('Parley');
    expect(titleWithCount(3)).toBe('Parley (3)');
  });
});
