// Summaries as the API sends them, for the renderer's table tests: one agent conversation
// of alice's assistant with bob/researcher, idle and open, that a test patches.
import type { RunSummary, ThreadSummary } from '../../shared/domain';

export const idleRun: RunSummary = { id: 1, state: 'idle', pending: 0, session: null, lastTurn: null };

export function threadSummary(patch: Partial<ThreadSummary> = {}): ThreadSummary {
  return {
    id: 1,
    threadId: 'wire-1',
    connection: { id: 7, name: 'bob', fingerprint: 'f'.repeat(64) },
    localRole: 'assistant',
    peerRole: 'researcher',
    root: { kind: 'conversation', id: 1, gone: false, title: null },
    startedBy: 'local',
    status: 'open',
    closeReason: null,
    run: idleRun,
    counts: { held: 0, queued: 0, sent: 0, acked: 0, failed: 0, received: 0, handled: 0 },
    lastText: null,
    peerTurn: null,
    createdAt: '2026-12-01T10:00:00.000Z',
    ...patch,
  };
}
