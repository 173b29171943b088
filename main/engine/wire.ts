// Wire protocol 2 ("thread"): JSON frames, one per WebSocket message (several in one from
// revision 3), validated by schema and capped in size. Nothing about an agent conversation's root
// crosses it; a text names only its thread ID, sequence number and the two roles.
//
// Version rules. The hello's protocol number changes only when a frame an older peer
// knows would mean something else, or a frame every peer must understand is added:
// peers of different numbers refuse each other. Frames a peer can go without are
// added as a *revision* of protocol 2 instead, agreed before the first frame as the
// WebSocket subprotocol (an older peer never sees a frame it does not know: peers
// from before revisions close the link on one). Revision 1 adds `turn`. Revision 2 adds
// `turn-ack` (a `turn` is sent again until acknowledged) and the `relayed` state,
// `withdraw`, `noted`, `status`, the `declined` reason of `reject`, and `reach`.
// Revision 3 adds no frame: a WebSocket message may carry several frames as a JSON array
// (a commit's texts, or its acks, in one message rather than one message each).
import { z } from 'zod';
import { MAX_ROLE_NAME_CHARS, ROLE_NAME_PATTERN } from '../../shared/role-name';

export const PROTOCOL_VERSION = 2;
/** The newest revision of protocol 2 this Parley speaks (see the version rules above). */
export const PROTOCOL_REVISION = 3;
/** The revision from which a message may carry several frames, as a JSON array. */
export const BATCH_REVISION = 3;
/** Most frames one message carries: bounds the work a single message can ask for. */
export const MAX_FRAMES_PER_MESSAGE = 4096;
/** Largest frame accepted; a text body is capped well below it. */
export const MAX_FRAME_BYTES = 256 * 1024;
export const MAX_TEXT_CHARS = 100_000;
export const WS_PATH = '/parley';

/** Close codes, in the private range, each with a reason people can read. */
export const CloseCode = {
  normal: 1000,
  protocolError: 1002,
  tooBig: 1009,
  /** This side could not record what came (its disk is full): the peer sends it again on the next link. */
  tryAgainLater: 1013,
  unknownCertificate: 4001,
  wrongProtocol: 4002,
  revoked: 4003,
  badInvitation: 4004,
  duplicate: 4005,
  shuttingDown: 4006,
} as const;

const ROLE_NAME = ROLE_NAME_PATTERN;
const MAX_ROLE_CHARS = MAX_ROLE_NAME_CHARS;
const THREAD_ID = /^[A-Za-z0-9_-]{16,64}$/;

const roleName = z.string().regex(ROLE_NAME).max(MAX_ROLE_CHARS);
const threadId = z.string().regex(THREAD_ID);
const seq = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

export const rejectReasons = ['thread', 'roles', 'role', 'paused', 'queue', 'revoke', 'declined'] as const;
export type RejectReason = (typeof rejectReasons)[number];
/** Revision 2: a person there declined a text it had acked (held for approval); never sent to an older peer. */
export const DECLINED_REVISION = 2;
/** What a `noted` frame confirms: a withdrawal, or a `declined` rejection. */
export const notedKinds = ['withdraw', 'declined'] as const;

/**
 * What a peer's agent is doing with our texts of a thread: a turn took them (`working`),
 * a person there (or its time limit) stopped that turn (`stopped`), it failed
 * (`failed`), or it ended without answering (`ended`). Nothing more: not who, not why.
 */
export const turnStates = ['working', 'stopped', 'failed', 'ended', 'relayed'] as const;
export type TurnState = (typeof turnStates)[number];
/**
 * The revision each state came with: `relayed` (revision 2) says the turn ended while it
 * waits on asks of its own, naming them as PEER/ROLE; the answer, or the end, comes later.
 */
export const turnStateRevision: Record<TurnState, number> = {
  working: 1,
  stopped: 1,
  failed: 1,
  ended: 1,
  relayed: 2,
};
/** How many PEER/ROLE a `relayed` state names at most. */
export const MAX_RELAYED_ON = 16;

export const helloFrame = z.strictObject({
  type: z.literal('hello'),
  protocol: z.number().int(),
  name: z.string().min(1).max(80),
  /** Where this installation can be dialled, host:port; the peer stores it. */
  address: z.string().max(300).nullable(),
  /** Present once, when accepting an invitation. */
  invitation: z.string().min(16).max(200).optional(),
});

export const frameSchema = z.discriminatedUnion('type', [
  helloFrame,
  z.strictObject({
    type: z.literal('roles'),
    roles: z.array(z.strictObject({ name: roleName, description: z.string().max(2000) })).max(1000),
  }),
  z.strictObject({
    type: z.literal('text'),
    thread: threadId,
    seq,
    from: roleName,
    to: roleName,
    body: z.string().min(1).max(MAX_TEXT_CHARS),
  }),
  z.strictObject({ type: z.literal('ack'), thread: threadId, seq }),
  z.strictObject({ type: z.literal('reject'), thread: threadId, seq, reason: z.enum(rejectReasons) }),
  z.strictObject({ type: z.literal('revoke') }),
  /** Revision 1: the state of the turn that took the texts up to `seq` of a thread the receiver started. */
  z.strictObject({
    type: z.literal('turn'),
    thread: threadId,
    seq,
    state: z.enum(turnStates),
    /** Revision 2, with `relayed`: whom the turn waits on, PEER/ROLE as the sender names them. */
    on: z.array(z.string().min(3).max(100)).max(MAX_RELAYED_ON).optional(),
  }),
  /** Revision 2: the `turn` of that thread, seq and state is recorded; the sender stops sending it again. */
  z.strictObject({ type: z.literal('turn-ack'), thread: threadId, seq, state: z.enum(turnStates) }),
  /** Revision 2: the asker takes back its texts up to `seq` of a thread it started; sent until `noted`. */
  z.strictObject({ type: z.literal('withdraw'), thread: threadId, seq }),
  /** Revision 2: this side has recorded the peer's withdrawal or `declined` rejection; it need not send it again. */
  z.strictObject({ type: z.literal('noted'), thread: threadId, seq, of: z.enum(notedKinds) }),
  /** Revision 2: whether this side has paused the connection; sent on every link and on each change. */
  z.strictObject({ type: z.literal('status'), paused: z.boolean() }),
  /** Revision 2: where the sender is reached besides its address: its DHT key, and relays it uses. */
  z.strictObject({
    type: z.literal('reach'),
    dht: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable(),
    address: z.string().max(300).nullable(),
    relays: z.array(z.string().regex(/^[0-9a-f]{64}$/)).max(8),
  }),
]);
export type Frame = z.infer<typeof frameSchema>;
export type HelloFrame = z.infer<typeof helloFrame>;
export type TextFrame = Extract<Frame, { type: 'text' }>;
export type AckFrame = Extract<Frame, { type: 'ack' }>;
export type TurnFrame = Extract<Frame, { type: 'turn' }>;
export type TurnAckFrame = Extract<Frame, { type: 'turn-ack' }>;
export type WithdrawFrame = Extract<Frame, { type: 'withdraw' }>;
export type NotedFrame = Extract<Frame, { type: 'noted' }>;
export type ReachFrame = Extract<Frame, { type: 'reach' }>;

/** The revision of protocol 2 each frame came with: it goes only on a link that agreed to that revision. */
export const frameRevision: Record<Frame['type'], number> = {
  hello: 0,
  roles: 0,
  text: 0,
  ack: 0,
  reject: 0,
  revoke: 0,
  turn: 1,
  'turn-ack': 2,
  withdraw: 2,
  noted: 2,
  status: 2,
  reach: 2,
};

/** The revision a frame needs: its type's, or for a `turn` its state's when that came later. */
export function revisionNeeded(frame: Frame): number {
  return frame.type === 'turn'
    ? Math.max(frameRevision.turn, turnStateRevision[frame.state], frame.on ? 2 : 0)
    : frameRevision[frame.type];
}

/** The WebSocket subprotocol that names a revision of protocol 2: `parley.2`, `parley.2.1`, … */
export function subprotocol(revision: number): string {
  return revision === 0 ? `parley.${PROTOCOL_VERSION}` : `parley.${PROTOCOL_VERSION}.${revision}`;
}

/**
 * What a dialler offers: every revision it speaks, the oldest first, because a listener
 * from before revisions takes the first one offered (and so speaks revision 0).
 */
export function offeredSubprotocols(revision = PROTOCOL_REVISION): string[] {
  return Array.from({ length: revision + 1 }, (_, r) => subprotocol(r));
}

/** The revision a subprotocol names; '' (none chosen, or none offered: a peer from before revisions) is 0. */
export function revisionOf(protocol: string): number {
  const prefix = `${subprotocol(0)}.`;
  const rest = protocol.startsWith(prefix) ? protocol.slice(prefix.length) : '';
  return /^[1-9][0-9]{0,5}$/.test(rest) ? Number(rest) : 0;
}

/**
 * The listener's choice among the subprotocols a dialler offers: the newest revision of
 * protocol 2 both speak. False when it offers none of ours (the dialler then gives up).
 */
export function chooseSubprotocol(offered: ReadonlySet<string>, revision = PROTOCOL_REVISION): string | false {
  for (let r = revision; r >= 0; r--) if (offered.has(subprotocol(r))) return subprotocol(r);
  return false;
}

export class ProtocolError extends Error {
  constructor(
    readonly closeCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

/** Parses one frame; throws ProtocolError with the close code to use. */
export function decodeFrame(data: Buffer | string): Frame {
  return checkedFrame(parsedMessage(data));
}

/**
 * Parses one WebSocket message: a frame, or from revision 3 a JSON array of frames. Every
 * frame is checked before any is returned, so a message is taken whole or refused whole;
 * throws ProtocolError with the close code to use.
 */
export function decodeMessage(data: Buffer | string, revision: number): Frame[] {
  const json = parsedMessage(data);
  if (!Array.isArray(json)) return [checkedFrame(json)];
  if (revision < BATCH_REVISION)
    throw new ProtocolError(CloseCode.protocolError, `a message of several frames needs revision ${BATCH_REVISION}`);
  if (json.length === 0) throw new ProtocolError(CloseCode.protocolError, 'a message of no frames');
  if (json.length > MAX_FRAMES_PER_MESSAGE)
    throw new ProtocolError(CloseCode.protocolError, `a message of more than ${MAX_FRAMES_PER_MESSAGE} frames`);
  return json.map(checkedFrame);
}

function parsedMessage(data: Buffer | string): unknown {
  if (Buffer.byteLength(data) > MAX_FRAME_BYTES) throw new ProtocolError(CloseCode.tooBig, 'frame too large');
  try {
    return JSON.parse(data.toString()) as unknown;
  } catch {
    throw new ProtocolError(CloseCode.protocolError, 'frame is not JSON');
  }
}

function checkedFrame(json: unknown): Frame {
  const fast = hotFrame(json);
  if (fast) return fast;
  const parsed = frameSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ProtocolError(
      CloseCode.protocolError,
      `bad frame: ${issue?.path.join('.') || 'frame'} ${issue?.message ?? ''}`.trim(),
    );
  }
  return parsed.data;
}

const isSeq = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
const isRole = (value: unknown): value is string =>
  typeof value === 'string' && value.length <= MAX_ROLE_CHARS && ROLE_NAME.test(value);

/**
 * The two frames of every text, `text` and `ack`, checked by hand: the schema costs a
 * few per cent of each side's CPU on the hot path. It accepts only what
 * `frameSchema` accepts — exactly these keys, the same patterns and bounds — and
 * returns null for anything else, which the schema then decides on (wire.test.ts
 * checks both against each other). Exported for that test.
 */
export function hotFrame(json: unknown): Frame | null {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return null;
  const frame = json as Record<string, unknown>;
  const keys = Object.keys(frame).length;
  if (frame.type === 'ack') {
    if (keys !== 3 || !isSeq(frame.seq) || typeof frame.thread !== 'string' || !THREAD_ID.test(frame.thread))
      return null;
    return { type: 'ack', thread: frame.thread, seq: frame.seq };
  }
  if (frame.type === 'text') {
    const { thread, seq, from, to, body } = frame;
    if (
      keys !== 6 ||
      !isSeq(seq) ||
      typeof thread !== 'string' ||
      !THREAD_ID.test(thread) ||
      !isRole(from) ||
      !isRole(to) ||
      typeof body !== 'string' ||
      body.length < 1 ||
      body.length > MAX_TEXT_CHARS
    )
      return null;
    return { type: 'text', thread, seq, from, to, body };
  }
  return null;
}

export function encodeFrame(frame: Frame): string {
  return JSON.stringify(frame);
}

/** Frames already encoded, as one message of revision 3: one alone stays a frame. */
export function encodeMessage(encoded: readonly string[]): string {
  return encoded.length === 1 ? encoded[0]! : `[${encoded.join(',')}]`;
}

/** A close reason fits in 123 bytes. */
export function closeReason(text: string): string {
  const buf = Buffer.from(text);
  return buf.length <= 123
    ? text
    : buf
        .subarray(0, 120)
        .toString('utf8')
        .replace(/\uFFFD$/, '') + '...';
}
