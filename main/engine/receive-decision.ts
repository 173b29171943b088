// What the receiver does with a text frame, decided from what it knows — no I/O here.
// In order: a repeat is acked again; then a revoked or paused connection, a closed
// agent conversation, roles that do not match it, a role that is gone or not exposed
// to that peer, too much waiting. The first that applies is the answer.
import type { ConnectionStatus } from '../store/queries/connections';
import type { ThreadRow } from '../store/queries/threads';
import type { RejectReason } from './wire';

export interface IncomingText {
  /** The frame's seq is at or below the last one committed in its thread. */
  repeat: boolean;
  connection: ConnectionStatus;
  /** The agent conversation the frame's thread ID names here, if any. */
  thread: Pick<ThreadRow, 'status' | 'peer_role' | 'local_role' | 'local_role_id' | 'started_by'> | null;
  from: string;
  to: string;
  /** The local role named by `to`, if it exists. */
  role: { id: number } | null;
  /** That role is exposed to this peer. */
  exposed: boolean;
  /** Too many texts from this peer wait unhandled. */
  queueFull: boolean;
}

/** Ack again (`repeat`), commit it (`accept`), or reject it with a reason. */
export type TextVerdict = 'repeat' | 'accept' | RejectReason;

export function decideText(text: IncomingText): TextVerdict {
  const { thread, role } = text;
  if (text.repeat) return 'repeat';
  if (text.connection === 'revoked') return 'revoke';
  if (text.connection === 'paused') return 'paused';
  if (thread?.status === 'closed') return 'thread';
  if (thread && (thread.peer_role !== text.from || thread.local_role !== text.to)) return 'roles';
  if (!role || (thread && thread.local_role_id !== role.id)) return 'role';
  // Exposure limits what a peer may address; an answer in an agent conversation we
  // started is not addressing, it is the conversation going on.
  if (thread?.started_by !== 'local' && !text.exposed) return 'role';
  if (text.queueFull) return 'queue';
  return 'accept';
}
