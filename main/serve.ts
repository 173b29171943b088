// `parley serve`: one installation, headless. Serves the built UI and the app API
// (by default on loopback), writes DATA/serve.json (0600) and prints the UI address
// with the owner's sign-in token in the fragment, which never reaches the server's logs.
// SIGTERM or SIGINT ends it within two seconds: app API sockets close with 1001, peers
// are told (their link closes with "shutting down"), serve.json and the role API socket
// are removed.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApiCloseCode } from './api/ws-transport';
import { startUiServer } from './http/ui-server';
import { openInstallation, type Installation } from './installation';
import { log } from './log';
import { formatHostPort } from './net/hosts';
import { NetworkError } from './peer-listener/peer-network';
import { assertBuilt, distPaths } from './paths';
import { dhtOfServe, parseServeArgs, serveWarnings, type ServeOptions } from './serve-args';
import { StartupError } from './startup-error';
import { DISK_FULL_MESSAGE, isDiskFull } from './store/storage-errors';

export type { ServeOptions } from './serve-args';

export interface ServeInfo {
  ui: string;
  api: string;
  peer: string | null;
  roleApi: string;
  token: string;
  pid: number;
  /** The key (hex) of the blind relay this installation runs (`--relay`), which people add to their relays; null when it runs none. */
  relay: string | null;
}

export interface RunningServer {
  info: ServeInfo;
  installation: Installation;
  close(): Promise<void>;
}

/** Agents get this long between SIGTERM and SIGKILL when Parley shuts down, to keep within two seconds. */
const SHUTDOWN_AGENT_GRACE_MS = 700;
/** Past this, shutdown stops waiting: files are removed and the process exits. */
const SHUTDOWN_DEADLINE_MS = 1_700;

/** Starts one headless installation; used by the CLI, the demo and tests. */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  assertBuilt();
  const installation = await openInstallation({
    dataDir: options.data,
    name: options.name,
    // The flags decide; Settings shows them and cannot change them (docs/architecture.md).
    peers: {
      kind: 'fixed',
      listenHost: options['peer-host'],
      port: options['peer-port'],
      advertise: options.advertise ?? null,
    },
    dht: dhtOfServe(options),
    relay: options.relay ?? false,
  });
  if (options.relay && !installation.engine.relayKey) {
    const problem = installation.network.status().dht.problem ?? 'not on the DHT';
    await installation.close();
    throw new StartupError(`cannot serve as a relay (--relay): ${problem}.`);
  }
  let ui;
  try {
    ui = await startUiServer(installation, {
      host: options['ui-host'],
      port: options['ui-port'],
      root: distPaths.renderer,
    });
  } catch (error) {
    await installation.close();
    throw new StartupError(
      `cannot listen for the UI on ${formatHostPort(options['ui-host'], options['ui-port'])}: ${(error as Error).message}`,
    );
  }
  const base = `http://${formatHostPort(options['ui-host'], ui.port)}/`;
  const info: ServeInfo = {
    ui: base,
    api: `ws://${formatHostPort(options['ui-host'], ui.port)}/api`,
    peer: installation.peerAddress ? `wss://${installation.peerAddress}` : null,
    roleApi: installation.roleApiSocket,
    token: installation.issueOwnerToken('serve'),
    pid: process.pid,
    relay: installation.engine.relayKey,
  };
  const infoFile = path.join(installation.dataDir, 'serve.json');
  rmSync(infoFile, { force: true });
  writeFileSync(infoFile, JSON.stringify(info, null, 2) + '\n', { mode: 0o600 });
  let closing: Promise<void> | null = null;
  return {
    info,
    installation,
    close() {
      closing ??= (async () => {
        try {
          await Promise.all([
            ui.close(ApiCloseCode.goingAway, 'Parley is shutting down'),
            installation.close({ agentGraceMs: SHUTDOWN_AGENT_GRACE_MS }),
          ]);
        } finally {
          removeFiles(infoFile, installation.roleApiSocket);
        }
      })();
      return closing;
    },
  };
}

function removeFiles(infoFile: string, roleApiSocket: string): void {
  for (const file of [infoFile, roleApiSocket]) {
    try {
      rmSync(file, { force: true });
    } catch (error) {
      log.warn('could not remove a file at shutdown', { file, error: String(error) });
    }
  }
}

export async function serveCommand(args: string[]): Promise<void> {
  const parsed = parseServeArgs(args);
  if (!parsed.ok) {
    process.stderr.write(`parley serve: ${parsed.message}\n`);
    process.exit(2);
  }
  const options = parsed.options;
  // Whatever slips through is logged with its stack, never a silent end.
  process.on('unhandledRejection', (reason) =>
    log.error('unhandled rejection (Parley goes on)', { error: String((reason as Error)?.stack ?? reason) }),
  );
  let running: RunningServer;
  try {
    running = await startServer(options);
  } catch (error) {
    const forPeople = error instanceof StartupError || error instanceof NetworkError;
    const message = forPeople
      ? error.message
      : isDiskFull(error)
        ? `cannot start: ${DISK_FULL_MESSAGE}`
        : String((error as Error).stack ?? error);
    process.stderr.write(`parley serve: ${message}\n`);
    process.exit(1);
  }
  for (const warning of serveWarnings(options)) process.stderr.write(`parley serve: ${warning}\n`);
  process.stdout.write(
    `Parley "${running.installation.name}" is running: ${running.info.ui}#token=${running.info.token}\n`,
  );
  const firstRun = running.installation.firstRun;
  if (firstRun) process.stdout.write(`${firstRun.message}\n`);
  const infoFile = path.join(running.installation.dataDir, 'serve.json');
  let stopping = false;
  const stop = (why: string, exitCode: number) => {
    if (stopping) {
      // A second Ctrl-C: do not wait any longer.
      removeFiles(infoFile, running.info.roleApi);
      process.exit(exitCode || 130);
    }
    stopping = true;
    log.info('shutting down', { why });
    setTimeout(() => {
      log.warn('shutdown took too long; exiting now');
      removeFiles(infoFile, running.info.roleApi);
      process.exit(exitCode);
    }, SHUTDOWN_DEADLINE_MS).unref();
    running.close().then(
      () => process.exit(exitCode),
      (error: unknown) => {
        log.error('shutdown failed', { error: String((error as Error)?.stack ?? error) });
        process.exit(exitCode || 1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT', 0));
  process.on('SIGTERM', () => stop('SIGTERM', 0));
  process.on('uncaughtException', (error) => {
    // State may be half-changed: log it, shut down cleanly and exit non-zero so a supervisor restarts us.
    log.error('uncaught exception; shutting down', { error: String(error.stack ?? error) });
    stop('uncaught exception', 1);
  });
}
