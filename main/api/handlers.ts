// The app API's one handler table, assembled from each area's methods (*-handlers.ts).
// Both transports (Electron IPC and the headless JSON-RPC socket) call `dispatch`, which
// validates params against the shared contract, checks the session (its person, and the
// sign-in token it is bound to) and runs the handler. Every handler asks the access rules
// (../access, through ./authorize) before it reads or acts, and every event it emits
// carries the audience those rules give; no handler decides on its own who may.
import {
  ApiError,
  describeIssues,
  isMethodName,
  methods,
  type MethodName,
  type ParsedParamsOf,
  type ResultOf,
} from '../../shared/api-contract';
import type { Person } from '../../shared/domain';
import type { Attention } from '../attention/attention';
import type { ConnectionEngine } from '../engine/engine';
import type { EventHub } from '../events';
import type { PeerNetwork } from '../peer-listener/peer-network';
import { log } from '../log';
import type { RunManager } from '../runs/run-manager';
import { DISK_FULL_MESSAGE, isDiskFull } from '../store/storage-errors';
import type { Db } from '../store/database';
import { getPerson, personBySignInToken, signInByTokenHash } from '../store/queries/people';
import { hashToken } from '../tokens';
import { approvalHandlers } from './approvals-handlers';
import { trustHandlers } from './trust-handlers';
import { rememberHandlers } from './remember-handlers';
import { sandboxHandlers } from './sandbox-handlers';
import type { SandboxStatus } from '../sandbox/sandbox';
import { attentionHandlers } from './attention-handlers';
import { connectionHandlers } from './connection-handlers';
import { conversationHandlers } from './conversation-handlers';
import { firstRunHandlers } from './first-run-handlers';
import { ledgerHandlers } from './ledger-handlers';
import { networkHandlers } from './network-handlers';
import { peopleHandlers } from './people-handlers';
import { relayHandlers } from './relay-handlers';
import { pairingHandlers } from './pairing-handlers';
import { roleHandlers } from './role-handlers';
import { searchHandlers } from './search-handlers';
import { sessionEndReasons, type ApiSession, type SessionRegistry } from './session';
import { taskHandlers } from './task-handlers';
import { threadHandlers } from './thread-handlers';

export interface ApiServices {
  db: Db;
  events: EventHub;
  runs: RunManager;
  engine: ConnectionEngine;
  network: PeerNetwork;
  sessions: SessionRegistry;
  attention: Attention;
  installation: { id: string; name: string };
  /** Whether agents start in the OS sandbox here; absent: as if it did. */
  sandbox?: SandboxStatus;
}

export interface Call {
  services: ApiServices;
  session: ApiSession;
  person: Person;
}

export type Handler<M extends MethodName> = (
  call: Call,
  params: ParsedParamsOf<M>,
) => ResultOf<M> | Promise<ResultOf<M>>;
export type HandlerTable = { [M in Exclude<MethodName, 'session.signIn'>]: Handler<M> };

const handlers: HandlerTable = {
  ...peopleHandlers,
  ...roleHandlers,
  ...conversationHandlers,
  ...taskHandlers,
  ...threadHandlers,
  ...connectionHandlers,
  ...networkHandlers,
  ...relayHandlers,
  ...pairingHandlers,
  ...searchHandlers,
  ...firstRunHandlers,
  ...ledgerHandlers,
  ...approvalHandlers,
  ...trustHandlers,
  ...rememberHandlers,
  ...attentionHandlers,
  ...sandboxHandlers,
};

/**
 * The session's person as the store has them now (their kind may have changed), while
 * the session is still theirs: its sign-in token still exists and still belongs to them,
 * or (a session bound to a person alone) they are still here. Otherwise the session ends.
 */
function currentPerson(services: ApiServices, session: ApiSession): Person {
  const bound = session.person;
  if (!bound) throw new ApiError('unauthenticated', 'sign in first (session.signIn)');
  const person =
    session.signInTokenId === undefined
      ? getPerson(services.db, bound.id)
      : personBySignInToken(services.db, session.signInTokenId);
  if (person?.id === bound.id) return person;
  const reason = getPerson(services.db, bound.id) ? sessionEndReasons.tokenReplaced : sessionEndReasons.removed;
  services.sessions.end(session, reason);
  throw new ApiError('unauthenticated', reason);
}

/** Validates and runs one app API call for a session. Throws ApiError only. */
export async function dispatch(
  services: ApiServices,
  session: ApiSession,
  method: string,
  params: unknown,
): Promise<unknown> {
  if (!isMethodName(method)) throw new ApiError('invalid', `unknown method "${method}"`);
  const parsed = methods[method].params.safeParse(params ?? {});
  if (!parsed.success) throw new ApiError('invalid', describeIssues(parsed.error));
  try {
    if (method === 'session.signIn') {
      const signIn = signInByTokenHash(services.db, hashToken((parsed.data as { token: string }).token));
      if (!signIn) throw new ApiError('unauthenticated', 'this sign-in token is not valid');
      session.person = signIn.person;
      session.signInTokenId = signIn.tokenId;
      services.sessions.add(session);
      return { person: signIn.person };
    }
    const person = currentPerson(services, session);
    session.person = person;
    const handler = handlers[method] as Handler<typeof method>;
    return await handler({ services, session, person }, parsed.data as never);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    if (isDiskFull(error)) {
      log.warn('refused an app API call: the disk is full', { method });
      throw new ApiError('disk_full', DISK_FULL_MESSAGE);
    }
    log.error('app API failure', { method, error: String((error as Error).stack ?? error) });
    throw new ApiError('internal', 'something went wrong inside Parley; the details are in its log');
  }
}
