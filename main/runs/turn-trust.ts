// The trust a turn runs under (DESIGN §12.3): `own` for a run that works for this
// installation's people, else the level of the connection whose peer the run works for.
// A run works for a peer when it is in an agent conversation that peer started, or in one
// rooted there (a relay to another role, including the run that takes the relay's reply).
// The decision is a pure function of the facts; `turnTrustOf` reads them.
import type { ContextKind, TrustLevel, TurnTrust } from '../../shared/domain';
import type { Db } from '../store/database';
import { getConnectionRow, type ConnectionRow } from '../store/queries/connections';
import { getThread, type ThreadRow } from '../store/queries/threads';

/** What of a thread the decision reads, with its connection as it is now (undefined: gone). */
export interface ThreadTrustFacts {
  id: number;
  root_kind: ContextKind;
  root_id: number;
  root_gone: boolean;
  started_by: 'local' | 'peer';
  connection?: { name: string; status: 'active' | 'paused' | 'revoked'; trust: TrustLevel };
}

export type TrustFacts =
  | { kind: 'conversation' | 'task' }
  /** `root`: the thread's root thread when the root is another thread (undefined: it is gone). */
  | { kind: 'thread'; thread: ThreadTrustFacts | undefined; root?: ThreadTrustFacts };

export interface TurnTrustDecision {
  level: TurnTrust;
  /** The connection whose peer the run works for, when it works for one. */
  peer?: string;
  /** Why the level is not the connection's own: the chain could not be followed to a live connection. */
  note?: string;
}

/**
 * Anything that cannot be followed to a peer-started agent conversation on a live
 * connection runs at `answer`, the level that reaches least: a run that may work for a
 * peer must not get more because its chain broke.
 */
const SAFEST: TrustLevel = 'answer';

function fromPeerThread(start: ThreadTrustFacts): TurnTrustDecision {
  const connection = start.connection;
  if (!connection)
    return { level: SAFEST, note: 'the connection of the peer this run works for is gone: it runs at “answer”' };
  if (connection.status === 'revoked')
    return {
      level: SAFEST,
      peer: connection.name,
      note: `the connection with ${connection.name} was revoked: this run works at “answer”`,
    };
  return { level: connection.trust, peer: connection.name };
}

export function decideTurnTrust(facts: TrustFacts): TurnTrustDecision {
  if (facts.kind !== 'thread') return { level: 'own' };
  const thread = facts.thread;
  if (!thread) return { level: SAFEST, note: 'its agent conversation is gone: it runs at “answer”' };
  if (thread.root_gone) return { level: SAFEST, note: 'the topic this run answered for is gone: it runs at “answer”' };
  // Rooted in a person's conversation or a task: the run works for this installation's people.
  if (thread.root_kind !== 'thread') return { level: 'own' };
  if (thread.root_id === thread.id)
    return thread.started_by === 'peer'
      ? fromPeerThread(thread)
      : { level: SAFEST, note: 'its agent conversation has no topic here: it runs at “answer”' };
  const root = facts.root;
  if (!root || root.id !== thread.root_id)
    return { level: SAFEST, note: 'the agent conversation this run relays for is gone: it runs at “answer”' };
  if (root.root_gone || root.root_kind !== 'thread' || root.root_id !== root.id || root.started_by !== 'peer')
    return {
      level: SAFEST,
      note: 'the agent conversation this run relays for has no peer’s topic: it runs at “answer”',
    };
  return fromPeerThread(root);
}

function threadFacts(db: Db, row: ThreadRow | undefined): ThreadTrustFacts | undefined {
  if (!row) return undefined;
  const connection: ConnectionRow | undefined = getConnectionRow(db, row.connection_id);
  return {
    id: row.id,
    root_kind: row.root_kind,
    root_id: row.root_id,
    root_gone: row.root_gone !== 0,
    started_by: row.started_by,
    ...(connection
      ? { connection: { name: connection.name, status: connection.status, trust: connection.trust } }
      : {}),
  };
}

/** The trust of a turn of a run on `context`, as the store holds it now. */
export function turnTrustOf(db: Db, context: { kind: ContextKind; id: number }): TurnTrustDecision {
  if (context.kind !== 'thread') return decideTurnTrust({ kind: context.kind });
  const thread = getThread(db, context.id);
  const root =
    thread && thread.root_kind === 'thread' && thread.root_id !== thread.id
      ? threadFacts(db, getThread(db, thread.root_id))
      : undefined;
  return decideTurnTrust({ kind: 'thread', thread: threadFacts(db, thread), ...(root ? { root } : {}) });
}
