// An installation opened in-process on a real data folder, with a typed caller per
// person, for tests that need to look inside (the database, the run manager).
import { rmSync } from 'node:fs';
import type { MethodName, ParamsOf, ResultOf } from '../shared/api-contract';
import type { Person } from '../shared/domain';
import { openInstallation, type Installation, type InstallationOptions } from '../main/installation';
import { log } from '../main/log';
import { makeDataDir } from './data-folder';

export interface TestInstallation {
  installation: Installation;
  as(person: Person): <M extends MethodName>(method: M, params: ParamsOf<M>) => Promise<ResultOf<M>>;
  owner: <M extends MethodName>(method: M, params: ParamsOf<M>) => Promise<ResultOf<M>>;
  /** Resolves once `check` returns a value; re-checked on every change event. */
  waitFor<T>(
    check: () => Promise<T | undefined | null | false> | T | undefined | null | false,
    what: string,
    timeoutMs?: number,
  ): Promise<T>;
  /**
   * A restart: closes the installation, keeping its folders, runs `whileDown`, and opens
   * it again on them with the first options and `overrides`. The new one removes the
   * folders when it closes if this one would have.
   */
  restart(overrides?: Partial<InstallationOptions>, whileDown?: () => Promise<void>): Promise<TestInstallation>;
  close(): Promise<void>;
}

export async function openTestInstallation(
  options: Partial<InstallationOptions> = {},
  /** Whether its folders go when it closes: yes for one made here. */
  ownsFolders = !options.dataDir,
): Promise<TestInstallation> {
  log.setQuiet(true);
  const dataDir = options.dataDir ?? makeDataDir('parley-test-');
  // Tests make their own roles: no first-run `assistant` unless a test asks for it.
  // Every role API answer in a test is held to the contract's result schema.
  const installation = await openInstallation({
    name: 'alice',
    defaultRole: false,
    checkRoleApiResults: true,
    ...options,
    dataDir,
  });
  const as =
    (person: Person) =>
    <M extends MethodName>(method: M, params: ParamsOf<M>) =>
      installation.call({ person }, method, params) as Promise<ResultOf<M>>;
  const ownerPerson = installation.owner();
  const removeFolders = () => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(installation.rolesDir, { recursive: true, force: true });
  };
  return {
    installation,
    as,
    owner: as(ownerPerson),
    async waitFor(check, what, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await check();
        if (value) return value;
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new Error(`timed out waiting for ${what}`);
        await new Promise<void>((resolve) => {
          // Woken by the next change event; the timer only bounds the wait.
          const timer = setTimeout(done, Math.min(remaining, 500));
          const off = installation.events.observe(done);
          function done() {
            clearTimeout(timer);
            off();
            resolve();
          }
        });
      }
    },
    async restart(overrides = {}, whileDown) {
      await installation.close();
      try {
        await whileDown?.();
        return await openTestInstallation({ ...options, ...overrides, dataDir }, ownsFolders);
      } catch (error) {
        if (ownsFolders) removeFolders();
        throw error;
      }
    },
    async close() {
      await installation.close();
      if (ownsFolders) removeFolders();
    },
  };
}
