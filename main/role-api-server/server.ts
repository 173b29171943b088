// The role API server: agents act through it, never through the database. A run
// token is valid only while its turn works; a role token (made by an owner for
// scripts) reads but never sends.
import { chmodSync, existsSync, mkdirSync, unlinkSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describeIssues } from '../../shared/api-contract';
import { historyScope } from '../access/lookup';
import type { Caller, PeerGateway } from '../agents/types';
import type { EventHub } from '../events';
import { answerClientError, httpTimeouts } from '../net/http-guards';
import { log } from '../log';
import type { RunManager } from '../runs/run-manager';
import { linePlace, postReport } from '../posting/post-line';
import type { Db } from '../store/database';
import { roleRefById, roleRefByTokenHash } from '../store/queries/roles';
import { turnByTokenHash } from '../store/queries/runs';
import { DISK_FULL_MESSAGE, isDiskFull } from '../store/storage-errors';
import { hashToken } from '../tokens';
import {
  isRoleApiCommand,
  NO_TOPIC_MESSAGE,
  parseRoleApiParams,
  RoleApiError,
  roleApiResults,
  type ReportResult,
  type RoleApiCommand,
  type RoleApiErrorCode,
  type RoleApiHandlers,
  type RoleApiResponse,
  type RoleApiResult,
} from '../role-api/protocol';
import { fromEngine } from './engine-errors';
import { turnActionOf, type TurnSent } from './turn-action';

export interface RoleApiOptions {
  db: Db;
  runs: RunManager;
  events: EventHub;
  socketPath: string;
  peers?: PeerGateway;
  /**
   * Checks every answer against the contract's result schema before it goes out (tests
   * turn it on): a result that drifted from the contract fails there, as `internal`.
   */
  checkResults?: boolean;
}

const MAX_BODY = 512 * 1024;

type RunCaller = Extract<Caller, { kind: 'run' }>;

export class RoleApiServer {
  private server: http.Server | null = null;
  private peers: PeerGateway | null;

  constructor(private readonly options: RoleApiOptions) {
    this.peers = options.peers ?? null;
  }

  setPeerGateway(peers: PeerGateway): void {
    this.peers = peers;
  }

  async listen(): Promise<void> {
    const socketPath = this.options.socketPath;
    mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 });
    if (existsSync(socketPath)) unlinkSync(socketPath);
    const server = http.createServer(httpTimeouts, (req, res) => {
      req.on('error', () => {});
      res.on('error', () => {});
      this.handle(req, res).catch((error: unknown) =>
        log.error('could not answer a role API call', { error: String(error) }),
      );
    });
    server.keepAliveTimeout = 1000;
    server.on('clientError', answerClientError);
    // Create the socket with no access for others from its first moment, then pin 0600.
    const previous = process.umask(0o177);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(socketPath, () => resolve());
      });
    } finally {
      process.umask(previous);
    }
    chmodSync(socketPath, 0o600);
    server.on('error', (error) => log.error('the role API server failed', { error: error.message }));
    this.server = server;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (existsSync(this.options.socketPath)) unlinkSync(this.options.socketPath);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let response: RoleApiResponse;
    let status = 200;
    try {
      const result = await this.dispatch(req);
      response = { ok: true, result };
    } catch (thrown) {
      const error = isDiskFull(thrown) ? new RoleApiError('disk_full', DISK_FULL_MESSAGE) : fromEngine(thrown);
      const known = error instanceof RoleApiError;
      if (!known) log.error('role API failure', { error: String((error as Error).stack ?? error) });
      const code: RoleApiErrorCode = known ? error.code : 'internal';
      status = httpStatus[code];
      response = { ok: false, error: { code, message: known ? error.message : 'internal error; see the Parley log' } };
    }
    if (res.headersSent || res.destroyed) return;
    const body = JSON.stringify(response);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      // A request whose body was not read to its end leaves the connection unusable.
      ...(req.complete ? {} : { connection: 'close' }),
    });
    res.end(body);
  }

  private async dispatch(req: http.IncomingMessage): Promise<unknown> {
    const command = (req.url ?? '').replace(/^\/v1\//, '');
    if (req.method !== 'POST' || !isRoleApiCommand(command))
      throw new RoleApiError('invalid', `unknown role API call ${req.method} ${req.url}`);
    const caller = this.authenticate(req.headers.authorization);
    const raw = await readBody(req);
    let json: unknown;
    try {
      json = raw === '' ? {} : JSON.parse(raw);
    } catch {
      throw new RoleApiError('invalid', 'the request body is not JSON');
    }
    return this.call(command, caller, json);
  }

  /** The command's params as its schema parses them, handed to its handler. */
  private async call<C extends RoleApiCommand>(command: C, caller: Caller, json: unknown): Promise<RoleApiResult<C>> {
    const parsed = parseRoleApiParams(command, json);
    if (!parsed.success) throw new RoleApiError('invalid', describeIssues(parsed.error));
    const result = await this.handlers[command](caller, parsed.data);
    if (this.options.checkResults) {
      const checked = roleApiResults[command].safeParse(result);
      if (!checked.success)
        throw new Error(`the ${command} result does not match the role API contract: ${describeIssues(checked.error)}`);
    }
    return result;
  }

  private authenticate(header: string | undefined): Caller {
    const token = /^Bearer (\S+)$/.exec(header ?? '')?.[1];
    if (!token) throw new RoleApiError('unauthenticated', 'no token: PARLEY_TOKEN is not set');
    const hash = hashToken(token);
    const turn = turnByTokenHash(this.options.db, hash);
    // The role's name and id only: its agent settings, and the secrets sealed in them, stay closed.
    if (turn) {
      const role = roleRefById(this.options.db, turn.run.role_id);
      if (role) return { kind: 'run', role, run: turn.run, turn: turn.turn };
    }
    const role = roleRefByTokenHash(this.options.db, hash);
    if (role) return { kind: 'role', role };
    throw new RoleApiError('unauthenticated', 'this token is not valid (a run token works only while its turn runs)');
  }

  /** What each command does, as the contract types it. */
  private readonly handlers: RoleApiHandlers<Caller> = {
    context: (caller) => this.context(caller),
    peers: () => this.peers?.peers() ?? [],
    report: async (caller, { text }) => {
      const run = requireRun(caller);
      return this.noted(run, { command: 'report', result: await this.report(run, text) });
    },
    history: (caller, { with: peerRole }) => {
      if (!this.peers)
        throw new RoleApiError(
          'not_found',
          `no connection named "${peerRole.split('/')[0]}"; this installation is not connected to any peer yet`,
        );
      // From a run, only what the people of its root may read (DESIGN §11.3); a role token reads all its role's.
      const scope = historyScope(
        this.options.db,
        caller.kind === 'role'
          ? caller
          : { kind: 'run', context: { kind: caller.run.context_kind, id: caller.run.context_id } },
      );
      return this.peers.history(caller.role, peerRole, scope);
    },
    send: async (caller, { to, text }) => {
      const run = requireRun(caller);
      if (!this.peers) throw noEngine();
      return this.noted(run, { command: 'send', result: await this.peers.send(run, to, text) });
    },
    reply: async (caller, { text }) => {
      const run = requireRun(caller);
      if (run.run.context_kind !== 'thread')
        throw new RoleApiError(
          'invalid',
          '`parley reply` works only in an agent conversation; in a conversation or on a task use `parley report`, or `parley send --to PEER/ROLE`',
        );
      if (!this.peers) throw noEngine();
      return this.noted(run, { command: 'reply', result: await this.peers.reply(run, text) });
    },
    permission: (caller, { title, toolKind, input }) => {
      const run = requireRun(caller);
      // Answered when a person decides, or the request is cancelled (stop, the turn's end, a timeout).
      return this.options.runs.permissions.ask(run.run, run.turn.id, {
        title,
        detail: { ...(toolKind ? { toolKind } : {}), ...(input ? { input } : {}) },
      });
    },
  };

  /**
   * Tells the run manager what a turn in an agent conversation sent, for the reply
   * guard (see `turnActionOf`).
   */
  private noted<S extends TurnSent>(caller: RunCaller, sent: S): S['result'] {
    if (caller.run.context_kind === 'thread')
      this.options.runs.noteTurnAction(caller.turn.id, turnActionOf(caller.run.context_id, sent));
    return sent.result;
  }

  private context(caller: Caller): RoleApiResult<'context'> {
    const role = { id: caller.role.id, name: caller.role.name };
    const peers = this.peers?.peers() ?? [];
    if (caller.kind === 'role') return { token: 'role', role, run: null, context: null, peers };
    return {
      token: 'run',
      role,
      run: { id: caller.run.id, turnId: caller.turn.id, session: caller.run.session },
      context: this.options.runs.describeContext(caller.run),
      peers,
    };
  }

  private async report(caller: RunCaller, text: string): Promise<ReportResult> {
    const place = linePlace({ kind: caller.run.context_kind, id: caller.run.context_id });
    if (place) {
      const reported = postReport(this.options, place, caller.role, text, caller.turn.id);
      if (!reported) throw new RoleApiError('closed', `the ${place.kind} this run reports to was deleted`);
      return reported;
    }
    if (!this.peers) throw noEngine();
    return this.peers.reportOnThread(caller, text);
  }
}

function requireRun(caller: Caller): RunCaller {
  if (caller.kind !== 'run') throw new RoleApiError('no_topic', NO_TOPIC_MESSAGE);
  return caller;
}

function noEngine(): RoleApiError {
  return new RoleApiError(
    'unavailable',
    'this Parley has no connections to other installations yet, so nothing can be sent to a peer',
  );
}

const httpStatus: Record<RoleApiErrorCode, number> = {
  invalid: 400,
  unauthenticated: 401,
  no_topic: 400,
  forbidden: 400,
  not_found: 400,
  not_exposed: 400,
  paused: 400,
  revoked: 400,
  queue_full: 400,
  budget: 400,
  closed: 400,
  unavailable: 400,
  disk_full: 507,
  internal: 500,
};

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        // The answer says so; the rest of the body is read and dropped (the request timeout bounds it).
        req.off('data', onData);
        req.resume();
        reject(new RoleApiError('invalid', `the request is too large (${MAX_BODY / 1024} KiB at most)`));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
