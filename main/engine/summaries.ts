// What people and agents are shown of connections and agent conversations: summaries
// for the app API, a run's description of where it is and whom it answers for, and a
// role's history with a peer role.
import { lastInSeq } from '../store/queries/withdrawals';
import type { ConnectionSummary, RunSummary, TextView, ThreadSummary, TurnSummary } from '../../shared/domain';
import type { AgentContext, PeerDirectoryEntry } from '../agents/types';
import type { HistoryEntry } from '../role-api/protocol';
import type { Role } from '../../shared/domain';
import {
  connectionByName,
  exposedRoleNames,
  getConnectionRow,
  peerRoles,
  type ConnectionRow,
} from '../store/queries/connections';
import { getConversationRow } from '../store/queries/conversations';
import { getPerson } from '../store/queries/people';
import { runState, type RunRow } from '../store/queries/runs';
import { threadListRow, type ThreadListRow } from '../store/queries/thread-lists';
import { relayByKey } from '../store/queries/relays';
import { getTaskRow } from '../store/queries/tasks';
import {
  getThread,
  historyBetween,
  listTexts,
  outgoingWaiting,
  type ListedTextRow,
  type ThreadRow,
} from '../store/queries/threads';
import type { EngineCore } from './engine-core';
import { noConnection, peerDirectory } from './directory';
import { EngineError } from './errors';
import { parseRelays, type LinkManager } from './links';
import { PEER_ROLE } from './sender';

export class Views {
  constructor(
    private readonly core: EngineCore,
    private readonly links: LinkManager,
  ) {}

  summary(connection: ConnectionRow): ConnectionSummary {
    const db = this.core.db;
    return {
      id: connection.id,
      name: connection.name,
      fingerprint: connection.fingerprint,
      address: connection.address,
      addressFrom: connection.address_from,
      redial: this.links.redial(connection.id),
      status: connection.status,
      policy: { outgoing: connection.outgoing_policy, incoming: connection.incoming_policy },
      trust: connection.trust,
      sandboxRequired: connection.sandbox_required !== 0,
      online: this.links.isOnline(connection.id),
      queue: { used: outgoingWaiting(db, connection.id), limit: connection.queue_limit },
      exposedRoles: exposedRoleNames(db, connection.id),
      peerRoles: peerRoles(db, connection.id),
      lastError: this.links.lastError(connection.id),
      peerPausedAt: connection.peer_paused_at,
      pausedBy: connection.status === 'paused' ? { name: connection.paused_by, at: connection.paused_at } : null,
      revokedBy:
        connection.status === 'revoked' && connection.revoked_by
          ? { name: connection.revoked_by_name, side: connection.revoked_by, at: connection.revoked_at }
          : null,
      createdAt: connection.created_at,
      dhtKey: connection.dht_key,
      path: this.links.path(connection.id),
      relay: relayView(db, this.links.relayOf(connection.id)),
      peerRelays: parseRelays(connection.relays),
    };
  }

  /** Summaries of rows read with their summaries' columns (store/queries/thread-lists.ts): no query here. */
  threadSummaries(rows: ThreadListRow[]): ThreadSummary[] {
    const stopping = this.core.options.runs.stoppingTurns();
    return rows.map((row) => toThreadSummary(row, stopping));
  }

  threadSummary(thread: Pick<ThreadRow, 'id'>): ThreadSummary {
    const row = threadListRow(this.core.db, thread.id);
    if (!row) throw new Error('the agent conversation no longer exists');
    return toThreadSummary(row, this.core.options.runs.stoppingTurns());
  }

  texts(threadRowId: number, limit?: number, before?: number): TextView[] {
    return listTexts(this.core.db, threadRowId, limit, before).map(textView);
  }

  /** What a run in an agent conversation is told about where it is and whom it answers for. */
  describeThread(run: RunRow): AgentContext {
    const db = this.core.db;
    const thread = getThread(db, run.context_id);
    if (!thread) throw new Error('the agent conversation no longer exists');
    const connection = getConnectionRow(db, thread.connection_id)!;
    const peer = `${connection.name}/${thread.peer_role}`;
    const role = { id: thread.local_role_id ?? 0, name: thread.local_role };
    const base = {
      kind: 'thread' as const,
      id: thread.id,
      role,
      peer,
      peerStarted: thread.started_by === 'peer',
    };
    if (thread.started_by === 'peer') {
      // Withdrawn, and nothing the peer wrote since continues it.
      const withdrawn =
        thread.withdrawn_seq !== null && thread.withdrawn_seq >= lastInSeq(db, thread.id)
          ? { by: thread.withdrawn_by!, at: thread.withdrawn_at! }
          : null;
      return {
        ...base,
        summary: `You are ${role.name}, in an agent conversation that ${peer} started.${
          withdrawn
            ? ` Your work here was withdrawn by ${withdrawn.by}: do not answer it or go on with it unless ${connection.name} asks again.`
            : ''
        }`,
        ...(withdrawn ? { withdrawn } : {}),
        root: { kind: 'thread', id: thread.id, summary: `this agent conversation with ${peer}` },
        reporting:
          `Answer ${peer} with \`reply\`; when a turn of yours ends without a reply, your final output is sent to ${peer} as your reply. ` +
          'To ask another peer for help, `send` to PEER/ROLE (then nothing is sent by itself): its answer comes back to a run that answers for this agent conversation.',
      };
    }
    let rootSummary: string;
    let reporting: string;
    if (thread.root_gone) {
      rootSummary = 'a topic that was deleted';
      reporting = 'The topic this answered for was deleted; there is no one to report to.';
    } else if (thread.root_kind === 'conversation') {
      const conversation = getConversationRow(db, thread.root_id);
      const person = conversation ? getPerson(db, conversation.person_id) : undefined;
      rootSummary = `your conversation with ${person?.name ?? 'a person'}`;
      const name = person?.name ?? 'the person';
      reporting = `${peer} is answering for ${rootSummary}. Tell ${name} with \`report\`; continue with ${peer} with \`reply\`. Your final output is not sent: if you report nothing, ${name} sees only that ${peer} answered.`;
    } else if (thread.root_kind === 'task') {
      const task = getTaskRow(db, thread.root_id);
      rootSummary = `task #${thread.root_id} "${task?.title ?? ''}"`;
      reporting = `${peer} is answering for ${rootSummary}. Add it to the task log with \`report\`; continue with ${peer} with \`reply\`. Your final output is not sent: if you report nothing, the task log shows only that ${peer} answered.`;
    } else {
      const rootThread = getThread(db, thread.root_id);
      const rootConnection = rootThread ? getConnectionRow(db, rootThread.connection_id) : undefined;
      const asker = rootThread ? `${rootConnection?.name}/${rootThread.peer_role}` : 'a peer';
      rootSummary = `the agent conversation ${asker} started with you`;
      reporting = `${peer} is answering for ${rootSummary}. Pass it on to ${asker} with \`report\`; continue with ${peer} with \`reply\`. If you report nothing, your final output is passed on to ${asker}.`;
    }
    return {
      ...base,
      summary: `You are ${role.name}, in an agent conversation you started with ${peer}.`,
      root: { kind: thread.root_kind, id: thread.root_id, summary: rootSummary },
      reporting,
    };
  }

  /** Whom roles can ask (DESIGN §11.8). */
  peers(): PeerDirectoryEntry[] {
    return peerDirectory(
      this.core.db,
      (id) => this.links.isOnline(id),
      (id) => this.links.path(id),
      (id) => this.links.relayOf(id),
    );
  }

  /** `parley history`: everything between a role and a peer role, every agent conversation. */
  history(
    role: Pick<Role, 'id' | 'name'>,
    withPeerRole: string,
    /** Which agent conversations (by row id) the caller may list. */
    include: (threadRowId: number) => boolean,
  ): HistoryEntry[] {
    const match = PEER_ROLE.exec(withPeerRole);
    if (!match) throw new EngineError('invalid', `"${withPeerRole}" must look like PEER/ROLE`);
    const [, peerName, peerRole] = match as unknown as [string, string, string];
    const connection = connectionByName(this.core.db, peerName);
    if (!connection) throw noConnection(this.peers(), peerName);
    const rows = historyBetween(this.core.db, connection.id, role.id, peerRole).filter((row) => include(row.thread_id));
    return rows.map((row) => ({
      thread: row.wire_thread,
      direction: row.direction,
      from: row.direction === 'out' ? role.name : `${peerName}/${peerRole}`,
      to: row.direction === 'out' ? `${peerName}/${peerRole}` : role.name,
      seq: row.seq,
      body: row.body,
      state: row.state,
      reason: row.reason,
      at: row.created_at,
    }));
  }
}

function toThreadSummary(row: ThreadListRow, stopping: ReadonlySet<number>): ThreadSummary {
  const lastTurn: TurnSummary | null =
    row.turn_id === null
      ? null
      : {
          id: row.turn_id,
          status: row.turn_status!,
          attempt: row.turn_attempt!,
          startedAt: row.turn_started_at!,
          endedAt: row.turn_ended_at,
          reason: row.turn_reason,
        };
  const run: RunSummary =
    row.run_id === null
      ? { id: null, state: 'idle', pending: 0, session: null, lastTurn: null }
      : {
          id: row.run_id,
          state: runState(lastTurn, row.pending, stopping),
          pending: row.pending,
          session: row.run_session,
          lastTurn,
        };
  return {
    id: row.id,
    threadId: row.wire_id,
    connection: { id: row.connection_id, name: row.connection_name, fingerprint: row.connection_fingerprint },
    localRole: row.local_role,
    peerRole: row.peer_role,
    root: { kind: row.root_kind, id: row.root_id, gone: row.root_gone === 1, title: row.root_title },
    startedBy: row.started_by,
    status: row.status,
    closeReason: row.close_reason,
    run,
    counts: {
      held: row.texts_held,
      queued: row.texts_queued,
      sent: row.texts_sent,
      acked: row.texts_acked,
      failed: row.texts_failed,
      received: row.texts_received,
      handled: row.texts_handled,
    },
    lastText:
      row.last_text_id === null
        ? null
        : {
            id: row.last_text_id,
            direction: row.last_direction!,
            seq: row.last_seq!,
            body: row.last_body!,
            state: row.last_state!,
            reason: row.last_reason,
            failedBy: row.last_failed_by,
            sentByTurnId: row.last_sent_by_turn,
            takenByTurnId: row.last_taken_by_turn,
            createdAt: row.last_created_at!,
          },
    peerTurn:
      row.started_by === 'local' && row.peer_turn !== null
        ? row.peer_relayed_on !== null
          ? {
              state: 'relayed',
              seq: row.peer_turn_seq!,
              at: row.peer_turn_at!,
              waitingOn: JSON.parse(row.peer_relayed_on) as string[],
            }
          : { state: row.peer_turn, seq: row.peer_turn_seq!, at: row.peer_turn_at! }
        : null,
    withdrawn:
      row.withdrawn_seq === null
        ? null
        : { seq: row.withdrawn_seq, by: row.withdrawn_by!, at: row.withdrawn_at!, told: row.withdraw_untold === 0 },
    createdAt: row.created_at,
  };
}

const textView = (row: ListedTextRow): TextView => ({
  id: row.id,
  direction: row.direction,
  seq: row.seq,
  body: row.body,
  state: row.state,
  reason: row.reason,
  failedBy: row.failed_by,
  sentByTurnId: row.sent_by_turn,
  takenByTurnId: row.taken_by_turn,
  deniedBy: row.denied_by,
  approvedBy: row.approved_by === null ? null : { name: row.approved_by, always: row.approved_by_rule === 1 },
  createdAt: row.created_at,
});

/** The relay a link goes through, with the address it was added with here, if it is one of ours. */
function relayView(db: EngineCore['db'], key: string | null): ConnectionSummary['relay'] {
  if (key === null) return null;
  return { key, address: relayByKey(db, key)?.address ?? null };
}
