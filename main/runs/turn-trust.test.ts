import { describe, expect, it } from 'vitest';
import { decideTurnTrust, type ThreadTrustFacts, type TrustFacts, type TurnTrustDecision } from './turn-trust';

const live = (trust: 'answer' | 'work' | 'full', name = 'bob') => ({ name, status: 'active' as const, trust });
const peerStarted = (patch: Partial<ThreadTrustFacts> = {}): ThreadTrustFacts => ({
  id: 10,
  root_kind: 'thread',
  root_id: 10,
  root_gone: false,
  started_by: 'peer',
  connection: live('work'),
  ...patch,
});
/** A relay: our thread to carol, rooted in bob's thread 10. */
const relay = (patch: Partial<ThreadTrustFacts> = {}): ThreadTrustFacts => ({
  id: 20,
  root_kind: 'thread',
  root_id: 10,
  root_gone: false,
  started_by: 'local',
  connection: live('full', 'carol'),
  ...patch,
});

const rows: Array<[string, TrustFacts, TurnTrustDecision]> = [
  ['a person’s conversation', { kind: 'conversation' }, { level: 'own' }],
  ['a task', { kind: 'task' }, { level: 'own' }],
  [
    'our ask from a person’s conversation, taking the peer’s reply',
    { kind: 'thread', thread: relay({ root_kind: 'conversation', root_id: 3 }) },
    { level: 'own' },
  ],
  ['our ask from a task', { kind: 'thread', thread: relay({ root_kind: 'task', root_id: 4 }) }, { level: 'own' }],
  [
    'a peer-started agent conversation at work',
    { kind: 'thread', thread: peerStarted() },
    { level: 'work', peer: 'bob' },
  ],
  [
    'a peer-started one at answer',
    { kind: 'thread', thread: peerStarted({ connection: live('answer') }) },
    { level: 'answer', peer: 'bob' },
  ],
  [
    'a peer-started one at full',
    { kind: 'thread', thread: peerStarted({ connection: live('full') }) },
    { level: 'full', peer: 'bob' },
  ],
  [
    'a paused connection keeps its level (its runs do not start anyway)',
    { kind: 'thread', thread: peerStarted({ connection: { name: 'bob', status: 'paused', trust: 'full' } }) },
    { level: 'full', peer: 'bob' },
  ],
  [
    'a relay’s reply works for the peer of the root, not the one that replied',
    { kind: 'thread', thread: relay(), root: peerStarted() },
    { level: 'work', peer: 'bob' },
  ],
  [
    'a relay to a peer trusted less still runs at the root peer’s level',
    {
      kind: 'thread',
      thread: relay({ connection: live('answer', 'carol') }),
      root: peerStarted({ connection: live('full') }),
    },
    { level: 'full', peer: 'bob' },
  ],
  [
    'a revoked root connection',
    {
      kind: 'thread',
      thread: peerStarted({ connection: { name: 'bob', status: 'revoked', trust: 'full' } }),
    },
    { level: 'answer', peer: 'bob', note: 'the connection with bob was revoked: this run works at “answer”' },
  ],
  [
    'a relay whose root connection was revoked',
    {
      kind: 'thread',
      thread: relay(),
      root: peerStarted({ connection: { name: 'bob', status: 'revoked', trust: 'full' } }),
    },
    { level: 'answer', peer: 'bob', note: 'the connection with bob was revoked: this run works at “answer”' },
  ],
  [
    'a root connection that is gone',
    { kind: 'thread', thread: relay(), root: peerStarted({ connection: undefined }) },
    { level: 'answer', note: 'the connection of the peer this run works for is gone: it runs at “answer”' },
  ],
  [
    'a relay whose root thread is gone',
    { kind: 'thread', thread: relay() },
    { level: 'answer', note: 'the agent conversation this run relays for is gone: it runs at “answer”' },
  ],
  [
    'a relay whose root is our own thread (not a peer’s topic)',
    { kind: 'thread', thread: relay(), root: peerStarted({ started_by: 'local' }) },
    {
      level: 'answer',
      note: 'the agent conversation this run relays for has no peer’s topic: it runs at “answer”',
    },
  ],
  [
    'a relay whose root is itself a relay',
    { kind: 'thread', thread: relay(), root: peerStarted({ root_id: 5 }) },
    {
      level: 'answer',
      note: 'the agent conversation this run relays for has no peer’s topic: it runs at “answer”',
    },
  ],
  [
    'a thread whose root is gone',
    { kind: 'thread', thread: relay({ root_kind: 'conversation', root_id: 3, root_gone: true }) },
    { level: 'answer', note: 'the topic this run answered for is gone: it runs at “answer”' },
  ],
  [
    'a thread that is gone',
    { kind: 'thread', thread: undefined },
    { level: 'answer', note: 'its agent conversation is gone: it runs at “answer”' },
  ],
  [
    'a thread of ours that is its own root',
    { kind: 'thread', thread: peerStarted({ started_by: 'local' }) },
    { level: 'answer', note: 'its agent conversation has no topic here: it runs at “answer”' },
  ],
];

describe('the trust a turn runs under', () => {
  it.each(rows)('%s', (_name, facts, expected) => {
    expect(decideTurnTrust(facts)).toEqual(expected);
  });
});
