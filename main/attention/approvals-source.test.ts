import { describe, expect, it } from 'vitest';
import type { ApprovalView } from '../../shared/domain';
import { approvalItem } from './approvals-source';

const view = (over: Partial<ApprovalView>): ApprovalView => ({
  id: 7,
  kind: 'outgoing',
  state: 'pending',
  context: { kind: 'thread', id: 3 },
  root: { kind: 'conversation', id: 1 },
  role: 'assistant',
  thread: { id: 3, peer: 'bob/researcher', localRole: 'assistant' },
  text: { id: 40, seq: 2, preview: 'the secret plan' },
  title: '',
  detail: null,
  canDecide: true,
  reason: null,
  decidedBy: null,
  createdAt: '2026-12-01T10:00:00.000Z',
  decidedAt: null,
  ...over,
});

describe('what waits for a decision, as items of the attention list', () => {
  const rows: Array<[string, ApprovalView, boolean, Partial<ReturnType<typeof approvalItem>>]> = [
    [
      'a held ask opens its agent conversation, named for the peer it goes to',
      view({}),
      false,
      {
        key: 'held:approval:7',
        kind: 'held',
        section: 'waiting',
        object: { kind: 'thread', id: 3 },
        peer: 'bob',
        peerRole: 'researcher',
        role: 'assistant',
        root: { kind: 'conversation', id: 1, gone: false },
        title: 'bob/researcher',
        count: 1,
        approvalId: 7,
      },
    ],
    [
      'a peer’s text held before the agent takes it',
      view({ id: 8, kind: 'incoming', root: { kind: 'thread', id: 3 } }),
      false,
      { key: 'held_in:approval:8', kind: 'held_in', section: 'waiting', object: { kind: 'thread', id: 3 } },
    ],
    [
      'a tool request in a conversation opens the conversation, titled by the tool',
      view({
        id: 9,
        kind: 'permission',
        context: { kind: 'conversation', id: 1 },
        thread: null,
        text: null,
        title: 'Run ls',
      }),
      false,
      {
        kind: 'permission',
        object: { kind: 'conversation', id: 1 },
        peer: null,
        peerRole: null,
        root: null,
        title: 'Run ls',
      },
    ],
    [
      'one whose root was deleted says so',
      view({ id: 10 }),
      true,
      { root: { kind: 'conversation', id: 1, gone: true } },
    ],
  ];
  for (const [what, approval, gone, expected] of rows)
    it(what, () => expect(approvalItem(approval, gone)).toMatchObject(expected));

  it('gives two held texts of one agent conversation an item each', () => {
    expect(approvalItem(view({ id: 1 }), false).key).not.toBe(approvalItem(view({ id: 2 }), false).key);
  });

  it('never carries the held text itself (a notification is made of the item)', () => {
    expect(JSON.stringify(approvalItem(view({}), false))).not.toContain('secret');
  });
});
