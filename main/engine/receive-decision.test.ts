import { describe, expect, it } from 'vitest';
import { decideText, type IncomingText, type TextVerdict } from './receive-decision';

const thread = {
  status: 'open',
  peer_role: 'assistant',
  local_role: 'researcher',
  local_role_id: 7,
  started_by: 'peer',
} as const;

/** A text every check lets through: a new text in an open thread the peer started. */
const fine: IncomingText = {
  repeat: false,
  connection: 'active',
  thread,
  from: 'assistant',
  to: 'researcher',
  role: { id: 7 },
  exposed: true,
  queueFull: false,
};

const closed = { ...thread, status: 'closed' } as const;
const ours = { ...thread, started_by: 'local' } as const;

describe('what the receiver does with a text', () => {
  it.each<[string, Partial<IncomingText>, TextVerdict]>([
    ['a new text that passes every check', {}, 'accept'],
    ['the first text of an unknown thread', { thread: null }, 'accept'],
    ['a repeat', { repeat: true }, 'repeat'],
    ['on a revoked connection', { connection: 'revoked' }, 'revoke'],
    ['on a paused connection', { connection: 'paused' }, 'paused'],
    ['in a closed thread', { thread: closed }, 'thread'],
    ['from another role than the thread’s', { from: 'someone' }, 'roles'],
    ['to another role than the thread’s', { to: 'scribe' }, 'roles'],
    ['to a role that does not exist', { thread: null, role: null }, 'role'],
    ['to a role that replaced the thread’s (same name, new id)', { role: { id: 8 } }, 'role'],
    ['to a role not exposed to that peer', { exposed: false }, 'role'],
    ['an answer in a thread we started, to a role not exposed', { thread: ours, exposed: false }, 'accept'],
    ['when too much waits unhandled', { queueFull: true }, 'queue'],
    // Two reasons at once: the earlier check wins.
    ['a repeat on a paused connection (acked again)', { repeat: true, connection: 'paused' }, 'repeat'],
    ['a repeat in a closed thread', { repeat: true, thread: closed }, 'repeat'],
    ['revoked, in a closed thread', { connection: 'revoked', thread: closed }, 'revoke'],
    ['paused, in a closed thread', { connection: 'paused', thread: closed }, 'paused'],
    ['paused, with a full queue', { connection: 'paused', queueFull: true }, 'paused'],
    ['closed, with roles that do not match', { thread: closed, from: 'someone' }, 'thread'],
    ['roles that do not match, to a role that is gone', { from: 'someone', role: null }, 'roles'],
    ['a role that is gone, with a full queue', { thread: null, role: null, queueFull: true }, 'role'],
    ['not exposed, with a full queue', { exposed: false, queueFull: true }, 'role'],
    ['an answer in our thread, with a full queue', { thread: ours, exposed: false, queueFull: true }, 'queue'],
  ])('%s → %s', (_what, patch, verdict) => {
    expect(decideText({ ...fine, ...patch })).toBe(verdict);
  });
});
