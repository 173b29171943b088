// The hand-written decoder of the two hot frames (`text`, `ack`) against the schema:
// on every input it must say what the schema says — accept exactly what the schema
// accepts, with the same result, and leave everything else to it.
import { describe, expect, it } from 'vitest';
import { decodeFrame, frameSchema, hotFrame, MAX_TEXT_CHARS } from './wire';

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
const junk: unknown[] = [null, true, 0, 'str', [], {}, [1], { a: 1 }, 1.5];

function candidate(r: ReturnType<typeof random>): unknown {
  const kind = r.pick(['text', 'ack', 'text', 'ack', 'reject', 'roles', 'hello', 'revoke', 'other', 'junk'] as const);
  if (kind === 'junk') return r.pick(junk);
  const frame: Record<string, unknown> = { type: kind === 'other' ? r.pick(['TEXT', 'acks', '', 1]) : kind };
  if (kind === 'ack' || kind === 'text' || kind === 'reject' || kind === 'other') {
    frame.thread = r.field(threads);
    frame.seq = r.field(seqs);
  }
  if (kind === 'text' || kind === 'other') {
    frame.from = r.field(roles);
    frame.to = r.field(roles);
    frame.body = r.field(bodies);
  }
  if (kind === 'reject') frame.reason = r.pick(['thread', 'queue', 'nope']);
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
      } else if (parsed.success) schemaOnly++;
    }
    // The generator reaches both sides of every check.
    expect(hot).toBeGreaterThan(2_000);
    expect(schemaOnly).toBeGreaterThan(100);
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
