// The composition root of one Parley installation — the one function the desktop app
// and `parley serve` both start it with: its data folder, database, identity, runs,
// role API, the engine with its peer listener, what waits on people and the app API. What differs
// between the two is only how they are shown (a window over IPC, a page over HTTP) and
// where the peer settings come from (remembered in the database, or serve's flags).
// Tests open several side by side.
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { AppEvent } from '../shared/api-contract';
import type { Person } from '../shared/domain';
import { adapters } from './agents';
import { createDefaultRole, type FirstRunNote, type FirstRunOptions } from './agents/first-run';
import { dispatch, type ApiServices } from './api/handlers';
import { SessionRegistry, sessionEndReasons, type ApiSession } from './api/session';
import { Attention } from './attention/attention';
import { approvalsSource } from './attention/approvals-source';
import { ConnectionEngine } from './engine/engine';
import { dhtBootstrapFromEnv, type DhtBootstrap } from './net/dht-bootstrap';
import type { PortNetwork } from './engine/port-network';
import { createIdentity, hasIdentityFiles, identityFiles, loadIdentity, type Identity } from './engine/identity';
import { EventHub } from './events';
import { log } from './log';
import { PeerNetwork, type PeerConfig } from './peer-listener/peer-network';
import { distPaths, projectRoot } from './paths';
import { RoleApiServer } from './role-api-server/server';
import { agentEnvironment, RunManager, type RunManagerOptions } from './runs/run-manager';
import { AgentSandbox, type SandboxOptions } from './sandbox/sandbox';
import { defaultRolesDir, roleFolder, unsandboxedAllowed } from './sandbox/folders';
import { listRoles } from './store/queries/roles';
import { StartupError } from './startup-error';
import { SearchIndexer } from './search/indexer';
import { Checkpointer } from './store/checkpointer';
import { closeDatabase, openDatabase, transaction, type Db } from './store/database';
import { getInstallation, saveInstallation } from './store/queries/installation';
import { sealStoredSecrets } from './store/queries/roles';
import { useSecretBox, type SecretBox } from './store/secret-box';
import { deleteSignInTokens, firstOwner, insertPerson, insertSignInToken, listPeople } from './store/queries/people';
import { hashToken, newToken } from './tokens';

export interface InstallationOptions {
  dataDir: string;
  /** The installation's display name; kept from the last run when omitted. */
  name?: string;
  maxConcurrentTurns?: number;
  defaultTurnTimeoutSec?: number;
  stopGraceMs?: number;
  /**
   * How it listens for peers: settings remembered in the database (the desktop app),
   * fixed ones (serve's flags), or not at all. Shorthand: peerHost/peerPort are fixed
   * settings; with neither, it does not listen.
   */
  peers?: PeerConfig;
  peerHost?: string;
  peerPort?: number;
  textBudgetPerHour?: number;
  reconnect?: { minMs: number; maxMs: number };
  /** The newest revision of protocol 2 to speak (tests: a peer of an older release); the newest by default. */
  protocolRevision?: number;
  /** False: inputs commit but no agent starts (the wire benchmark). */
  startTurns?: boolean;
  /** How long an agent's request to use a tool waits for a person (tests shorten it). */
  permissionTimeoutMs?: number;
  /**
   * A new installation gets a default role `assistant` (DESIGN §10). False skips it;
   * an object changes where it looks (tests). When omitted, it is made unless the
   * environment says PARLEY_DEFAULT_ROLE=off (the test suites set that).
   */
  defaultRole?: boolean | FirstRunOptions;
  /** The SQLite addon to load (Electron in development uses its own build). */
  nativeBinding?: string;
  /**
   * What seals role secrets (env values, API keys) at rest: the desktop app's OS
   * keychain (safeStorage). Without one they are stored as written (`parley serve`).
   */
  secrets?: SecretBox;
  /** Which DHT to join beside the address; when omitted, PARLEY_DHT_BOOTSTRAP says (unset: the public one). */
  dht?: DhtBootstrap;
  /** Also serve as a blind relay on the DHT for others (`parley serve --relay`). */
  relay?: boolean;
  /**
   * False never holepunches, so that peers must meet through a relay (tests, and a person checking that a relay
   * works); when omitted, PARLEY_DHT_HOLEPUNCH=off says false.
   */
  dhtHolepunch?: boolean;
  /** Links to peers over these ports instead of TLS on TCP, and no DHT (tests link installations in memory). */
  peerPorts?: PortNetwork;
  /** The agents' OS sandbox (main/sandbox): where bubblewrap is, or 'off'. */
  sandbox?: SandboxOptions;
  /** Where roles that name no folder work, each in its own: by default `<data folder>-roles`. */
  rolesDir?: string;
  /** Whom a turn works for (RunManagerOptions.trustOf); by default every turn is the person's own. */
  trustOf?: RunManagerOptions['trustOf'];
  /** Every role API answer is checked against the contract's result schema before it goes out (tests). */
  checkRoleApiResults?: boolean;
}

export interface Installation {
  readonly dataDir: string;
  readonly name: string;
  /** The certificate fingerprint peers pin. */
  readonly id: string;
  readonly db: Db;
  readonly identity: Identity;
  readonly events: EventHub;
  readonly runs: RunManager;
  readonly roleApi: RoleApiServer;
  readonly roleApiSocket: string;
  readonly engine: ConnectionEngine;
  /** Where peers reach it: the listener, what invitations carry, whether it works. */
  readonly network: PeerNetwork;
  /** host:port peers dial (what invitations carry), or null when it cannot be invited. */
  readonly peerAddress: string | null;
  /** Set on the first run when the default role was made: which agent it uses and how to change it. */
  readonly firstRun: FirstRunNote | null;
  /** The signed-in sessions, ended at once when their person is removed or their token replaced. */
  readonly sessions: SessionRegistry;
  /** What waits on each person, and what they have read. */
  readonly attention: Attention;
  /** Whether agents start in the OS sandbox here, and why not. */
  readonly sandbox: AgentSandbox;
  /** Where roles that name no folder work. */
  readonly rolesDir: string;
  /** Calls one app API method as a session; throws ApiError. */
  call(session: ApiSession, method: string, params: unknown): Promise<unknown>;
  /** The events the session's person may see, while the session lasts. */
  subscribe(session: ApiSession, listener: (event: AppEvent) => void): () => void;
  /** The first owner: the person the desktop app acts as. */
  owner(): Person;
  /** A session acting as the first owner, bound to their id (the desktop window: no token), ended should they be removed. */
  ownerSession(): ApiSession;
  /** A fresh sign-in token for the first owner, replacing the previous one with the same label. */
  issueOwnerToken(label: string): string;
  /** Closes everything; running agents get `agentGraceMs` (default: the stop grace) between SIGTERM and SIGKILL. */
  close(options?: { agentGraceMs?: number }): Promise<void>;
}

/** Unix sockets have a short path limit; long data folders get a private one in tmp. */
function roleApiSocketPath(dataDir: string): string {
  if (process.platform === 'win32') {
    return `\\\\.\\pipe\\parley-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`;
  }
  const inside = path.join(dataDir, 'role-api.sock');
  if (Buffer.byteLength(inside) <= 100) return inside;
  const dir = path.join(os.tmpdir(), `parley-${process.getuid?.() ?? 'user'}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return path.join(dir, `${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}.sock`);
}

/**
 * `parley` on the agents' PATH: a launcher for the CLI with the same Node (or Electron as
 * Node). The CLI talks only to Parley's local socket, so it drops NODE_EXTRA_CA_CERTS,
 * which agents keep for their own HTTPS but which Node reads and parses on every start
 * (it adds 47 ms to a 30 ms start here, with Debian's bundle).
 */
function writeLauncher(binDir: string): void {
  mkdirSync(binDir, { recursive: true, mode: 0o700 });
  const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;
  const script =
    '#!/bin/sh\nunset NODE_EXTRA_CA_CERTS\n' +
    `ELECTRON_RUN_AS_NODE=1 exec ${quote(process.execPath)} ${quote(distPaths.cli)} "$@"\n`;
  writeFileSync(path.join(binDir, 'parley'), script, { mode: 0o755 });
  chmodSync(path.join(binDir, 'parley'), 0o755);
}

/**
 * Seals role secrets stored as written (before the box, or by `parley serve`), leaving
 * no copy of them in the file: the rows' old bytes are zeroed (secure_delete) and the
 * write-ahead log that held them is checkpointed and emptied.
 */
function sealSecretsStoredAsWritten(db: Db): void {
  const before = db.pragma('secure_delete', { simple: true }) as number;
  db.pragma('secure_delete = ON');
  let sealed: number;
  try {
    sealed = transaction(db, () => sealStoredSecrets(db));
  } finally {
    db.pragma(`secure_delete = ${before ? 'ON' : 'OFF'}`);
  }
  if (sealed === 0) return;
  db.pragma('wal_checkpoint(TRUNCATE)');
  log.info('sealed role secrets that were stored as written', { roles: sealed });
}

/**
 * The identity to start with. An installation peers may know (its row is in the
 * database) must find its own identity, whole; only one that never finished its first
 * start gets a new one.
 */
async function startupIdentity(dataDir: string, expected: string | null, name: string): Promise<Identity> {
  if (expected === null) {
    try {
      return loadIdentity(dataDir) ?? (await createIdentity(dataDir, name));
    } catch (error) {
      if (!(error instanceof StartupError)) throw error;
      // Left half-made by a first start that did not finish: no peer has seen it.
      return createIdentity(dataDir, name);
    }
  }
  const identity = loadIdentity(dataDir);
  const files = identityFiles(dataDir);
  if (!identity)
    throw new StartupError(
      `${files.key} and ${files.cert} are missing, but the database belongs to installation ${expected.slice(0, 16)}…, ` +
        'which peers know by that identity. Parley did not start and changed nothing. Restore the identity folder ' +
        'from a backup of this data folder; a new identity would break the pairing with every peer.',
    );
  if (identity.fingerprint !== expected)
    throw new StartupError(
      `${files.cert} is the identity of ${identity.fingerprint.slice(0, 16)}…, but the database belongs to installation ` +
        `${expected.slice(0, 16)}…. Parley did not start and changed nothing. Put back this data folder's own identity folder.`,
    );
  return identity;
}

/**
 * V8's allocation-site pretenuring off, for the process an installation runs in. Every
 * text on the wire keeps a few small objects alive for its round trip (its place on the
 * wire, its send's result and frame), a thousand at once in a busy installation: V8
 * sees them survive young collections and allocates them straight in the old
 * generation, where they die as garbage only a full collection reclaims, at a cost in
 * CPU per text (bench/README, "The wire, 2026-12-06"). Set before the installation's
 * work starts and its hot code is compiled; Node and Electron both leave V8's flags
 * settable after start-up.
 */
function tuneHeap(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}

function dhtOf(options: InstallationOptions): DhtBootstrap {
  if (options.dht) return options.dht;
  const fromEnv = dhtBootstrapFromEnv();
  if (!fromEnv.ok) throw new StartupError(`${fromEnv.message}.`);
  return fromEnv.bootstrap;
}

function peerConfig(options: InstallationOptions): PeerConfig {
  if (options.peers) return options.peers;
  if (options.peerPort === undefined) return { kind: 'none' };
  return { kind: 'fixed', listenHost: options.peerHost ?? '127.0.0.1', port: options.peerPort };
}

export async function openInstallation(options: InstallationOptions): Promise<Installation> {
  tuneHeap();
  const dataDir = path.resolve(options.dataDir);
  const dht: DhtBootstrap = options.peerPorts ? { kind: 'off' } : dhtOf(options);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const dbFile = path.join(dataDir, 'parley.db');
  if (!existsSync(dbFile) && hasIdentityFiles(dataDir))
    throw new StartupError(
      `${dbFile} is missing, but ${identityFiles(dataDir).dir} holds the identity peers know this installation by. ` +
        'Parley did not start and changed nothing. Restore parley.db from a backup of this data folder, ' +
        'or move the identity folder away as well to start a new, empty installation (every peer would then have to be paired again).',
    );
  const db = openDatabase(dbFile, { nativeBinding: options.nativeBinding });
  let started: Checkpointer | null = null;
  let sandboxHeld: AgentSandbox | null = null;
  try {
    // The files are checked before anything is written.
    const previous = getInstallation(db);
    const name = options.name ?? previous?.name ?? os.userInfo().username;
    const identity = await startupIdentity(dataDir, previous?.fingerprint ?? null, name);
    const checkpointer = new Checkpointer(db, options.nativeBinding);
    started = checkpointer;
    if (options.secrets) {
      useSecretBox(db, options.secrets);
      sealSecretsStoredAsWritten(db);
    }
    transaction(db, () => {
      saveInstallation(db, name, identity.fingerprint);
      if (!firstOwner(db)) insertPerson(db, name, 'owner');
    });
    const defaultRole = options.defaultRole ?? process.env.PARLEY_DEFAULT_ROLE !== 'off';
    const firstRun =
      previous === undefined && defaultRole !== false
        ? await createDefaultRole(db, defaultRole === true ? {} : defaultRole)
        : null;
    if (firstRun) log.info(firstRun.message, { adapter: firstRun.adapter });
    const events = new EventHub();
    const binDir = path.join(dataDir, 'bin');
    writeLauncher(binDir);
    const roleApiSocket = roleApiSocketPath(dataDir);
    const rolesDir = path.resolve(options.rolesDir ?? defaultRolesDir(dataDir));
    mkdirSync(rolesDir, { recursive: true, mode: 0o700 });
    const sandbox = await AgentSandbox.open(options.sandbox);
    sandboxHeld = sandbox;
    if (!sandbox.status.available)
      log.warn('agents start without a sandbox here; runs working for peers do not start', {
        reason: sandbox.status.reason,
      });
    const runs = new RunManager({
      db,
      events,
      adapters,
      workDir: rolesDir,
      turnsDir: path.join(dataDir, 'turns'),
      trustOf: options.trustOf,
      roleFolder: (id) => roleFolder(rolesDir, id),
      sandbox: {
        sandbox,
        dataDir,
        roleApiSocket,
        launcher: [binDir, path.dirname(path.dirname(process.execPath)), projectRoot],
        roleFolders: () =>
          listRoles(db).map((role) =>
            'cwd' in role.agent && role.agent.cwd ? role.agent.cwd : roleFolder(rolesDir, role.id),
          ),
        unsandboxedAllowed: (context) => unsandboxedAllowed(db, context),
      },
      agentEnv: agentEnvironment(binDir, roleApiSocket),
      paths: { node: process.execPath, scriptedAgent: distPaths.scriptedAgent },
      maxConcurrentTurns: options.maxConcurrentTurns,
      defaultTurnTimeoutSec: options.defaultTurnTimeoutSec,
      stopGraceMs: options.stopGraceMs,
      startTurns: options.startTurns,
      permissionTimeoutMs: options.permissionTimeoutMs,
    });
    const engine = new ConnectionEngine({
      db,
      identity,
      name: () => name,
      events,
      runs,
      textBudgetPerHour: options.textBudgetPerHour,
      reconnect: options.reconnect,
      revision: options.protocolRevision,
      afterCommit: () => checkpointer.wrote(),
      carrier: {
        relay: options.relay ?? false,
        holepunch: options.dhtHolepunch ?? process.env.PARLEY_DHT_HOLEPUNCH !== 'off',
      },
      ports: options.peerPorts,
    });
    runs.setThreadHooks({
      describe: (run) => engine.describeThread(run),
      changed: (id) => engine.threadChanged(id),
      replyWithOutput: (run, turnId, text, alongside) => engine.replyWithOutput(run, turnId, text, alongside),
      answerArrived: (run, turnId, outcome, alongside) => engine.answerArrived(run, turnId, outcome, alongside),
      peers: () => engine.peers(),
      turnState: (run, turnId, state) => engine.turnState(run.context_id, turnId, state),
    });
    const roleApi = new RoleApiServer({
      db,
      runs,
      events,
      socketPath: roleApiSocket,
      peers: engine,
      checkResults: options.checkRoleApiResults,
    });
    await roleApi.listen();
    const network = new PeerNetwork({ db, engine, identity, events, config: peerConfig(options), dht });
    try {
      await network.start();
    } catch (error) {
      await engine.close();
      await roleApi.close();
      throw error;
    }
    const searchIndexer = new SearchIndexer(db, events, (write) => engine.untracked(write));
    const attention = new Attention({ db, events, sources: [approvalsSource(db)] });
    await runs.start();
    engine.start();
    attention.warm(listPeople(db).filter((person) => person.kind === 'owner'));
    const sessions = new SessionRegistry();
    const services: ApiServices = {
      db,
      events,
      runs,
      engine,
      network,
      sessions,
      attention,
      installation: { id: identity.fingerprint, name },
      sandbox: sandbox.status,
    };
    let closed = false;
    return {
      dataDir,
      name,
      id: identity.fingerprint,
      db,
      identity,
      events,
      runs,
      roleApi,
      roleApiSocket,
      engine,
      network,
      get peerAddress() {
        return network.invitationAddress;
      },
      firstRun,
      sessions,
      attention,
      sandbox,
      rolesDir,
      call: (session, method, params) => dispatch(services, session, method, params),
      subscribe: (session, listener) => events.subscribe(session, listener),
      owner: () => firstOwner(db)!,
      ownerSession() {
        const session: ApiSession = { person: firstOwner(db)! };
        sessions.add(session);
        return session;
      },
      issueOwnerToken(label) {
        const owner = firstOwner(db)!;
        const token = newToken('pst');
        const replaced = transaction(db, () => {
          const replaced = deleteSignInTokens(db, owner.id, label);
          insertSignInToken(db, owner.id, hashToken(token), label);
          return replaced;
        });
        sessions.endTokens(replaced, sessionEndReasons.tokenReplaced);
        return token;
      },
      async close(closeOptions = {}) {
        if (closed) return;
        closed = true;
        searchIndexer.close();
        attention.close();
        await network.close();
        await engine.close();
        await runs.close(closeOptions.agentGraceMs);
        await roleApi.close();
        await checkpointer.close();
        closeDatabase(db);
        await sandbox.close();
      },
    };
  } catch (error) {
    await started?.close();
    if (db.open) db.close();
    await sandboxHeld?.close();
    throw error;
  }
}
