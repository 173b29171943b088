// The hand-written decoder of the two hot frames (`text`, `ack`) against the schema:
// on every input it must say what the schema says — accept exactly what the schema
// accepts, with the same result, and leave everything else to it (`turn`, one per
// turn rather than per text, is the schema's alone). Then the revisions of protocol 2
// and how a link agrees on one.
import { describe, expect, it } from 'vitest';
import {
  chooseSubprotocol,
  BATCH_REVISION,
  decodeFrame,
  decodeMessage,
  encodeMessage,
  frameRevision,
  frameSchema,
  hotFrame,
  MAX_FRAMES_PER_MESSAGE,
  MAX_TEXT_CHARS,
  offeredSubprotocols,
  ProtocolError,
  PROTOCOL_REVISION,
  revisionNeeded,
  revisionOf,
  subprotocol,
  type Frame,
} from './wire';

/** A small seeded generator, so a failure can be run again. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)]!;
  /** Mostly an allowed value, sometimes a refused one. */
  const field = <T>([allowed, refused]: readonly [readonly T[], readonly T[]]): T =>
    next() < 0.85 ? pick(allowed) : pick(refused);
  return { next, pick, field };
}

/** Values each field may take: those the schema allows first, then those it refuses. */
const threads = [
  ['a'.repeat(16), 'A1_-'.repeat(16), 'x'.repeat(22)],
  ['a'.repeat(15), 'a'.repeat(65), 'bad thread id!!!!', 'ä'.repeat(20), '', 'abcdefghijklmnop\n'],
] as const;
const seqs = [
  [1, 2, 42, Number.MAX_SAFE_INTEGER],
  [Number.MAX_SAFE_INTEGER + 1, 0, -1, 1.5, -0, 1e300],
] as const;
const roles = [
  ['assistant', 'a', 'r2-d2_x', 'a'.repeat(40), '0day'],
  ['a'.repeat(41), 'Assistant', '-lead', '_x', '', 'a b', 'ré'],
] as const;
const bodies = [
  ['hi', 'x', 'ünïcödé 🎉', 'x'.repeat(MAX_TEXT_CHARS), '\u0000'],
  ['', 'x'.repeat(MAX_TEXT_CHARS + 1)],
] as const;
const turnStates = [
  ['working', 'stopped', 'failed', 'ended'],
  ['Working', 'done', '', 'answered'],
] as const;
const junk: unknown[] = [null, true, 0, 'str', [], {}, [1], { a: 1 }, 1.5];

function candidate(r: ReturnType<typeof random>): unknown {
  const kind = r.pick([
    'text',
    'ack',
    'text',
    'ack',
    'reject',
    'roles',
    'hello',
    'revoke',
    'turn',
    'other',
    'junk',
  ] as const);
  if (kind === 'junk') return r.pick(junk);
  const frame: Record<string, unknown> = { type: kind === 'other' ? r.pick(['TEXT', 'acks', '', 1]) : kind };
  if (kind === 'ack' || kind === 'text' || kind === 'reject' || kind === 'turn' || kind === 'other') {
    frame.thread = r.field(threads);
    frame.seq = r.field(seqs);
  }
  if (kind === 'text' || kind === 'other') {
    frame.from = r.field(roles);
    frame.to = r.field(roles);
    frame.body = r.field(bodies);
  }
  if (kind === 'reject') frame.reason = r.pick(['thread', 'queue', 'nope']);
  if (kind === 'turn') frame.state = r.field(turnStates);
  if (kind === 'roles') frame.roles = [{ name: r.field(roles), description: '' }];
  if (kind === 'hello') Object.assign(frame, { protocol: 2, name: 'bob', address: null });
  // Mutations: a field of another type, one missing, one too many.
  const keys = Object.keys(frame);
  const mutation = r.next();
  if (mutation < 0.15) frame[r.pick(keys)] = r.pick(junk);
  else if (mutation < 0.25) delete frame[r.pick(keys)];
  else if (mutation < 0.32) frame[r.pick(['extra', 'seq2', '__proto__', 'constructor'])] = r.pick(junk);
  // Through JSON, as frames arrive (this also gives `__proto__` as an own key).
  return JSON.parse(JSON.stringify(frame)) as unknown;
}

describe('the fast decoder of text and ack frames', () => {
  it('accepts exactly what the schema accepts, with the same result, on 20,000 generated frames', () => {
    const r = random(20_260_101);
    let hot = 0;
    let schemaOnly = 0;
    let turns = 0;
    for (let i = 0; i < 20_000; i++) {
      const json = candidate(r);
      const fast = hotFrame(json);
      const parsed = frameSchema.safeParse(json);
      const isHotType =
        typeof json === 'object' &&
        json !== null &&
        ((json as { type?: unknown }).type === 'text' || (json as { type?: unknown }).type === 'ack');
      if (fast !== null) {
        hot++;
        expect(parsed.success, JSON.stringify(json).slice(0, 200)).toBe(true);
        expect(fast).toEqual(parsed.data);
      } else if (isHotType) {
        // Null for a text or an ack means the schema refuses it too.
        expect(parsed.success, JSON.stringify(json).slice(0, 200)).toBe(false);
      } else if (parsed.success) {
        schemaOnly++;
        if (parsed.data.type === 'turn') turns++;
      }
    }
    // The generator reaches both sides of every check.
    expect(hot).toBeGreaterThan(2_000);
    expect(schemaOnly).toBeGreaterThan(100);
    // `turn` frames reach the schema, which takes the valid ones.
    expect(turns).toBeGreaterThan(200);
  });

  it('gives decodeFrame the same answer whichever path decides', () => {
    const text = { type: 'text', thread: 'a'.repeat(16), seq: 1, from: 'a', to: 'b', body: 'hi' };
    expect(hotFrame(text)).toEqual(text);
    expect(decodeFrame(JSON.stringify(text))).toEqual(text);
    const reordered = { body: 'hi', to: 'b', from: 'a', seq: 1, thread: 'a'.repeat(16), type: 'text' };
    expect(hotFrame(reordered)).toEqual(text);
    expect(() => decodeFrame(JSON.stringify({ ...text, seq: 0 }))).toThrow(/bad frame: seq/);
  });
});

describe('revisions of protocol 2', () => {
  it('names each revision as a WebSocket subprotocol and reads it back; anything else is revision 0', () => {
    expect(offeredSubprotocols()).toEqual(['parley.2', 'parley.2.1', 'parley.2.2', 'parley.2.3']);
    expect(offeredSubprotocols(0)).toEqual(['parley.2']);
    const table: Array<[string, number]> = [
      ['parley.2.1', 1],
      ['parley.2', 0],
      // None chosen: the listener is from before revisions, or the dialler offered none.
      ['', 0],
      ['parley.2.7', 7],
      ['parley.3.1', 0],
      ['parley.2.01', 0],
      ['parley.2.', 0],
      ['parley.2.1x', 0],
      ['x-parley.2.1', 0],
    ];
    expect(table.map(([protocol]) => [protocol, revisionOf(protocol)])).toEqual(table);
    for (let r = 0; r <= PROTOCOL_REVISION; r++) expect(revisionOf(subprotocol(r))).toBe(r);
  });

  it('lets the listener choose the newest revision both speak', () => {
    const table: Array<[string[], number, string | false]> = [
      // A dialler of today, a listener of today.
      [['parley.2', 'parley.2.1', 'parley.2.2', 'parley.2.3'], 3, 'parley.2.3'],
      // A dialler of today, a listener of revision 2.
      [['parley.2', 'parley.2.1', 'parley.2.2', 'parley.2.3'], 2, 'parley.2.2'],
      // A dialler of revision 1, a listener of today.
      [['parley.2', 'parley.2.1'], 2, 'parley.2.1'],
      // A dialler and a listener of revision 1.
      [['parley.2', 'parley.2.1'], 1, 'parley.2.1'],
      // A dialler of today, a listener that speaks only revision 0.
      [['parley.2', 'parley.2.1'], 0, 'parley.2'],
      // A newer dialler: the listener takes what it knows.
      [['parley.2', 'parley.2.1', 'parley.2.2'], 1, 'parley.2.1'],
      [['parley.2'], 1, 'parley.2'],
      // Nothing of ours: refused (the dialler's WebSocket then fails).
      [['chat'], 1, false],
      [[], 1, false],
    ];
    for (const [offered, revision, chosen] of table)
      expect(chooseSubprotocol(new Set(offered), revision), offered.join(',')).toBe(chosen);
  });

  it('puts every frame of protocol 2 in revision 0 except the ones added since (revision 3 adds none)', () => {
    expect(Object.entries(frameRevision).filter(([, revision]) => revision > 0)).toEqual([
      ['turn', 1],
      ['turn-ack', 2],
      ['withdraw', 2],
      ['noted', 2],
      ['status', 2],
      ['reach', 2],
    ]);
    expect(Math.max(...Object.values(frameRevision))).toBe(2);
    expect(PROTOCOL_REVISION).toBe(BATCH_REVISION);
  });

  it('takes a message of several frames, as an array, only from revision 3, and then whole or not at all', () => {
    const thread = 'T'.repeat(22);
    const text = { type: 'text', thread, seq: 1, from: 'assistant', to: 'researcher', body: 'hi' };
    const ack = { type: 'ack', thread, seq: 1 };
    const turn = { type: 'turn', thread, seq: 1, state: 'working' };
    const message = (frames: unknown) => JSON.stringify(frames);
    const decode = (data: string, revision: number) => {
      try {
        return decodeMessage(data, revision).map((frame) => frame.type);
      } catch (error) {
        return (error as ProtocolError).message;
      }
    };
    const table: Array<[string, number, string[] | string]> = [
      [message(text), 3, ['text']],
      [message(text), 2, ['text']],
      [message([text, ack, turn]), 3, ['text', 'ack', 'turn']],
      [message([ack]), 3, ['ack']],
      [message([text, ack]), 2, 'a message of several frames needs revision 3'],
      [message([text, ack]), 0, 'a message of several frames needs revision 3'],
      [message([]), 3, 'a message of no frames'],
      // One bad frame refuses the message: none of it is taken.
      [message([text, { ...ack, seq: 0 }]), 3, 'bad frame: seq Too small: expected number to be >0'],
      [message([text, [ack]]), 3, 'bad frame: frame Invalid input: expected object, received array'],
      [message([text, 'ack']), 3, 'bad frame: frame Invalid input: expected object, received string'],
      [message(Array.from({ length: MAX_FRAMES_PER_MESSAGE + 1 }, () => ack)), 3, 'a message of more than 4096 frames'],
      ['[' + message(text), 3, 'frame is not JSON'],
    ];
    expect(table.map(([data, revision]) => [data, revision, decode(data, revision)])).toEqual(table);
    // What a link sends: one frame alone is itself, several are an array.
    expect(encodeMessage([message(ack)])).toBe(message(ack));
    expect(decodeMessage(encodeMessage([message(text), message(ack)]), 3)).toEqual([text, ack]);
  });

  it('sends `relayed`, and a turn that names whom it waits on, only to a peer of revision 2', () => {
    const thread = 'T'.repeat(22);
    const table: Array<[Frame, number]> = [
      [{ type: 'turn', thread, seq: 1, state: 'working' }, 1],
      [{ type: 'turn', thread, seq: 1, state: 'stopped' }, 1],
      [{ type: 'turn', thread, seq: 1, state: 'relayed', on: ['carol/researcher'] }, 2],
      [{ type: 'turn', thread, seq: 1, state: 'relayed' }, 2],
      [{ type: 'turn-ack', thread, seq: 1, state: 'ended' }, 2],
      [{ type: 'ack', thread, seq: 1 }, 0],
    ];
    expect(table.map(([frame]) => [frame, revisionNeeded(frame)])).toEqual(table);
    // A revision-1 peer's schema knows neither: it would close the link on them.
    expect(() => decodeFrame(JSON.stringify({ type: 'turn', thread, seq: 1, state: 'relayed', on: [''] }))).toThrow(
      ProtocolError,
    );
  });
});
