// Reaching a peer by every path it has: its address over TLS (or a port network in tests),
// its DHT key holepunched, then relays somebody chose. The first link through the pin wins
// and the others are cancelled; when none gets through, the error says what each path did.
import type { DhtCarrier } from './dht-carrier';
import { wsFramePort, type FramePort } from './frame-port';
import { DHT_HEDGE_MS, DHT_SILENT_MS, hedged } from './hedged-dial';
import type { PortNetwork } from './port-network';
import { nextDhtStep, relaysToTry } from './relay-choice';
import { dialPeer, FingerprintMismatch, type PeerCertificate } from './transport';
import { PROTOCOL_REVISION } from './wire';
import type { Identity } from './identity';

/** How a link's bytes travel: its own TCP connection, or the DHT (straight, or through a relay). */
export type LinkPath = 'direct' | 'holepunched' | 'relayed';

/** What a dial may use: our identity, the revision we speak, the carriers we have, the relays we chose. */
export interface ReachWays {
  identity: Identity;
  revision: number | undefined;
  ports: PortNetwork | undefined;
  carrier: DhtCarrier | null;
  ourRelays: () => string[];
}

/** A peer reached: its frame port, its pinned certificate, the path that won and the relay it goes through. */
export interface ReachedPeer {
  port: FramePort;
  peer: PeerCertificate;
  path: LinkPath;
  relay: string | null;
}

/** Where to reach a peer: its address, its DHT key, or both (raced). */
export interface ReachTarget {
  address: string | null;
  dhtKey: string | null;
  /** The path that won the last time: raced at once instead of after the address's head start. */
  lastPath?: 'direct' | 'dht' | null;
  /** The relays the peer named (its invitation, its `reach` frame): tried, after ours, once holepunching fails. */
  relays?: string[];
  /** We are a stranger to the peer (accepting its invitation): its firewall lets us in only through its own relays. */
  stranger?: boolean;
}

/** How long each path has to get through the pin: an acceptor who cannot reach the inviter learns why soon after. */
export const DIAL_TIMEOUT_MS = 8_000;

/** How long the address has to itself before the DHT is tried as well. */
export const DHT_HEAD_START_MS = 1_000;

/**
 * How long the DHT waits for the address: not at all when there is no address or the DHT
 * won last time, else the head start (cut short by the address failing, see reach()).
 */
export function dhtHeadStart(target: ReachTarget): number {
  return target.address && target.lastPath !== 'dht' ? DHT_HEAD_START_MS : 0;
}

export { holepunchWorthRetrying } from './relay-choice';

/** One way a dial went: at the address, by DHT key, or through a relay (`target` is the relay's key). */
export interface DialAttempt {
  path: 'address' | 'dht' | 'relay';
  target: string;
  error: Error;
  /** How long this dial had, so that a timeout is told as it was. */
  timeoutMs: number;
}

const attemptWords = (a: DialAttempt) =>
  a.path === 'dht' ? 'by DHT' : a.path === 'relay' ? `through relay ${a.target.slice(0, 12)}…` : `at ${a.target}`;

export class UnreachableError extends Error {
  constructor(readonly attempts: DialAttempt[]) {
    super(attempts.map((a) => `${attemptWords(a)}: ${a.error.message}`).join('; '));
    this.name = 'UnreachableError';
  }
}

export async function reachPeer(ways: ReachWays, target: ReachTarget, fingerprint: string): Promise<ReachedPeer> {
  const { identity, revision } = ways;
  const cancel = new AbortController();
  const attempts: DialAttempt[] = [];
  const tries: Promise<ReachedPeer>[] = [];
  /** The address failed: the DHT need not wait out the address's head start. */
  const addressGaveUp = new AbortController();
  if (target.address) {
    const address = target.address;
    tries.push(
      dialAddress(ways, address, fingerprint, cancel.signal).then(
        (dialled) => ({ ...dialled, path: 'direct' as const, relay: null }),
        (error: Error) => {
          attempts.push({ path: 'address', target: address, error, timeoutMs: DIAL_TIMEOUT_MS });
          addressGaveUp.abort();
          throw error;
        },
      ),
    );
  }
  const carrier = ways.carrier;
  if (target.dhtKey && carrier) {
    const key = target.dhtKey;
    const headStart = dhtHeadStart(target);
    tries.push(
      waitUnlessCancelled(headStart, cancel.signal, addressGaveUp.signal)
        .then(async () => {
          const deadline = Date.now() + DIAL_TIMEOUT_MS - headStart;
          // Only relays somebody chose, and only once holepunching failed: ours first, then the peer's.
          const relays = relaysToTry(target.stranger ? [] : ways.ourRelays(), target.relays ?? []);
          let relay: string | null = null;
          /** One dial by key (through `via`, or holepunched); `path` says how it went once open. */
          const dialByKey = async (via: string | null, signal: AbortSignal, hurry?: () => void) => {
            const { stream, path, whenSilent } = carrier.connect(key, via);
            if (hurry) whenSilent(DHT_SILENT_MS, hurry);
            const timeoutMs = via ? Math.max(deadline - Date.now(), RELAY_DIAL_MS) : deadline - Date.now();
            return {
              ...(await dialPeer(identity, 'peer.dht.invalid:443', fingerprint, {
                stream,
                revision,
                signal,
                timeoutMs,
              })),
              path,
            };
          };
          for (let attempt = 1; ; attempt++) {
            const timeoutMs = relay ? Math.max(deadline - Date.now(), RELAY_DIAL_MS) : deadline - Date.now();
            try {
              // Holepunched dials get a second beside them when slow; a relay's pairing is slow by nature.
              const dialled = relay
                ? await dialByKey(relay, cancel.signal)
                : await hedged((signal, hurry) => dialByKey(null, signal, hurry), DHT_HEDGE_MS, cancel.signal);
              return { port: wsFramePort(dialled.ws, dialled.socket), peer: dialled.peer, path: dialled.path(), relay };
            } catch (error) {
              if (relay) attempts.push({ path: 'relay', target: relay, error: error as Error, timeoutMs });
              else attempts.push({ path: 'dht', target: key, error: error as Error, timeoutMs: DIAL_TIMEOUT_MS });
              const step = nextDhtStep(error, attempt, deadline - Date.now(), relay, relays);
              if (step.kind === 'give up') throw new AttemptsRecorded();
              relay = step.kind === 'relay' ? step.relay : relay;
            }
          }
        })
        .catch((error: Error) => {
          if (!(error instanceof AttemptsRecorded))
            attempts.push({ path: 'dht', target: key, error, timeoutMs: DIAL_TIMEOUT_MS });
          throw error;
        }),
    );
  }
  if (tries.length === 0)
    throw new UnreachableError([
      {
        path: target.dhtKey ? 'dht' : 'address',
        target: target.dhtKey ?? '',
        error: new Error(target.dhtKey ? 'this installation is not on the DHT' : 'no address to dial'),
        timeoutMs: 0,
      },
    ]);
  try {
    return await Promise.any(tries);
  } catch {
    // Said in the order they were tried: the address, then the DHT.
    throw new UnreachableError(
      attempts
        .filter((a) => !a.error.message.startsWith('cancelled'))
        .filter((a, i, all) => !isRetriedHolepunch(a, all.slice(0, i)))
        .sort((a, b) => pathOrder[a.path] - pathOrder[b.path]),
    );
  } finally {
    cancel.abort();
  }
}

/** Dials an address over TLS, or over the port network when there is one; the certificate is pinned either way. */
async function dialAddress(
  ways: ReachWays,
  address: string,
  fingerprint: string,
  signal: AbortSignal,
): Promise<{ port: FramePort; peer: PeerCertificate }> {
  const { identity, revision, ports } = ways;
  if (!ports) {
    const { ws, socket, peer } = await dialPeer(identity, address, fingerprint, {
      signal,
      timeoutMs: DIAL_TIMEOUT_MS,
      revision,
    });
    return { port: wsFramePort(ws, socket), peer };
  }
  const dialled = await ports.dial(identity, address, revision ?? PROTOCOL_REVISION, signal);
  if (dialled.peer.fingerprint !== fingerprint) {
    dialled.port.terminate();
    throw new FingerprintMismatch(fingerprint, dialled.peer.fingerprint);
  }
  return dialled;
}

/**
 * How long a dial through a relay has at least: both sides reach the relay and are paired
 * there, which can take longer than a direct dial's 8 s on a busy machine; hyperdht gives
 * up on a relay's pairing after 15 s itself.
 */
export const RELAY_DIAL_MS = 15_000;

/** A DHT dial whose failures are in the attempts already. */
class AttemptsRecorded extends Error {
  constructor() {
    super('cancelled: recorded');
  }
}

/** Said in the order they were tried: the address, then the DHT, then relays. */
const pathOrder: Record<DialAttempt['path'], number> = { address: 0, dht: 1, relay: 2 };

/** A holepunch tried again says why it failed the first time: the second try only ran out of time. */
function isRetriedHolepunch(attempt: DialAttempt, earlier: DialAttempt[]): boolean {
  return attempt.path === 'dht' && earlier.some((a) => a.path === 'dht');
}

/** Resolves after `ms` or once `early` aborts, or rejects as cancelled when `signal` aborts first. */
function waitUnlessCancelled(ms: number, signal: AbortSignal, early: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('cancelled: another path won'));
    if (ms === 0 || early.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
      early.removeEventListener('abort', done);
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    const abort = () => {
      done();
      reject(new Error('cancelled: another path won'));
    };
    signal.addEventListener('abort', abort, { once: true });
    early.addEventListener(
      'abort',
      () => {
        done();
        resolve();
      },
      { once: true },
    );
  });
}
