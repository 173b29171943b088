import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../store/database';
import { carrierWrote } from './carrier-turn';
import { GroupCommit } from './group-commit';

const open: Array<{ db: Db; batch: GroupCommit; dir: string }> = [];
afterEach(() => {
  for (const { db, batch, dir } of open.splice(0)) {
    batch.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

function setup(afterCommit?: () => void) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-group-commit-'));
  const db = openDatabase(path.join(dir, 'parley.db'));
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL UNIQUE)');
  const batch = new GroupCommit(db, afterCommit);
  open.push({ db, batch, dir });
  return { db, batch };
}

describe('GroupCommit', () => {
  it('takes other code’s writes for writes from elsewhere, but not untracked ones (the search index’s)', async () => {
    const { db, batch } = setup();
    const stale: string[] = [];
    batch.onStale((why) => stale.push(why));
    const piece = (body: string) =>
      batch.run((_after, tx) => {
        tx.writing();
        db.prepare('INSERT INTO notes (body) VALUES (?)').run(body);
      });
    await piece('a');
    stale.length = 0;
    batch.untracked(() => db.prepare("INSERT INTO notes (body) VALUES ('indexed')").run());
    await piece('b');
    expect(stale).toEqual([]);
    db.prepare("INSERT INTO notes (body) VALUES ('elsewhere')").run();
    await piece('c');
    expect(stale).toEqual(['outside']);
    // An untracked write after one from elsewhere does not hide it.
    stale.length = 0;
    db.prepare("INSERT INTO notes (body) VALUES ('elsewhere again')").run();
    batch.untracked(() => db.prepare("INSERT INTO notes (body) VALUES ('indexed again')").run());
    await piece('d');
    expect(stale).toEqual(['outside']);
  });

  it('lets the loop turn once before committing after a write over the DHT carrier, so that write leaves first', async () => {
    const { batch } = setup();
    const order = async () => {
      const seen: string[] = [];
      const committed = batch.run(() => seen.push('commit'));
      // What Node's TLS over the carrier's stream queues to finish its write.
      setImmediate(() => seen.push('the write’s next step'));
      await committed;
      return seen;
    };
    expect(await order()).toEqual(['commit', 'the write’s next step']);
    carrierWrote();
    expect(await order()).toEqual(['the write’s next step', 'commit']);
    // Once: the next commit does not wait again.
    expect(await order()).toEqual(['commit', 'the write’s next step']);
  });

  it('commits the pieces queued in one tick together and runs an afterOnce action once per commit', async () => {
    const { db, batch } = setup();
    const events: string[] = [];
    const piece = (body: string) =>
      batch.run((after, tx) => {
        tx.writing();
        db.prepare('INSERT INTO notes (body) VALUES (?)').run(body);
        after(() => events.push(`sent ${body}`));
        tx.afterOnce('counts', 1, () => events.push('counts changed'));
      });
    await Promise.all([piece('a'), piece('b'), piece('c')]);
    expect(events).toEqual(['sent a', 'counts changed', 'sent b', 'sent c']);
    // The next commit tells it again.
    await piece('d');
    expect(events.slice(4)).toEqual(['sent d', 'counts changed']);
    expect(db.prepare('SELECT count(*) AS n FROM notes').get()).toEqual({ n: 4 });
  });

  it('hands a failed piece’s afterOnce key to the next piece, so the change is still told once', async () => {
    const { db, batch } = setup();
    db.prepare("INSERT INTO notes (body) VALUES ('taken')").run();
    const events: string[] = [];
    const piece = (body: string) =>
      batch.run((after, tx) => {
        tx.afterOnce('counts', 1, () => events.push(`counts changed (by ${body})`));
        tx.writing();
        db.prepare('INSERT INTO notes (body) VALUES (?)').run(body);
      });
    const results = await Promise.allSettled([piece('taken'), piece('fresh')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    expect(events).toEqual(['counts changed (by fresh)']);
    expect(db.prepare('SELECT body FROM notes ORDER BY id').all()).toEqual([{ body: 'taken' }, { body: 'fresh' }]);
  });

  it('makes an afterOnceFrom action only for the piece that claims its key, and claims nothing when there is none', async () => {
    const { db, batch } = setup();
    const made: string[] = [];
    const events: string[] = [];
    const tellOf = (source: string) => {
      made.push(source);
      return source === 'gone' ? null : () => events.push(`told by ${source}`);
    };
    const piece = (body: string, key: number) =>
      batch.run((_after, tx) => {
        tx.writing();
        db.prepare('INSERT INTO notes (body) VALUES (?)').run(body);
        tx.afterOnceFrom('root', key, body, tellOf);
      });
    await Promise.all([piece('gone', 1), piece('a', 1), piece('b', 1), piece('c', 2)]);
    // 'gone' had nothing to tell, so key 1 stayed free for 'a'; 'b' stopped at the claim.
    expect(made).toEqual(['gone', 'a', 'c']);
    expect(events).toEqual(['told by a', 'told by c']);
  });

  it('flushes the log itself inside a group commit and leaves every other transaction at synchronous=FULL', async () => {
    const { db, batch } = setup();
    const FULL = 2;
    const NORMAL = 1;
    expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
    for (const body of ['one', 'two']) {
      const inside = await batch.run((_after, tx) => {
        tx.writing();
        db.prepare('INSERT INTO notes (body) VALUES (?)').run(body);
        return db.pragma('synchronous', { simple: true });
      });
      expect(inside).toBe(NORMAL);
      expect(db.pragma('synchronous', { simple: true })).toBe(FULL);
    }
  });

  it('commits a large burst in two halves while no commit waits for its flush, and a small one whole', async () => {
    let commits = 0;
    const { db, batch } = setup(() => commits++);
    // Each piece notes how many commits came before the one it is in.
    const burst = (size: number, tag: string) =>
      Promise.all(
        Array.from({ length: size }, (_, i) =>
          batch.run((_after, tx) => {
            tx.writing();
            db.prepare('INSERT INTO notes (body) VALUES (?)').run(`${tag} ${i}`);
            return commits;
          }),
        ),
      );
    const large = await burst(100, 'large');
    expect(large.slice(0, 50).every((seen) => seen === 0)).toBe(true);
    expect(large.slice(50).every((seen) => seen === 1)).toBe(true);
    expect(commits).toBe(2);
    const small = await burst(40, 'small');
    expect(new Set(small)).toEqual(new Set([2]));
    expect(commits).toBe(3);
    expect(db.prepare('SELECT count(*) AS n FROM notes').get()).toEqual({ n: 140 });
  });
});
