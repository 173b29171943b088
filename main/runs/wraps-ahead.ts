// The wraps made ahead for runs' next turns (main/sandbox/wrap-ahead.ts), one per run and
// a few at most: each holds a network registration and a temporary folder until its
// turn takes it, so the oldest goes when another comes, and all go at close.
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { log } from '../log';
import { mountPointsLeft } from '../sandbox/sandbox';
import { wrapAhead, type AheadWrap, type TurnSandboxOptions, type TurnToWrap } from '../sandbox/turn-sandbox';

export class WrapsAhead {
  /** In the order they were made. */
  private readonly byRun = new Map<number, AheadWrap>();
  private closed = false;

  constructor(private readonly max = 4) {}

  /**
   * Wraps the run's next turn as `ended` was (its command, folder and level, with a new
   * temporary folder in `dir`), in the background; the turn compares it with its own when
   * it starts. `runExists` tells the runs not deleted meanwhile.
   */
  prepare(
    sandbox: TurnSandboxOptions,
    runId: number,
    ended: TurnToWrap,
    dir: string,
    runExists: (runId: number) => boolean,
  ): void {
    if (!runExists(runId) || mountPointsLeft()) return;
    // Those of runs deleted without the run manager dropping theirs.
    this.dropWhere((held) => !runExists(held));
    const tmpDir = path.join(dir, `next-${runId}-${randomBytes(6).toString('hex')}`);
    try {
      mkdirSync(tmpDir, { mode: 0o700 });
      const ahead = wrapAhead(sandbox, { ...ended, runTmp: tmpDir });
      if (ahead) this.put(runId, ahead);
      else rmSync(tmpDir, { recursive: true, force: true });
    } catch (error) {
      rmSync(tmpDir, { recursive: true, force: true });
      log.warn('could not wrap a run’s next turn ahead', { runId, error: String(error) });
    }
  }

  put(runId: number, ahead: AheadWrap): void {
    if (this.closed) {
      void discard(ahead);
      return;
    }
    void this.drop(runId);
    this.byRun.set(runId, ahead);
    for (const [oldest] of this.byRun) {
      if (this.byRun.size <= this.max) break;
      void this.drop(oldest);
    }
  }

  /** The run's, now the caller's: its folder is the turn's, its wrap the turn's to use or release. */
  take(runId: number): AheadWrap | undefined {
    const ahead = this.byRun.get(runId);
    this.byRun.delete(runId);
    return ahead;
  }

  /** Releases the run's and removes its folder. */
  drop(runId: number): Promise<void> {
    const ahead = this.take(runId);
    return ahead ? discard(ahead) : Promise.resolve();
  }

  /** Drops those of runs that are gone. */
  dropWhere(gone: (runId: number) => boolean): void {
    for (const runId of [...this.byRun.keys()]) if (gone(runId)) void this.drop(runId);
  }

  /** Resolves once every wrap held now is made (or failed). */
  async made(): Promise<void> {
    await Promise.all([...this.byRun.values()].map((ahead) => ahead.wrapped));
  }

  /** Releases them all and removes their folders. */
  async dropAll(): Promise<void> {
    await Promise.all([...this.byRun.keys()].map((runId) => this.drop(runId)));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.dropAll();
  }
}

async function discard(ahead: AheadWrap): Promise<void> {
  rmSync(ahead.tmpDir, { recursive: true, force: true });
  await ahead.release();
}
