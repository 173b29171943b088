// A wire peer driver: one Parley installation in its own process and data folder,
// listening for peers on loopback, driven over stdin/stdout with one JSON object per
// line. The wire benchmark runs two of these; fault tests reuse them (kill -9 either
// side, start it again on the same data folder, and check what arrived).
//
//   node dist/testing/wire-peer.js --data DIR --name NAME [--host 127.0.0.1] [--port N]
//        [--start-turns] [--budget N] [--reconnect-min MS] [--reconnect-max MS] [--stop-grace MS]
//        [--revision N]
//
// On start it prints {"event":"ready","name","address","fingerprint","pid","restarted"}.
// The port it listens on is kept in DIR/wire-peer.json, so a restart on the same data
// folder listens where the peer will redial. Agents never run unless --start-turns is
// given: inputs are committed and wait (the receiving role's agent is disabled).
// --revision N speaks at most revision N of protocol 2, dialling and listening, as a
// peer of an older release would (revision 1: `turn` states, no acknowledgements, no
// `relayed`, `withdraw`, `status` or `declined`).
//
// Requests are {"id"?: any, "cmd": string, ...params}; every request gets exactly one
// reply {"id", "ok": true, ...result} or {"id", "ok": false, "error"}. Requests run
// concurrently (a long `send` does not block `progress`), so give them ids.
//
//   ping                                          → {pong: true}
//   call     {method, params}                     → {result}  one app API call as the owner
//   invite   {roles: string[]}                    → {code}            (roles made if missing)
//   accept   {code, roles?: string[]}             → {connection}      (once online and the peer's roles are known)
//   waitOnline {peer?, timeoutMs?, peerRoles?}    → {connection}  (peerRoles: also wait for the peer's roles)
//   limit    {limit, peer?}                       → {limit}           (the connection's queue limit)
//   prepare  {threads, to: "PEER/ROLE", role?: "source"}
//            → {threads}  N tasks of a local role (command adapter, never started), each a
//              distinct root, so each gets its own agent conversation; idempotent on restart.
//   send     {perThread?, durationMs?, threads?, window?: 1, concurrency?, bodyBytes?: 64}
//            → stats. Each of the first `threads` prepared roots sends through
//              engine.sendAs (the path `parley send` takes), text n of root i has body
//              "i:n|" padded to bodyBytes. `window` texts per root may be unacked at once
//              (1 = stop-and-wait); `concurrency` bounds roots with a text in flight.
//              `perThread` is a total per root counted from what is already committed, so a
//              send repeated after a restart continues where the killed one stopped.
//              Stats: {sent, acked, failed, errors, elapsedMs, textsPerSec, p50Ms, p90Ms,
//              p99Ms, maxMs, cpuMs, minorFaults, gcMs}; latency is sendAs called → the text's row committed
//              as acked (observed through the installation's change events).
//   progress                                      → {running, sent, acked, failed}
//   settle   {timeoutMs?}                         → waits until no outgoing text is queued or sent
//   sent                                          → {threads: [{index, thread, committed, queued, sent, acked, failed, lastSeq}]}
//   received {full?: boolean}                     → {threads: [{thread, from, to, count, lastSeq,
//              inOrder, duplicates, bodies?: [[i, n, seq]...]}]} per peer-started agent
//              conversation, texts in commit order; `inOrder`: seqs are 1..count and each
//              body's n equals the seq.
//   drain                                         → {handled}  marks received texts handled,
//              as an agent would (keeps the receiver under its queue limit between runs)
//   quiet                                         → {ms}  finishes what waits in the background
//              (the search index's catch-up, as a search does first), so a baseline measured
//              next does not share the machine with it
//   stats                                         → {texts: {...}, cpuMs, rssMb}
//   cpu                                           → {cpuMs}  this process's CPU so far, and
//              nothing else (stats counts every text first: not inside a measurement)
//   profile  {action: "start"}                    → starts the V8 CPU profiler in this process
//   profile  {action: "stop", file}               → writes the .cpuprofile (open it in Chrome DevTools)
//   exit                                          → closes the installation and exits 0
//
// From a test or benchmark, `startWirePeer()` below spawns one and talks to it. A crash
// test: `kill()` one side (SIGKILL), `startWirePeer()` again with the same dataDir and
// name (`ready.restarted` is true, same port), `prepare` again with the same threads and
// `to` (it finds its tasks by title), `send {perThread}` again to finish, `settle`, then
// compare the sender's `sent` with the receiver's `received {full: true}`. Needs
// `npm run build` (it runs dist/testing/wire-peer.js).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import readline from 'node:readline';
import { projectRoot } from '../main/paths';
import { gcMs } from './gc-time';
import { openInstallation, type Installation } from '../main/installation';
import { log } from '../main/log';
import { transaction } from '../main/store/database';
import { connectionByName, listConnectionRows, peerRoles, type ConnectionRow } from '../main/store/queries/connections';
import { getRoleByName } from '../main/store/queries/roles';
import { ensureRun, type RunRow } from '../main/store/queries/runs';

interface Args {
  data: string;
  name: string;
  host: string;
  port: number | null;
  startTurns: boolean;
  budget: number;
  reconnect: { minMs: number; maxMs: number };
  stopGraceMs: number | undefined;
  /** Listen, but give invitations and peers no address: only the DHT key (the DHT carrier's bench). */
  noAddress: boolean;
  /** The newest revision of protocol 2 to speak; null: the newest there is. */
  revision: number | null;
}

function parseArgs(argv: string[]): Args {
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const data = value('--data');
  const name = value('--name');
  if (!data || !name)
    throw new Error('usage: wire-peer --data DIR --name NAME [--port N] [--start-turns] [--budget N]');
  return {
    data: path.resolve(data),
    name,
    host: value('--host') ?? '127.0.0.1',
    port: value('--port') === undefined ? null : Number(value('--port')),
    startTurns: argv.includes('--start-turns'),
    budget: Number(value('--budget') ?? 1e12),
    reconnect: { minMs: Number(value('--reconnect-min') ?? 50), maxMs: Number(value('--reconnect-max') ?? 500) },
    stopGraceMs: value('--stop-grace') === undefined ? undefined : Number(value('--stop-grace')),
    noAddress: argv.includes('--no-address'),
    revision: value('--revision') === undefined ? null : Number(value('--revision')),
  };
}

type Params = Record<string, unknown>;

interface Root {
  index: number;
  run: RunRow;
  /** The agent conversation's row id here, once the first text made it. */
  threadRowId: number | null;
}

interface Pending {
  seq: number;
  /** With the time the outcome was committed (the change event's time). */
  settled: (state: 'acked' | 'failed', at: number) => void;
}

const now = () => performance.now();
/** This process's CPU so far, user and system, in ms. */
const cpuMs = () => {
  const cpu = process.cpuUsage();
  return Math.round((cpu.user + cpu.system) / 1000);
};

class Driver {
  private roots: Root[] = [];
  private role: { id: number; name: string } | null = null;
  private to = '';
  /** Per agent conversation row id, its texts waiting for their ack, oldest first. */
  private readonly waiting = new Map<number, Pending[]>();
  private progress = { running: false, sent: 0, acked: 0, failed: 0 };
  private profiler: Session | null = null;

  constructor(private readonly inst: Installation) {
    // How many of an agent conversation's outgoing texts are acked or failed, off its own
    // row (the counts triggers keep): a small, hot table, where reading each head text
    // would search the texts' index far from the pages the sends left in the cache.
    const settledCounts = inst.db
      .prepare('SELECT texts_acked, texts_failed FROM threads WHERE id = ?')
      .raw(true) as unknown as { get(id: number): [number, number] | undefined };
    const headState = inst.db
      .prepare("SELECT state FROM texts WHERE thread_id = ? AND direction = 'out' AND seq = ?")
      .pluck();
    this.readSettled = inst.db.transaction((ids: number[]) => ids.map((id) => settledCounts.get(id)));
    this.stateOf = (threadRowId, seq) => headState.get(threadRowId, seq) as string | undefined;
    // An ack (or reject) commits in a group commit whose after-actions emit 'thread'
    // changed: the moment that event fires is the moment the ack is durable here.
    inst.events.observe((event) => {
      if (event.type !== 'changed' || event.kind !== 'thread' || !this.waiting.get(event.id)?.length) return;
      this.toCheck.set(event.id, now());
      if (this.toCheck.size === 1) queueMicrotask(() => this.checkChanged());
    });
  }

  private readonly toCheck = new Map<number, number>();
  private readonly readSettled: (ids: number[]) => Array<[number, number] | undefined>;
  private readonly stateOf: (threadRowId: number, seq: number) => string | undefined;

  /**
   * Settles the waiting texts of the agent conversations that changed. Outgoing texts
   * are numbered from 1 and leave in order, each after the one before it is acked or
   * failed, so text `seq` is settled once `seq` of them are. While none of an agent
   * conversation's texts is failed, every settled one is acked; otherwise each is read.
   */
  private checkChanged(): void {
    const ids = [...this.toCheck.keys()];
    const times = [...this.toCheck.values()];
    this.toCheck.clear();
    const counts = this.readSettled(ids);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      const [acked, failed] = counts[i] ?? [0, 0];
      const queue = this.waiting.get(id)!;
      while (queue.length > 0 && queue[0]!.seq <= acked + failed) {
        const head = queue.shift()!;
        const failedNow = failed > 0 && this.stateOf(id, head.seq) === 'failed';
        head.settled(failedNow ? 'failed' : 'acked', times[i]!);
      }
    }
  }

  /** Calls `settled` once the text's ack (or failure) is committed here. */
  private whenSettled(threadRowId: number, seq: number, settled: Pending['settled']): void {
    // A thread's queue stays once made, empty or not: no map entry made and dropped per text.
    const queue = this.waiting.get(threadRowId);
    if (queue) queue.push({ seq, settled });
    else this.waiting.set(threadRowId, [{ seq, settled }]);
  }

  private owner() {
    return { person: this.inst.owner() };
  }

  private async ensureRoles(names: string[]): Promise<void> {
    for (const name of names)
      if (!getRoleByName(this.inst.db, name))
        await this.inst.call(this.owner(), 'roles.create', { name, agent: { adapter: 'command', command: ['true'] } });
  }

  private connection(peer?: unknown): ConnectionRow {
    if (typeof peer === 'string') {
      const row = connectionByName(this.inst.db, peer);
      if (!row) throw new Error(`no connection named ${peer}`);
      return row;
    }
    const rows = listConnectionRows(this.inst.db);
    if (rows.length !== 1) throw new Error(`expected one connection, have ${rows.length}; name the peer`);
    return rows[0]!;
  }

  /** Until the connection is up (and, with `roles`, the peer's roles are known). */
  private async waitOnline(peer: unknown, timeoutMs: number, roles: boolean): Promise<ConnectionRow> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const rows = typeof peer === 'string' ? [connectionByName(this.inst.db, peer)] : listConnectionRows(this.inst.db);
      const row = rows.find(
        (c) => c && this.inst.engine.isOnline(c.id) && (!roles || peerRoles(this.inst.db, c.id).length > 0),
      );
      if (row) return row;
      if (Date.now() > deadline) throw new Error('timed out waiting for the peer to be online');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, 100);
        const off = this.inst.events.observe(done);
        function done() {
          clearTimeout(timer);
          off();
          resolve();
        }
      });
    }
  }

  async handle(cmd: string, p: Params): Promise<Record<string, unknown>> {
    const db = this.inst.db;
    switch (cmd) {
      case 'ping':
        return { pong: true };
      case 'call':
        return { result: await this.inst.call(this.owner(), String(p.method), p.params ?? {}) };
      case 'invite': {
        const roles = (p.roles as string[] | undefined) ?? [];
        await this.ensureRoles(roles);
        const { code } = (await this.inst.call(this.owner(), 'connections.invite', { roles })) as { code: string };
        return { code };
      }
      case 'accept': {
        const roles = (p.roles as string[] | undefined) ?? [];
        await this.ensureRoles(roles);
        const summary = (await this.inst.call(this.owner(), 'connections.accept', { code: p.code, roles })) as {
          name: string;
        };
        const row = await this.waitOnline(summary.name, Number(p.timeoutMs ?? 15_000), p.peerRoles !== false);
        return { connection: row.name };
      }
      case 'waitOnline': {
        const row = await this.waitOnline(p.peer, Number(p.timeoutMs ?? 15_000), p.peerRoles === true);
        return { connection: row.name };
      }
      case 'limit': {
        const row = this.connection(p.peer);
        await this.inst.call(this.owner(), 'connections.setQueueLimit', { id: row.id, limit: Number(p.limit) });
        return { limit: Number(p.limit) };
      }
      case 'prepare':
        return this.prepare(Number(p.threads), String(p.to), typeof p.role === 'string' ? p.role : 'source');
      case 'send':
        return this.send(p);
      case 'progress':
        return { ...this.progress };
      case 'settle': {
        const deadline = Date.now() + Number(p.timeoutMs ?? 30_000);
        const waitingOut = db
          .prepare("SELECT count(*) FROM texts WHERE direction = 'out' AND state IN ('queued', 'sent')")
          .pluck();
        for (;;) {
          const n = waitingOut.get() as number;
          if (n === 0) return { waiting: 0 };
          if (Date.now() > deadline) throw new Error(`${n} outgoing texts still unacked`);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      case 'sent': {
        const rows = db
          .prepare(
            `SELECT threads.root_id AS task, threads.wire_id AS thread, count(texts.id) AS committed, max(texts.seq) AS lastSeq,
                    sum(texts.state = 'queued') AS queued, sum(texts.state = 'sent') AS sent,
                    sum(texts.state = 'acked') AS acked, sum(texts.state = 'failed') AS failed
             FROM threads LEFT JOIN texts ON texts.thread_id = threads.id AND texts.direction = 'out'
             WHERE threads.started_by = 'local' GROUP BY threads.id ORDER BY threads.id`,
          )
          .all() as Array<Record<string, unknown> & { task: number }>;
        const indexOfTask = new Map(this.roots.map((root) => [root.run.context_id, root.index]));
        return { threads: rows.map(({ task, ...row }) => ({ index: indexOfTask.get(task) ?? null, ...row })) };
      }
      case 'received':
        return this.received(p.full === true);
      case 'drain': {
        const handled = transaction(db, () => {
          db.prepare("UPDATE inputs SET state = 'handled' WHERE state = 'pending' AND text_id IS NOT NULL").run();
          return db.prepare("UPDATE texts SET state = 'handled' WHERE direction = 'in' AND state = 'received'").run()
            .changes;
        });
        return { handled };
      }
      case 'quiet': {
        const started = now();
        await this.inst.call(this.owner(), 'search', { query: 'quiet' });
        return { ms: Math.round(now() - started) };
      }
      case 'cpu':
        return { cpuMs: cpuMs() };
      case 'stats': {
        const texts = db.prepare('SELECT direction, state, count(*) AS n FROM texts GROUP BY direction, state').all();
        return {
          texts,
          cpuMs: cpuMs(),
          rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
        };
      }
      case 'profile': {
        if (p.action === 'start') {
          this.profiler ??= new Session();
          this.profiler.connect();
          await this.profiler.post('Profiler.enable');
          await this.profiler.post('Profiler.setSamplingInterval', { interval: Number(p.intervalUs ?? 200) });
          await this.profiler.post('Profiler.start');
          // Where the garbage comes from, beside where the time goes: sampled, so cheap.
          await this.profiler.post('HeapProfiler.enable');
          await this.profiler.post('HeapProfiler.startSampling', {
            samplingInterval: 8192,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          });
          return { profiling: true };
        }
        if (!this.profiler) throw new Error('the profiler was not started');
        const { profile } = await this.profiler.post('Profiler.stop');
        const { profile: heap } = await this.profiler.post('HeapProfiler.stopSampling');
        this.profiler.disconnect();
        this.profiler = null;
        writeFileSync(String(p.file), JSON.stringify(profile));
        writeFileSync(String(p.file).replace(/\.cpuprofile$/, '.heapprofile'), JSON.stringify(heap));
        return { file: String(p.file) };
      }
      default:
        throw new Error(`unknown command ${cmd}`);
    }
  }

  private async prepare(threads: number, to: string, roleName: string): Promise<Record<string, unknown>> {
    const db = this.inst.db;
    await this.ensureRoles([roleName]);
    const role = getRoleByName(db, roleName)!;
    this.role = { id: role.id, name: role.name };
    this.to = to;
    const existing = db.prepare('SELECT id FROM tasks WHERE role_id = ? AND title = ?').pluck();
    const roots: Root[] = [];
    for (let index = 0; index < threads; index++) {
      const title = `wire ${index}`;
      let taskId = existing.get(role.id, title) as number | undefined;
      if (taskId === undefined) {
        const task = (await this.inst.call(this.owner(), 'tasks.create', { roleId: role.id, title })) as { id: number };
        taskId = task.id;
      }
      const run = transaction(db, () => ensureRun(db, { kind: 'task', id: taskId }, role.id));
      const threadRowId = db
        .prepare(
          "SELECT id FROM threads WHERE root_kind = 'task' AND root_id = ? AND started_by = 'local' AND status = 'open'",
        )
        .pluck()
        .get(taskId) as number | undefined;
      roots.push({ index, run, threadRowId: threadRowId ?? null });
    }
    this.roots = roots;
    return { threads: roots.length };
  }

  private async send(p: Params): Promise<Record<string, unknown>> {
    if (!this.role) throw new Error('prepare first');
    if (this.progress.running) throw new Error('a send is already running');
    const db = this.inst.db;
    const roots = this.roots.slice(0, p.threads === undefined ? this.roots.length : Number(p.threads));
    const perThread = p.perThread === undefined ? Infinity : Number(p.perThread);
    const durationMs = p.durationMs === undefined ? Infinity : Number(p.durationMs);
    if (!Number.isFinite(perThread) && !Number.isFinite(durationMs)) throw new Error('give perThread or durationMs');
    const window = Math.max(1, Number(p.window ?? 1));
    const bodyBytes = Number(p.bodyBytes ?? 64);
    let slots = Math.max(1, Number(p.concurrency ?? roots.length));
    const slotWaiters: Array<() => void> = [];
    const acquire = () =>
      slots > 0 ? (slots--, Promise.resolve()) : new Promise<void>((resolve) => slotWaiters.push(resolve));
    const release = () => {
      const next = slotWaiters.shift();
      if (next) next();
      else slots++;
    };
    // Seqs run from 1 without a gap: the last is how many were committed, off the index.
    const committedOut = db
      .prepare("SELECT coalesce(max(seq), 0) FROM texts WHERE thread_id = ? AND direction = 'out'")
      .pluck();
    const latencies: number[] = [];
    const errors: Record<string, number> = {};
    const stats = { sent: 0, acked: 0, failed: 0 };
    this.progress = { running: true, sent: 0, acked: 0, failed: 0 };
    const cpu0 = process.cpuUsage();
    const faults0 = process.resourceUsage().minorPageFault;
    const gc0 = gcMs();
    const t0 = now();
    const stopAt = t0 + durationMs;
    let lastAck = t0;
    let refusals = 0;
    const role = this.role;

    type Outcome = 'acked' | 'failed' | 'error';
    /** Sends text n of the root; `done` hears how it ended once that is committed. Callbacks: this process's CPU is measured. */
    const sendOne = (root: Root, n: number, done: (outcome: Outcome) => void): void => {
      const body = `${root.index}:${n}|`.padEnd(bodyBytes, 'x');
      const start = now();
      this.inst.engine.sendAs(root.run, role, this.to, body).then(
        (result) => {
          stats.sent++;
          this.progress.sent++;
          root.threadRowId = result.threadRowId;
          this.whenSettled(result.threadRowId, result.seq, (state, at) => {
            if (state === 'acked') {
              latencies.push(at - start);
              if (at > lastAck) lastAck = at;
              stats.acked++;
              this.progress.acked++;
            } else {
              stats.failed++;
              this.progress.failed++;
            }
            done(state);
          });
        },
        (error: unknown) => {
          const code = (error as { code?: string }).code ?? (error as Error).message;
          errors[code] = (errors[code] ?? 0) + 1;
          done('error');
        },
      );
    };
    const sent = (root: Root, n: number) => new Promise<Outcome>((resolve) => sendOne(root, n, resolve));

    const limited = slots < roots.length;
    const rootLoop = async (root: Root): Promise<void> => {
      let n = root.threadRowId === null ? 0 : (committedOut.get(root.threadRowId) as number);
      if (window === 1 && !limited) {
        // Stop-and-wait: each text's outcome sends the next, with no promise per text.
        await new Promise<void>((resolve, reject) => {
          const next = (): void => {
            if (!(n < perThread && now() < stopAt)) return resolve();
            sendOne(root, n + 1, (outcome) => {
              if (outcome !== 'error') {
                n++;
                next();
              } else if (++refusals > 10_000) reject(new Error(`sends keep failing: ${JSON.stringify(errors)}`));
              // Refused (a full queue, a paused connection): try the same text again shortly.
              else setTimeout(next, 10);
            });
          };
          next();
        });
        return;
      }
      if (window === 1) {
        while (n < perThread && now() < stopAt) {
          await acquire();
          const outcome = await sent(root, n + 1);
          release();
          if (outcome !== 'error') n++;
          else {
            if (++refusals > 10_000) throw new Error(`sends keep failing: ${JSON.stringify(errors)}`);
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
        }
        return;
      }
      const inFlight = new Set<Promise<unknown>>();
      while (n < perThread && now() < stopAt) {
        if (inFlight.size >= window) {
          await Promise.race(inFlight);
          continue;
        }
        n++;
        await acquire();
        // sendAs is called synchronously here, in order: group commit keeps that order.
        const one: Promise<unknown> = sent(root, n).finally(() => {
          inFlight.delete(one);
          release();
        });
        inFlight.add(one);
      }
      await Promise.all(inFlight);
    };

    try {
      await Promise.all(roots.map(rootLoop));
    } finally {
      this.progress.running = false;
    }
    const cpu = process.cpuUsage(cpu0);
    const elapsedMs = lastAck - t0;
    latencies.sort((a, b) => a - b);
    const pct = (q: number) =>
      latencies.length ? round(latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)]!) : null;
    return {
      ...stats,
      errors,
      elapsedMs: round(elapsedMs),
      textsPerSec: elapsedMs > 0 ? Math.round((stats.acked / elapsedMs) * 1000) : 0,
      p50Ms: pct(0.5),
      p90Ms: pct(0.9),
      p99Ms: pct(0.99),
      maxMs: latencies.length ? round(latencies[latencies.length - 1]!) : null,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      minorFaults: process.resourceUsage().minorPageFault - faults0,
      gcMs: round(gcMs() - gc0),
    };
  }

  private received(full: boolean): Record<string, unknown> {
    const db = this.inst.db;
    const threads = db
      .prepare("SELECT id, wire_id, local_role, peer_role FROM threads WHERE started_by = 'peer' ORDER BY id")
      .all() as Array<{ id: number; wire_id: string; local_role: string; peer_role: string }>;
    const texts = db.prepare("SELECT seq, body FROM texts WHERE thread_id = ? AND direction = 'in' ORDER BY id").raw();
    return {
      threads: threads.map((thread) => {
        const rows = texts.all(thread.id) as Array<[number, string]>;
        const bodies: Array<[number, number, number]> = [];
        const seen = new Set<number>();
        let duplicates = 0;
        let inOrder = true;
        rows.forEach(([seq, body], i) => {
          const match = /^(\d+):(\d+)\|/.exec(body);
          const index = match ? Number(match[1]) : -1;
          const n = match ? Number(match[2]) : -1;
          if (seen.has(seq)) duplicates++;
          seen.add(seq);
          if (seq !== i + 1 || n !== seq) inOrder = false;
          bodies.push([index, n, seq]);
        });
        return {
          thread: thread.wire_id,
          from: thread.peer_role,
          to: thread.local_role,
          index: bodies[0]?.[0] ?? null,
          count: rows.length,
          lastSeq: rows.length ? rows[rows.length - 1]![0] : 0,
          inOrder,
          duplicates,
          ...(full ? { bodies } : {}),
        };
      }),
    };
  }
}

const round = (value: number) => Math.round(value * 100) / 100;

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (process.env.PARLEY_LOG === undefined) log.setQuiet(true);
  const stateFile = path.join(args.data, 'wire-peer.json');
  const saved = existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as { port: number }) : null;
  const inst = await openInstallation({
    dataDir: args.data,
    name: args.name,
    peerHost: args.host,
    peerPort: args.port ?? saved?.port ?? 0,
    startTurns: args.startTurns,
    textBudgetPerHour: args.budget,
    reconnect: args.reconnect,
    stopGraceMs: args.stopGraceMs,
    protocolRevision: args.revision ?? undefined,
  });
  const port = Number(inst.peerAddress!.slice(inst.peerAddress!.lastIndexOf(':') + 1));
  writeFileSync(stateFile, JSON.stringify({ port }));
  if (args.noAddress) inst.engine.setAddress(null);
  const driver = new Driver(inst);
  const reply = (line: Record<string, unknown>) => process.stdout.write(JSON.stringify(line) + '\n');
  reply({
    event: 'ready',
    name: inst.name,
    address: inst.peerAddress,
    fingerprint: inst.id,
    pid: process.pid,
    restarted: saved !== null,
  });

  let exiting = false;
  const exit = async (code: number) => {
    if (exiting) return;
    exiting = true;
    await inst.close();
    process.exit(code);
  };
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (!line.trim()) return;
    let request: Params;
    try {
      request = JSON.parse(line) as Params;
    } catch {
      reply({ ok: false, error: 'not JSON' });
      return;
    }
    const { id = null, cmd } = request;
    if (cmd === 'exit') {
      reply({ id, ok: true });
      void exit(0);
      return;
    }
    driver.handle(String(cmd), request).then(
      (result) => reply({ id, ok: true, ...result }),
      (error: unknown) =>
        reply({
          id,
          ok: false,
          error: error instanceof Error ? error.message : String(error),
          code: (error as { code?: unknown }).code,
        }),
    );
  });
  // The parent went away: close cleanly.
  lines.on('close', () => void exit(0));
}

// ── the parent's side ─────────────────────────────────────────────────────────

export interface WirePeerReady {
  name: string;
  address: string;
  fingerprint: string;
  pid: number;
  restarted: boolean;
}

export interface WirePeer {
  readonly ready: WirePeerReady;
  readonly process: ChildProcess;
  /** Sends one request; resolves with its reply, rejects with its error (or if the process dies). */
  request<T = Record<string, unknown>>(cmd: string, params?: Record<string, unknown>): Promise<T>;
  /** Everything the process wrote on stderr. */
  stderr(): string;
  /** Kills it the hard way (SIGKILL: a crash), and waits until it is gone. */
  kill(): Promise<void>;
  /** Asks it to close the installation and exit; waits until it is gone. */
  exit(): Promise<void>;
}

export const wirePeerScript = path.join(projectRoot, 'dist', 'testing', 'wire-peer.js');

/** Starts a wire peer on `dataDir` (a new folder, or one a killed peer used: then it resumes). */
export async function startWirePeer(options: {
  dataDir: string;
  name: string;
  /** More command-line arguments: --start-turns, --budget N, --port N, ... */
  args?: string[];
  /** Arguments for node itself, e.g. --cpu-prof. */
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
}): Promise<WirePeer> {
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      wirePeerScript,
      '--data',
      options.dataDir,
      '--name',
      options.name,
      ...(options.args ?? []),
    ],
    // Off the DHT unless the caller gives one (a loopback testnet): never the public nodes.
    { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, PARLEY_DHT_BOOTSTRAP: 'off', ...options.env } },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.on('error', () => {});
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pending = new Map<number, { resolve: (value: never) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let gone: Error | null = null;
  let onReady: ((ready: WirePeerReady) => void) | null = null;
  const readyPromise = new Promise<WirePeerReady>((resolve, reject) => {
    onReady = resolve;
    void exited.then(() => reject(new Error(`wire peer ${options.name} exited before it was ready:\n${stderr}`)));
  });
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    if (message.event === 'ready') {
      onReady?.(message as unknown as WirePeerReady);
      return;
    }
    const waiter = pending.get(message.id as number);
    if (!waiter) return;
    pending.delete(message.id as number);
    if (message.ok) waiter.resolve(message as never);
    else
      waiter.reject(
        Object.assign(new Error(`wire peer ${options.name}: ${String(message.error)}`), { code: message.code }),
      );
  });
  void exited.then(() => {
    gone = new Error(`wire peer ${options.name} exited (code ${child.exitCode}, signal ${child.signalCode})`);
    for (const waiter of pending.values()) waiter.reject(gone);
    pending.clear();
  });
  const ready = await readyPromise;
  return {
    ready,
    process: child,
    request<T>(cmd: string, params: Record<string, unknown> = {}): Promise<T> {
      if (gone) return Promise.reject(gone);
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve, reject });
        child.stdin.write(JSON.stringify({ ...params, id, cmd }) + '\n');
      });
    },
    stderr: () => stderr,
    async kill() {
      if (!gone) child.kill('SIGKILL');
      await exited;
    },
    async exit() {
      if (!gone) child.stdin.write(JSON.stringify({ id: 0, cmd: 'exit' }) + '\n');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

// Run as a program (dist/testing/wire-peer.js, or this file under tsx), not when imported.
if (/wire-peer\.[cm]?[jt]s$/.test(process.argv[1] ?? '')) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `wire-peer failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
