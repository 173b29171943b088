// Pairing: an owner invites (a one-time secret, stored hashed, with an expiry), the
// other owner accepts (dials the inviter, pins its certificate, presents the secret),
// and the inviter turns the stranger's certificate into a connection when the secret
// is valid. Each side names the connection after the name the peer announced, cleaned.
import { isUnspecifiedHost, parseHostPort } from '../net/hosts';
import { transaction, type Db } from '../store/database';
import {
  connectionByFingerprint,
  freeConnectionName,
  insertConnection,
  listConnectionRows,
  insertInvitation,
  invitationBySecretHash,
  hasOpenInvitation,
  setDhtKey,
  setRelays,
  setExposedRoles,
  useInvitation,
  type ConnectionRow,
} from '../store/queries/connections';
import { relayKeys } from '../store/queries/relays';
import { roleRefByName } from '../store/queries/roles';
import { isStorageFailure } from '../store/storage-errors';
import { hashToken } from '../tokens';
import { checkPeerAddress, cleanPeerName, nameClash, sameName, type NameClash } from './announced';
import type { EngineCore } from './engine-core';
import { EngineError } from './errors';
import { HandshakeError } from './handshake';
import { decodeInvite, encodeInvite, newInviteSecret, type Invite } from './invitation';
import { DIAL_TIMEOUT_MS, UnreachableError, type LinkManager, type ReachTarget } from './links';
import type { PeerCertificate } from './transport';
import { CloseCode, type HelloFrame } from './wire';
import { log } from '../log';

export class Pairing {
  constructor(
    private readonly core: EngineCore,
    private readonly links: LinkManager,
  ) {}

  invite(
    createdBy: number,
    roles: string[],
    expiresInMinutes = 24 * 60,
  ): { code: string; link: string; address: string | null; dht: string | null; expiresAt: string } {
    const address = this.links.address;
    const dht = this.links.dhtKey;
    if (!address && !dht)
      throw new EngineError(
        'unavailable',
        this.links.listening
          ? 'this installation listens for peers on every interface (0.0.0.0 or ::), which no peer can dial: give the address peers should dial (parley serve --advertise HOST:PORT, or the advertised address in Settings) to invite'
          : 'this installation is not listening for peers',
      );
    requireRoles(this.core.db, roles);
    const secret = newInviteSecret();
    const expiresAt = new Date(Date.now() + expiresInMinutes * 60_000).toISOString();
    transaction(this.core.db, () => insertInvitation(this.core.db, hashToken(secret), roles, createdBy, expiresAt));
    const common = { name: this.core.options.name(), fingerprint: this.core.fingerprint, secret, expires: expiresAt };
    // Off the DHT, the version every Parley since the second release reads.
    const relays = relayKeys(this.core.db);
    const invite: Invite = dht
      ? { v: 3, ...common, dht, ...(address ? { address } : {}), ...(relays.length > 0 ? { relays } : {}) }
      : { v: 2, ...common, address: address! };
    return { ...encodeInvite(invite), address, dht, expiresAt };
  }

  /** Whether an unused invitation is still open: only then may a stranger's DHT key connect. */
  invitationOpen(): boolean {
    return hasOpenInvitation(this.core.db, new Date().toISOString());
  }

  /** Dials the inviter, proves the secret and pins its certificate. */
  async accept(code: string, roles: string[]): Promise<ConnectionRow> {
    const db = this.core.db;
    let invite: Invite;
    try {
      invite = decodeInvite(code);
    } catch (error) {
      throw new EngineError('invalid', (error as Error).message);
    }
    const inviter = cleanPeerName(invite.name);
    if (Date.parse(invite.expires) < Date.now())
      throw new EngineError('invalid', 'this invitation has expired; ask for a new one');
    if (invite.fingerprint === this.core.fingerprint) throw new EngineError('invalid', 'this invitation is your own');
    const existing = connectionByFingerprint(db, invite.fingerprint);
    if (existing?.status === 'revoked') throw new EngineError('revoked', revokedRefusal(existing));
    if (existing) throw new EngineError('invalid', `you are already connected to ${existing.name}`);
    if (invite.address !== undefined) {
      const address = checkPeerAddress(invite.address);
      if (!address.ok)
        throw new EngineError(
          'invalid',
          isUnspecifiedHost(parseHostPort(invite.address)?.host ?? '')
            ? `this invitation carries ${invite.address}, which no one can dial; ask ${inviter} to start Parley with --advertise HOST:PORT (the address you can reach it at) and invite you again`
            : `the invitation's address ${invite.address} is refused: ${address.reason}`,
        );
    }
    requireRoles(db, roles);
    const clash = this.clashOf(inviter);
    if (clash) throw new EngineError('invalid', clashRefusal(inviter, clash, 'this invitation is from'));
    const target = {
      address: invite.address ?? null,
      dhtKey: invite.v === 3 ? invite.dht : null,
      relays: invite.v === 3 ? (invite.relays ?? []) : [],
      stranger: true,
    };
    let connection: ConnectionRow | null = null;
    // The name the inviter says in its hello is checked again: it may differ from the invitation's.
    let refusedName: string | null = null;
    const connect = () =>
      this.links.connect(target, invite.fingerprint, this.links.hello(invite.secret), (hello, peer) => {
        const named = cleanPeerName(hello.name);
        const helloClash = this.clashOf(named);
        if (helloClash) {
          refusedName = clashRefusal(named, helloClash, 'the inviter calls itself');
          return { refuse: { code: CloseCode.badInvitation, reason: 'your name reads like another peer of mine' } };
        }
        connection = transaction(db, () => {
          const row = insertConnection(
            db,
            peer.fingerprint,
            peer.pem,
            this.connectionName(hello.name),
            target.address,
            'invitation',
          );
          setExposedRoles(db, row.id, roleIds(db, roles));
          if (target.relays.length > 0) setRelays(db, row.id, JSON.stringify(target.relays));
          if (!target.dhtKey) return row;
          // The row as stored, so what accept returns names the key it will redial by.
          setDhtKey(db, row.id, target.dhtKey);
          return { ...row, dht_key: target.dhtKey };
        });
        return { connectionId: connection.id };
      });
    try {
      await connect().catch((error: unknown) => {
        if (!acceptWorthRedialling(error)) throw error;
        log.info('the inviter gave no answer by its DHT key; trying once more', { inviter });
        return connect();
      });
    } catch (error) {
      // The inviter was reached, and this side could not record the connection: said as it is.
      if (isStorageFailure(error)) throw error;
      if (refusedName !== null) throw new EngineError('invalid', refusedName);
      if (!(error instanceof HandshakeError))
        throw new EngineError('unavailable', unreachableSentence(inviter, target, error as Error, this.links.dhtKey));
      if (error.kind === 'protocol') throw new EngineError('invalid', `${inviter} ${error.message}`);
      throw new EngineError('invalid', `${inviter} refused the invitation: ${error.message}`);
    }
    if (!connection) throw new EngineError('unavailable', 'this installation is shutting down');
    return connection;
  }

  /**
   * A stranger's hello on our listener: the connection its invitation makes, null when
   * it has no valid invitation, or why its name is refused (the invitation stays open).
   */
  admitStranger(peer: PeerCertificate, hello: HelloFrame): number | { refused: string } | null {
    if (!hello.invitation) return null;
    const db = this.core.db;
    const secretHash = hashToken(hello.invitation);
    return transaction(db, () => {
      const invitation = invitationBySecretHash(db, secretHash);
      if (!invitation || invitation.used_at !== null || Date.parse(invitation.expires_at) < Date.now()) return null;
      const named = cleanPeerName(hello.name);
      const clash = this.clashOf(named);
      if (clash) {
        log.warn('refused a peer whose name reads like another', { name: named, like: clash.name });
        return { refused: strangerRefusal(clash) };
      }
      const address = hello.address !== null && checkPeerAddress(hello.address).ok ? hello.address : null;
      const row = insertConnection(db, peer.fingerprint, peer.pem, this.connectionName(hello.name), address, 'peer');
      setExposedRoles(db, row.id, roleIds(db, JSON.parse(invitation.roles) as string[]));
      useInvitation(db, invitation.id, row.id);
      return row.id;
    });
  }

  /** The name a connection gets from the one the peer announced: cleaned, never ours, never another's. */
  private connectionName(announced: string): string {
    const ours = this.core.options.name();
    return freeConnectionName(this.core.db, cleanPeerName(announced), (name) => sameName(name, ours));
  }

  /** Whether a peer's (cleaned) name reads as ours or as another connection's. */
  private clashOf(name: string): NameClash {
    const others = listConnectionRows(this.core.db).map((row) => row.name);
    return nameClash(name, this.core.options.name(), others);
  }
}

/** What the owner who pairs is told when a peer's name could pass for another. */
export function clashRefusal(name: string, clash: NonNullable<NameClash>, said: string): string {
  const like = clash.ours ? `your own name "${clash.name}"` : `your connection "${clash.name}"`;
  return `${said} "${name}", which reads the same as ${like}; a peer whose name could pass for another is refused: ask them to choose a name that does not`;
}

/** What a stranger whose name could pass for another is told (a WebSocket close reason: short, at most 123 bytes). */
export function strangerRefusal(clash: NonNullable<NameClash>): string {
  const full = clash.ours
    ? 'your name reads the same as the inviter’s own; choose another name and accept again'
    : `your name reads the same as the inviter’s peer "${clash.name}"; choose another name`;
  return Buffer.byteLength(full) <= 123
    ? full
    : 'your name reads the same as another peer of the inviter; choose another name and accept again';
}

function requireRoles(db: Db, roles: string[]): void {
  for (const role of roles) if (!roleRefByName(db, role)) throw new EngineError('not_found', `no role named "${role}"`);
}

export function roleIds(db: Db, names: string[]): number[] {
  return names.map((name) => roleRefByName(db, name)?.id).filter((id): id is number => id !== undefined);
}

/** Why a revoked peer cannot be paired again, naming the side that revoked when it is known. */
function revokedRefusal(connection: ConnectionRow): string {
  const why =
    connection.revoked_by === 'peer'
      ? `${connection.name} revoked this connection`
      : connection.revoked_by === 'us'
        ? `you revoked ${connection.name}`
        : // Revoked before this installation recorded which side did it.
          `the connection with ${connection.name} was revoked`;
  return `${why}; a revoked peer cannot be paired again`;
}

/**
 * A person accepting an invitation would rather wait a little longer than be told to try
 * again: a first dial by key can go unanswered while a node that has just joined the DHT
 * is still filling its table, and a second lookup then finds the inviter. Only when every
 * way tried timed out by key; a refusal, a wrong fingerprint or an address that failed is
 * said at once.
 */
export function acceptWorthRedialling(error: unknown): boolean {
  return (
    error instanceof UnreachableError &&
    error.attempts.length > 0 &&
    error.attempts.every((a) => a.path === 'dht' && isTimeout(a.error))
  );
}

function isTimeout(error: Error & { code?: string }): boolean {
  return /handshake has timed out|ETIMEDOUT|timed out/i.test(error.message) || error.code === 'ETIMEDOUT';
}

/** A dial's failure in plain words (the libraries' own say little to a person). */
export function plainDialError(error: Error & { code?: string }, timeoutMs = DIAL_TIMEOUT_MS): string {
  const code = error.code ?? '';
  const message = error.message;
  if (error.name === 'FingerprintMismatch') return `someone else answered there (${message})`;
  if (code === 'ECONNREFUSED') return 'nothing listens there';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'that network cannot be reached from here';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'that name does not resolve';
  if (code === 'PEER_NOT_FOUND') return 'it is not on the DHT now';
  if (code === 'HOLEPUNCH_DOUBLE_RANDOMIZED_NATS')
    return 'both routers change ports on every connection, so only a relay can join you';
  if (code.includes('HOLEPUNCH')) return 'holepunching through the routers failed';
  if (code === 'PEER_CONNECTION_FAILED') return 'it did not let this installation in';
  if (code === 'RELAY_ABORTED') return 'the relay did not join the two of you (it may be down or full)';
  if (isTimeout(error)) return `no answer within ${Math.round(timeoutMs / 1000)} s`;
  return message;
}

/**
 * Why the inviter could not be reached, in words an owner can act on: what was tried and
 * what each side can do about it.
 */
export function unreachableSentence(
  inviter: string,
  target: ReachTarget,
  error: Error,
  ourDhtKey: string | null,
): string {
  // Off the DHT, no dial by key was made: that is said once, below, with what to do.
  const attempts = (error instanceof UnreachableError ? error.attempts : []).filter(
    (a) => ourDhtKey || a.path === 'address',
  );
  const tried = attempts.map((a) =>
    a.path === 'dht'
      ? `by its DHT key: ${plainDialError(a.error, a.timeoutMs)}`
      : a.path === 'relay'
        ? `through the relay ${a.target.slice(0, 12)}…: ${plainDialError(a.error, a.timeoutMs)}`
        : `at ${a.target}: ${plainDialError(a.error, a.timeoutMs)}`,
  );
  const relayTried = attempts.some((a) => a.path === 'relay');
  if (target.dhtKey && !ourDhtKey) tried.push('not by its DHT key, because this installation is not on the DHT');
  const what = tried.length > 0 ? tried.join('; ') : plainDialError(error);
  const advice: string[] = [];
  if (target.dhtKey && !ourDhtKey) advice.push('turn the DHT on here (Settings, or parley serve without --no-dht)');
  if (target.dhtKey)
    advice.push(
      relayTried
        ? `ask ${inviter} to check that Parley is running and online, and whoever runs the relay whether it answers (Settings → Relays says)`
        : `ask ${inviter} to check that Parley is running and online; if both of you are behind strict routers, one of you can add a relay`,
    );
  else if (target.address)
    advice.push(
      `ask ${inviter} whether ${target.address} is where Parley listens and is reachable from your network, or for an invitation from a Parley on the DHT`,
    );
  return `could not reach ${inviter} (tried ${what}). ${capitalise(advice.join('; '))}.`;
}

const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
