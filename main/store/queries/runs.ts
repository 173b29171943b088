import type { ContextKind, ContextRef, RunState, RunSummary, TurnStatus, TurnSummary } from '../../../shared/domain';
import type { Db } from '../database';
import { all, get, insert, run } from '../sql';

export interface RunRow {
  id: number;
  role_id: number;
  context_kind: ContextKind;
  context_id: number;
  session: string | null;
}

export interface TurnRow {
  id: number;
  run_id: number;
  status: TurnStatus;
  attempt: number;
  reason: string | null;
  output: string | null;
  pid: number | null;
  proc_start: string | null;
  started_at: string;
  ended_at: string | null;
}

export type InputKind = 'message' | 'comment' | 'text' | 'notice';
export interface InputRow {
  id: number;
  run_id: number;
  kind: InputKind;
  body: string;
  author_name: string;
  wakes: number;
  state: 'pending' | 'taken' | 'handled';
  turn_id: number | null;
  created_at: string;
  /** 1: a notice its turn answers for (a relay's ask ended unanswered): the output goes back as the reply. */
  answers: number;
}

export const toTurnSummary = (row: TurnRow): TurnSummary => ({
  id: row.id,
  status: row.status,
  attempt: row.attempt,
  startedAt: row.started_at,
  endedAt: row.ended_at,
  reason: row.reason,
});

export function getRun(db: Db, id: number): RunRow | undefined {
  return get<RunRow>(db, 'SELECT id, role_id, context_kind, context_id, session FROM runs WHERE id = ?', id);
}

export function findRun(db: Db, context: ContextRef): RunRow | undefined {
  return get<RunRow>(
    db,
    'SELECT id, role_id, context_kind, context_id, session FROM runs WHERE context_kind = ? AND context_id = ?',
    context.kind,
    context.id,
  );
}

export function ensureRun(db: Db, context: ContextRef, roleId: number): RunRow {
  const existing = findRun(db, context);
  if (existing) return existing;
  const id = insert(
    db,
    'INSERT INTO runs (role_id, context_kind, context_id) VALUES (?, ?, ?)',
    roleId,
    context.kind,
    context.id,
  );
  return getRun(db, id)!;
}

export function setRunSession(db: Db, runId: number, session: string | null): void {
  run(db, 'UPDATE runs SET session = ? WHERE id = ?', session, runId);
}

export function insertInput(
  db: Db,
  runId: number,
  kind: InputKind,
  body: string,
  authorName: string,
  wakes: boolean,
  answers = false,
): number {
  return insert(
    db,
    'INSERT INTO inputs (run_id, kind, body, author_name, wakes, answers) VALUES (?, ?, ?, ?, ?, ?)',
    runId,
    kind,
    body,
    authorName,
    wakes ? 1 : 0,
    answers ? 1 : 0,
  );
}

/**
 * An agent conversation's incoming texts wait where they were committed, as `received`
 * texts, rather than being copied into inputs on arrival: the copy cost the receiver a
 * second row and a page of the pending index per text. A text
 * becomes an input of its thread's run when a turn takes it (or a stop drops it); until
 * then "received and no input row" is what counts as waiting — and only once no earlier
 * text of its agent conversation is held for a person: order per agent conversation holds
 * through approvals (approved out of order, a text waits for those before it).
 */
export const WAITING_TEXT = `texts.state = 'received' AND NOT EXISTS (SELECT 1 FROM inputs WHERE inputs.text_id = texts.id)
  AND NOT EXISTS (SELECT 1 FROM texts AS earlier
    WHERE earlier.thread_id = texts.thread_id AND earlier.seq < texts.seq
      AND earlier.state = 'held' AND earlier.direction = 'in')`;

/**
 * Runs with work that wakes them and no turn in progress, oldest request first. An agent
 * conversation on a paused or revoked connection starts nothing: paused means nothing moves.
 */
export function runnableRuns(db: Db, limit: number): number[] {
  return all<{ run_id: number }>(
    db,
    `SELECT run_id FROM (
       SELECT run_id, min(created_at) AS at, min(id) AS first FROM inputs
       WHERE state = 'pending' AND wakes = 1 GROUP BY run_id
       UNION ALL
       SELECT runs.id, min(texts.created_at), min(texts.id) FROM texts
       JOIN runs ON runs.context_kind = 'thread' AND runs.context_id = texts.thread_id
       WHERE ${WAITING_TEXT} GROUP BY texts.thread_id
     )
     WHERE run_id NOT IN (SELECT run_id FROM turns WHERE status = 'running')
       AND run_id NOT IN (
         SELECT runs.id FROM runs
         JOIN threads ON runs.context_kind = 'thread' AND threads.id = runs.context_id
         JOIN connections ON connections.id = threads.connection_id
         WHERE connections.status != 'active')
     GROUP BY run_id ORDER BY min(at), min(first) LIMIT ?`,
    limit,
  ).map((row) => row.run_id);
}

/**
 * Gives the texts waiting in an agent conversation's run their input rows (pending), in
 * seq order. `wakes: false` holds them: they go to the next turn, but do not start one.
 */
export function adoptWaitingTexts(db: Db, runRow: RunRow, wakes = true): number {
  if (runRow.context_kind !== 'thread') return 0;
  return run(
    db,
    `INSERT INTO inputs (run_id, kind, body, author_name, wakes, text_id, created_at)
     SELECT ?, 'text', texts.body, connections.name || '/' || threads.peer_role, ?, texts.id, texts.created_at
     FROM texts
     JOIN threads ON threads.id = texts.thread_id
     JOIN connections ON connections.id = threads.connection_id
     WHERE texts.thread_id = ? AND texts.direction = 'in' AND ${WAITING_TEXT}
     ORDER BY texts.seq`,
    runRow.id,
    wakes ? 1 : 0,
    runRow.context_id,
  ).changes;
}

/** The run's waiting work, oldest first (texts waiting in an agent conversation adopted first). */
export function pendingInputs(db: Db, runRow: RunRow): InputRow[] {
  adoptWaitingTexts(db, runRow);
  return all<InputRow>(db, "SELECT * FROM inputs WHERE run_id = ? AND state = 'pending' ORDER BY id", runRow.id);
}

export function turnInputs(db: Db, turnId: number): InputRow[] {
  return all<InputRow>(db, 'SELECT * FROM inputs WHERE turn_id = ? ORDER BY id', turnId);
}

export function insertTurn(db: Db, runId: number, attempt: number, tokenHash: string): number {
  return insert(
    db,
    "INSERT INTO turns (run_id, status, attempt, token_hash) VALUES (?, 'running', ?, ?)",
    runId,
    attempt,
    tokenHash,
  );
}

export function takeInputs(db: Db, turnId: number, inputIds: number[]): void {
  for (const id of inputIds) run(db, "UPDATE inputs SET state = 'taken', turn_id = ? WHERE id = ?", turnId, id);
}

export function setTurnProcess(db: Db, turnId: number, pid: number, procStart: string | null): void {
  run(db, 'UPDATE turns SET pid = ?, proc_start = ? WHERE id = ?', pid, procStart, turnId);
}

/** Ends a turn: its token stops working and its inputs count as handled. */
export function endTurn(
  db: Db,
  turnId: number,
  status: Exclude<TurnStatus, 'running'>,
  output: string | null,
  reason: string | null,
): void {
  run(
    db,
    "UPDATE turns SET status = ?, output = ?, reason = ?, token_hash = NULL, ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
    status,
    output,
    reason,
    turnId,
  );
  handleTurnInputs(db, turnId);
}

/**
 * A stop, committed before the agent gets its first signal: the turn stays `running`
 * while its process ends, but its token stops working and what it was given counts as
 * handled, so a crash during the grace never re-runs it. `reason` says who stopped it;
 * a running turn has a reason only once a stop was asked for (see `isStopping`).
 */
export function markTurnStopping(db: Db, turnId: number, reason: string): void {
  run(db, "UPDATE turns SET reason = ?, token_hash = NULL WHERE id = ? AND status = 'running'", reason, turnId);
  handleTurnInputs(db, turnId);
}

/** The process of a stopped turn is gone: the turn ends as stopped. */
export function finishStoppedTurn(db: Db, turnId: number): void {
  run(
    db,
    "UPDATE turns SET status = 'stopped', token_hash = NULL, ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
    turnId,
  );
}

/** A running turn whose stop is committed and whose process may still be ending. */
export const isStopping = (turn: Pick<TurnRow, 'status' | 'reason'>): boolean =>
  turn.status === 'running' && turn.reason !== null;

/** Whether the run's last turn was stopped (or is being stopped): notices for it wait. */
export function lastTurnStopped(db: Db, runId: number): boolean {
  const last = get<TurnRow>(db, 'SELECT * FROM turns WHERE run_id = ? ORDER BY id DESC LIMIT 1', runId);
  return last !== undefined && (last.status === 'stopped' || isStopping(last));
}

/**
 * Holds the run's waiting work: texts waiting in its agent conversation get their input
 * rows and every pending input stops waking the run. It all goes to the next turn, which
 * only new work starts. Returns how many were waking until now.
 */
export function holdWaitingWork(db: Db, runRow: RunRow): number {
  const adopted = adoptWaitingTexts(db, runRow, false);
  return (
    adopted +
    run(db, "UPDATE inputs SET wakes = 0 WHERE run_id = ? AND state = 'pending' AND wakes = 1", runRow.id).changes
  );
}

/**
 * Why an interrupted turn of this run must not run again, or null: an agent
 * conversation on a connection that is no longer active, or whose topic was deleted.
 */
export function heldAfterCrash(db: Db, runRow: RunRow): string | null {
  if (runRow.context_kind !== 'thread') return null;
  const row = get<{ status: string; root_gone: number }>(
    db,
    `SELECT connections.status, threads.root_gone FROM threads
     JOIN connections ON connections.id = threads.connection_id WHERE threads.id = ?`,
    runRow.context_id,
  );
  if (!row) return null;
  if (row.status !== 'active') return `the connection is ${row.status}`;
  if (row.root_gone) return 'the topic it answered for was deleted';
  return null;
}

/** Ends a turn cut off by a crash without running it again; its inputs count as handled. */
export function dropInterrupted(db: Db, turnId: number, reason: string): void {
  run(
    db,
    "UPDATE turns SET status = 'interrupted', reason = ?, token_hash = NULL, ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
    reason,
    turnId,
  );
  handleTurnInputs(db, turnId);
}

/** What a turn was given counts as handled: its inputs, and the texts they carry. */
function handleTurnInputs(db: Db, turnId: number): void {
  run(db, "UPDATE inputs SET state = 'handled' WHERE turn_id = ?", turnId);
  run(
    db,
    "UPDATE texts SET state = 'handled', updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id IN (SELECT text_id FROM inputs WHERE turn_id = ? AND text_id IS NOT NULL)",
    turnId,
  );
}

export function turnStatus(db: Db, turnId: number): TurnStatus | undefined {
  return get<{ status: TurnStatus }>(db, 'SELECT status FROM turns WHERE id = ?', turnId)?.status;
}

/** The newest turn of a run, if it had one. */
export function lastTurnOfRun(db: Db, runId: number): { id: number; status: TurnStatus } | undefined {
  return get<{ id: number; status: TurnStatus }>(
    db,
    'SELECT id, status FROM turns WHERE run_id = ? ORDER BY id DESC LIMIT 1',
    runId,
  );
}

/** Whether a turn may still send: running, and not being stopped (a stop takes its token at once). */
export function turnMaySend(db: Db, turnId: number): boolean {
  return (
    get<{ ok: number }>(
      db,
      "SELECT 1 AS ok FROM turns WHERE id = ? AND status = 'running' AND token_hash IS NOT NULL",
      turnId,
    ) !== undefined
  );
}

/** Adds a note to the end of a finished turn's output (its run log entry). */
export function appendTurnOutput(db: Db, turnId: number, note: string): void {
  run(db, "UPDATE turns SET output = coalesce(output, '') || ? WHERE id = ?", note, turnId);
}

/** Marks a turn cut off by a crash and puts its inputs back for one re-run. */
export function requeueInterrupted(db: Db, turnId: number, reason: string): void {
  run(db, "UPDATE inputs SET state = 'pending' WHERE turn_id = ?", turnId);
  run(
    db,
    "UPDATE turns SET status = 'interrupted', reason = ?, token_hash = NULL, ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
    reason,
    turnId,
  );
}

export function runningTurns(db: Db): TurnRow[] {
  return all<TurnRow>(db, "SELECT * FROM turns WHERE status = 'running' ORDER BY id");
}

export function recentTurns(db: Db, runId: number, limit = 20): TurnSummary[] {
  return all<TurnRow>(db, 'SELECT * FROM turns WHERE run_id = ? ORDER BY id DESC LIMIT ?', runId, limit)
    .reverse()
    .map(toTurnSummary);
}

export interface TokenTurn {
  turn: TurnRow;
  run: RunRow;
}

export function turnByTokenHash(db: Db, tokenHash: string): TokenTurn | undefined {
  const turn = get<TurnRow>(db, "SELECT * FROM turns WHERE token_hash = ? AND status = 'running'", tokenHash);
  if (!turn) return undefined;
  const owner = getRun(db, turn.run_id);
  return owner && { turn, run: owner };
}

export function runSummary(
  db: Db,
  context: ContextRef,
  stopping: ReadonlySet<number> = new Set(),
  retrying: ReadonlyMap<number, string> = new Map(),
): RunSummary {
  const row = findRun(db, context);
  if (!row) return { id: null, state: 'idle', pending: 0, session: null, lastTurn: null };
  const last = get<TurnRow>(db, 'SELECT * FROM turns WHERE run_id = ? ORDER BY id DESC LIMIT 1', row.id);
  let pending = get<{ n: number }>(
    db,
    "SELECT count(*) AS n FROM inputs WHERE run_id = ? AND state = 'pending' AND wakes = 1",
    row.id,
  )!.n;
  if (row.context_kind === 'thread')
    pending += get<{ n: number }>(
      db,
      `SELECT count(*) AS n FROM texts WHERE thread_id = ? AND direction = 'in' AND ${WAITING_TEXT}`,
      row.context_id,
    )!.n;
  return {
    id: row.id,
    state: runState(last ?? null, pending, stopping),
    pending,
    session: row.session,
    lastTurn: last ? toTurnSummary(last) : null,
    ...(last?.status === 'running' && retrying.has(last.id) ? { retrying: retrying.get(last.id)! } : {}),
  };
}

/** Where a run is, from its last turn and how much waits for it. */
export function runState(
  last: Pick<TurnRow, 'id' | 'status' | 'reason'> | null,
  pending: number,
  stopping: ReadonlySet<number>,
): RunState {
  if (last?.status === 'running') return stopping.has(last.id) || isStopping(last) ? 'stopping' : 'running';
  return pending > 0 ? 'queued' : 'idle';
}

/** The final outputs of a run's turns: for agent conversations, the run log people read. */
export function runLog(db: Db, runId: number, limit = 200): Array<{ turnId: number; output: string; at: string }> {
  return all<{ id: number; output: string; ended_at: string }>(
    db,
    "SELECT id, output, ended_at FROM turns WHERE run_id = ? AND output IS NOT NULL AND output != '' ORDER BY id DESC LIMIT ?",
    runId,
    limit,
  )
    .reverse()
    .map((row) => ({ turnId: row.id, output: row.output, at: row.ended_at }));
}
