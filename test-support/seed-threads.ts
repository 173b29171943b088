// Test-only: writes many agent conversations straight into a stopped installation's
// SQLite file (schema of migrations 0007 and 0008), so UI benchmarks can start a
// `parley serve` with 10,000 threads under one root in a second instead of sending
// 10,000 texts over the wire. The rows are what the engine itself would have written
// for a finished exchange: an outgoing question (acked) and an incoming answer
// (handled), on a connection whose peer never dials (no address). The search index
// is brought up to them too, as a running installation would have left it.
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { indexAllWaitingRows } from '../main/search/index-catch-up';

export interface SeedThreadsOptions {
  /** The installation's data folder; its server must not be running. */
  dataDir: string;
  /** The root every seeded thread answers for. */
  root: { kind: 'conversation' | 'task'; id: number };
  /** The local role's id and name (it must exist). */
  localRole: { id: number; name: string };
  /** How many agent conversations to write. */
  count: number;
  /** The peer's name (a connection named so is made unless one exists). */
  peer?: string;
  /** Peer roles to spread the threads over. */
  peerRoles?: string[];
}

export interface SeedThreadsResult {
  connectionId: number;
  threadIds: number[];
}

/** The database file of a data folder, as main/installation.ts names it. */
export function databaseFile(dataDir: string): string {
  return path.join(dataDir, 'parley.db');
}

const wireId = () => randomBytes(16).toString('base64url');

export function seedThreads(options: SeedThreadsOptions): SeedThreadsResult {
  const peer = options.peer ?? 'seeded-peer';
  const peerRoles = options.peerRoles ?? ['researcher', 'analyst', 'writer'];
  const db = new Database(databaseFile(options.dataDir));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    const seed = db.transaction(() => {
      const existing = db.prepare('SELECT id FROM connections WHERE name = ?').pluck().get(peer) as number | undefined;
      const connectionId =
        existing ??
        Number(
          db
            .prepare(
              `INSERT INTO connections (fingerprint, cert, name, address, status) VALUES (?, ?, ?, NULL, 'active')`,
            )
            .run(randomBytes(32).toString('hex'), 'seeded: no certificate', peer).lastInsertRowid,
        );
      for (const [index, name] of peerRoles.entries())
        db.prepare('INSERT OR IGNORE INTO peer_roles (connection_id, name, description) VALUES (?, ?, ?)').run(
          connectionId,
          name,
          `seeded peer role ${index + 1}`,
        );
      const insertThread = db.prepare(
        `INSERT INTO threads (connection_id, wire_id, local_role_id, local_role, peer_role, root_kind, root_id,
                              started_by, status, close_reason, closed_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'local', ?, ?, ?)`,
      );
      const insertText = db.prepare(
        'INSERT INTO texts (thread_id, direction, seq, body, state, reason) VALUES (?, ?, ?, ?, ?, ?)',
      );
      const threadIds: number[] = [];
      for (let i = 0; i < options.count; i++) {
        // Only the newest thread per (peer role) may be open: the sender key is unique among open ones.
        const open = i >= options.count - peerRoles.length;
        const peerRole = peerRoles[i % peerRoles.length]!;
        const id = Number(
          insertThread.run(
            connectionId,
            wireId(),
            options.localRole.id,
            options.localRole.name,
            peerRole,
            options.root.kind,
            options.root.id,
            open ? 'open' : 'closed',
            open ? null : 'superseded by a newer question',
            open ? null : new Date().toISOString(),
          ).lastInsertRowid,
        );
        threadIds.push(id);
        insertText.run(id, 'out', 1, `Question ${i + 1}: what do the numbers for week ${i % 52} say?`, 'acked', null);
        if (i % 7 === 3) insertText.run(id, 'in', 1, `answer from ${peerRole}: still looking`, 'received', null);
        else if (i % 11 === 5) {
          db.prepare("UPDATE texts SET state = 'failed', reason = 'paused' WHERE thread_id = ?").run(id);
        } else insertText.run(id, 'in', 1, `answer from ${peerRole}: week ${i % 52} looks fine`, 'handled', null);
      }
      return { connectionId, threadIds };
    });
    const seeded = seed();
    indexAllWaitingRows(db);
    return seeded;
  } finally {
    db.close();
  }
}
