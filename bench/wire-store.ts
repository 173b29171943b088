// The wire benchmark's second baseline: the durable work Parley's delivery promise needs,
// through Parley's own store and group commit, and nothing else — no engine, no checks,
// no change events, no runs. Two processes over wss, like the raw baseline; the sender
// commits each text (`insertText`, state `sent`) before it goes out, the receiver commits
// it (`insertText`, state `received`) before its ack, and the sender records the acks
// (`ackTexts`) the way the engine does, then sends each agent conversation's next text as
// a new piece, the way the benchmark's driver calls `sendAs`. Both databases are made by
// the real migrations, synchronous=FULL, WAL, on the same disk, and checkpointed the way an
// installation checkpoints (main/store/checkpointer.ts, after each group commit). Its two
// databases live as long as the wire line's two installations do, growing round after
// round as theirs do: a fresh, small database each time would sit in the page cache while
// Parley's grew out of it.
//
// Parley ÷ this (`ratioStore`) is what the engine costs over its store; this ÷ wss is the
// most any engine on this store could reach on this machine (the engine's throughput
// goal is measured against wss).
import { mkdirSync } from 'node:fs';
import https from 'node:https';
import type { Socket } from 'node:net';
import path from 'node:path';
import WebSocket, { WebSocketServer } from 'ws';
import { GroupCommit } from '../main/engine/group-commit';
import { loadOrCreateIdentity } from '../main/engine/identity';
import { Checkpointer } from '../main/store/checkpointer';
import { openDatabase, type Db } from '../main/store/database';
import { connectionByFingerprint, insertConnection } from '../main/store/queries/connections';
import { getRoleByName, insertRole } from '../main/store/queries/roles';
import { ackTexts, insertText, insertThread, lastSeq, threadByWireId } from '../main/store/queries/threads';
import { gcMs } from '../test-support/gc-time';
import { runProcessPair } from './process-pair';

export interface StoreStats {
  threads: number;
  msgsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  senderCpuUsPerText: number;
  senderFaultsPerText: number;
  senderGcUsPerText: number;
}

const BODY_BYTES = 64;
const WARMUP_MS = 300;
const round = (value: number) => Math.round(value * 100) / 100;

/**
 * A store like an installation's, with one connection and `threads` agent conversations
 * on it: made on first use, and the same one again (with each conversation's last seq) after.
 */
function openStore(
  dir: string,
  threads: number,
  startedBy: 'local' | 'peer',
): { db: Db; rows: number[]; lastSeqs: number[] } {
  mkdirSync(dir, { recursive: true });
  const db = openDatabase(path.join(dir, 'parley.db'));
  const connection =
    connectionByFingerprint(db, 'store-baseline') ??
    insertConnection(db, 'store-baseline', 'cert', 'peer', null, 'peer');
  const local = startedBy === 'local' ? 'source' : 'sink';
  const role = getRoleByName(db, local) ?? insertRole(db, local, '', { adapter: 'command', command: ['true'] });
  const rows: number[] = [];
  const lastSeqs: number[] = [];
  db.transaction(() => {
    for (let i = 0; i < threads; i++) {
      const known = threadByWireId(db, connection.id, threadId(i));
      const row =
        known?.id ??
        insertThread(db, {
          connectionId: connection.id,
          wireId: threadId(i),
          localRoleId: role.id,
          localRole: local,
          peerRole: startedBy === 'local' ? 'sink' : 'source',
          rootKind: 'thread',
          rootId: i + 1,
          startedBy,
        }).id;
      rows.push(row);
      lastSeqs.push(known ? lastSeq(db, row, startedBy === 'local' ? 'out' : 'in') : 0);
    }
  })();
  return { db, rows, lastSeqs };
}

const threadId = (i: number) => `store-baseline-${String(i).padStart(7, '0')}`;

/** Like the peer link: frames sent in one tick leave in one write. */
function corkedSender(ws: WebSocket, socket: Socket): (data: string) => void {
  let corked = false;
  return (data) => {
    if (!corked) {
      corked = true;
      socket.cork();
      process.nextTick(() => {
        corked = false;
        socket.uncork();
      });
    }
    ws.send(data);
  };
}

/** `bench/run.js store-baseline-receiver DIR THREADS`: commits every text, then acks it; prints its port. */
export async function storeReceiver(dir: string, threads: number): Promise<void> {
  const { db, rows } = openStore(dir, threads, 'peer');
  const checkpointer = new Checkpointer(db);
  const batch = new GroupCommit(db, () => checkpointer.wrote());
  const byWire = new Map(rows.map((row, i) => [threadId(i), row]));
  const identity = await loadOrCreateIdentity(dir, 'store-baseline');
  const server = https.createServer({ key: identity.key, cert: identity.cert, minVersion: 'TLSv1.3' });
  new WebSocketServer({ server, perMessageDeflate: false }).on('connection', (ws, request) => {
    const send = corkedSender(ws, request.socket);
    ws.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString()) as { thread: string; seq: number; body: string };
      void batch.run(
        (after, tx) => {
          tx.writing();
          insertText(db, byWire.get(frame.thread)!, 'in', frame.seq, frame.body, 'received');
          after(() => send(JSON.stringify({ type: 'ack', thread: frame.thread, seq: frame.seq })));
        },
        { savepoint: false },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
}

/** `bench/run.js store-baseline-sender DIR PORT THREADS MS`: stop-and-wait per agent conversation. */
export async function storeSender(dir: string, port: number, threads: number, durationMs: number): Promise<void> {
  const { db, rows, lastSeqs } = openStore(dir, threads, 'local');
  const checkpointer = new Checkpointer(db);
  const batch = new GroupCommit(db, () => checkpointer.wrote());
  const ws = new WebSocket(`wss://127.0.0.1:${port}/`, { rejectUnauthorized: false, perMessageDeflate: false });
  const socket = await new Promise<Socket>((resolve, reject) => {
    let upgraded: Socket;
    ws.once('upgrade', (response) => (upgraded = response.socket));
    ws.once('open', () => resolve(upgraded));
    ws.once('error', reject);
  });
  const frame = corkedSender(ws, socket);
  const index = new Map(rows.map((_, i) => [threadId(i), i]));
  const seqs = lastSeqs;
  const onWire = new Array<number>(threads).fill(0);
  const sentAt = new Float64Array(threads);
  const latencies: number[] = [];
  let start = Infinity;
  let stopping = false;
  let inFlight = 0;
  let last = 0;
  let cpu0 = process.cpuUsage();
  /** Like `sendAs`: one piece writes thread i's next text, which goes out after the commit. */
  const send = (i: number) => {
    const seq = ++seqs[i]!;
    const body = `${i}:${seq}|`.padEnd(BODY_BYTES, 'x');
    sentAt[i] = performance.now();
    inFlight++;
    void batch.run(
      (after, tx) => {
        tx.writing();
        onWire[i] = insertText(db, rows[i]!, 'out', seq, body, 'sent');
        after(() =>
          frame(JSON.stringify({ type: 'text', thread: threadId(i), seq, from: 'source', to: 'sink', body })),
        );
      },
      { savepoint: false },
    );
  };
  // Like the engine: the acks read before the next commit are recorded in one piece, by
  // text id, without an fsync of their own; each agent conversation sends its next text
  // once its ack is committed.
  let acks: number[] | null = null;
  const done = new Promise<void>((resolve, reject) => {
    // Without it, a closed connection would leave nothing to wait on: the process would end, silently.
    ws.once('close', (code, reason) =>
      reject(new Error(`the store baseline's receiver closed the connection (${code} ${reason.toString()})`)),
    );
    ws.on('message', (data: Buffer) => {
      const i = index.get((JSON.parse(data.toString()) as { thread: string }).thread)!;
      if (acks) {
        acks.push(i);
        return;
      }
      const group = (acks = [i]);
      void batch
        .run(
          (_after, tx) => {
            acks = null;
            tx.writing();
            ackTexts(
              db,
              group.map((j) => onWire[j]!),
            );
          },
          { durable: false, savepoint: false },
        )
        .then(() => {
          const at = performance.now();
          for (const j of group) {
            inFlight--;
            if (sentAt[j]! >= start) {
              latencies.push(at - sentAt[j]!);
              last = at;
            }
            if (!stopping) send(j);
          }
          if (stopping && inFlight === 0) resolve();
        });
    });
  });
  for (let i = 0; i < threads; i++) send(i);
  await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
  start = performance.now();
  cpu0 = process.cpuUsage();
  const faults0 = process.resourceUsage().minorPageFault;
  const gc0 = gcMs();
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  stopping = true;
  await done;
  const cpu = process.cpuUsage(cpu0);
  const faults = process.resourceUsage().minorPageFault - faults0;
  const gc = gcMs() - gc0;
  ws.removeAllListeners('close');
  ws.close();
  batch.close();
  await checkpointer.close();
  db.close();
  latencies.sort((a, b) => a - b);
  const pct = (q: number) => round(latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)]!);
  const result: StoreStats = {
    threads,
    msgsPerSec: Math.round((latencies.length / (last - start)) * 1000),
    p50Ms: pct(0.5),
    p99Ms: pct(0.99),
    senderCpuUsPerText: Math.round((cpu.user + cpu.system) / latencies.length),
    senderFaultsPerText: round(faults / latencies.length),
    senderGcUsPerText: round((gc * 1000) / latencies.length),
  };
  process.stdout.write(JSON.stringify(result));
}

/**
 * Runs the store-only receiver and sender as two processes; resolves with the sender's
 * figures. Their databases are in `dir`, kept from one call to the next.
 */
export function measureStoreBaseline(dir: string, threads: number, durationMs: number): Promise<StoreStats> {
  return runProcessPair<StoreStats>(
    'store baseline',
    () => ['store-baseline-receiver', path.join(dir, 'receiver'), String(threads)],
    (_scratch, port) => [
      'store-baseline-sender',
      path.join(dir, 'sender'),
      String(port),
      String(threads),
      String(durationMs),
    ],
  );
}
