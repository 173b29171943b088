// The one handshake of a link, for both sides. The dialler says hello first; the
// listener waits for it, decides who the peer is (a known connection, or a stranger
// bringing an invitation) and only then answers, so a stranger without one learns
// nothing. Both refuse a peer speaking another protocol: there is no fallback.
import { isStorageFailure } from '../store/storage-errors';
import type { PeerLink } from './peer-link';
import { CloseCode, PROTOCOL_VERSION, type HelloFrame } from './wire';

/** Who the peer is, once its hello is read: its connection here, or why it is refused. */
export type Admission = { connectionId: number } | { refuse: { code: number; reason: string } };

export interface HandshakeSide {
  side: 'dialler' | 'listener';
  /** Our hello (the dialler's may carry an invitation). */
  hello: HelloFrame;
  /** Decides on the peer's hello, which already speaks our protocol. */
  admit(theirs: HelloFrame): Admission;
}

export class HandshakeError extends Error {
  constructor(
    readonly kind: 'protocol' | 'refused' | 'closed',
    message: string,
  ) {
    super(message);
    this.name = 'HandshakeError';
  }
}

export function protocolMismatch(protocol: number): string {
  return `speaks protocol ${protocol}, and this Parley speaks only protocol ${PROTOCOL_VERSION} ("thread"); both sides must run the same version`;
}

/**
 * Runs the handshake on a link in `awaiting-hello`; resolves with the connection the
 * link belongs to and the peer's hello, the link in `hello-received` (open it next).
 * Rejects with a HandshakeError, the link closed with the code that says why.
 */
export async function handshake(
  link: PeerLink,
  ours: HandshakeSide,
): Promise<{ connectionId: number; hello: HelloFrame }> {
  if (ours.side === 'dialler') link.send(ours.hello);
  let theirs: HelloFrame;
  try {
    theirs = await link.hello();
  } catch (error) {
    throw new HandshakeError('closed', (error as Error).message.replace(/^the peer closed the connection: /, ''));
  }
  if (theirs.protocol !== PROTOCOL_VERSION) {
    link.close(
      CloseCode.wrongProtocol,
      `this Parley speaks only protocol ${PROTOCOL_VERSION} ("thread"); you sent ${theirs.protocol}`,
    );
    throw new HandshakeError('protocol', protocolMismatch(theirs.protocol));
  }
  let admission: Admission;
  try {
    admission = ours.admit(theirs);
  } catch (error) {
    // Deciding wrote nothing (a full disk, say): the peer is asked to come back, not refused.
    link.close(
      isStorageFailure(error) ? CloseCode.tryAgainLater : CloseCode.protocolError,
      isStorageFailure(error) ? 'try again later' : 'handshake failed',
    );
    throw error;
  }
  if ('refuse' in admission) {
    link.close(admission.refuse.code, admission.refuse.reason);
    throw new HandshakeError('refused', admission.refuse.reason);
  }
  if (ours.side === 'listener') link.send(ours.hello);
  return { connectionId: admission.connectionId, hello: theirs };
}
