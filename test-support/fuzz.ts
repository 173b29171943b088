// Inputs for the servers' fuzz tests: random bytes, random HTTP requests, random
// WebSocket frames and random JSON-RPC and role API bodies, from a seed the test
// prints, so a failing run can be repeated (PARLEY_FUZZ_SEED=…).
import { methods } from '../shared/api-contract';
import { seededRandom, wsFrame } from './raw-http';

export class Fuzz {
  readonly seed: number;
  private readonly next: () => number;

  constructor(seed = Number(process.env.PARLEY_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31))) {
    this.seed = seed;
    this.next = seededRandom(seed);
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  bytes(max: number): Buffer {
    const out = Buffer.alloc(this.int(max + 1));
    for (let i = 0; i < out.length; i++) out[i] = this.int(256);
    return out;
  }

  /** Text with the characters that break parsers: controls, lone surrogates, escapes, separators. */
  text(max = 40): string {
    const alphabet = [
      'a',
      'Z',
      '0',
      '/',
      '%',
      '%2F',
      '%00',
      '%E0%A4%A',
      '..',
      '\\',
      ':',
      '?',
      '#',
      '&',
      '=',
      ' ',
      '\t',
      '\r\n',
      '\n',
      '\u0000',
      '\u001b',
      '\u007f',
      '\u0085',
      '\u202e',
      '\ud800',
      '\uffff',
      '😀',
      '"',
      "'",
      '{',
      '}',
      '[',
      ']',
    ];
    let out = '';
    for (let i = this.int(max); i > 0; i--) out += this.pick(alphabet);
    return out;
  }

  /** A JSON value of any shape, nested a little. */
  junk(depth = 0): unknown {
    const leaves: unknown[] = [
      null,
      true,
      false,
      0,
      -1,
      1,
      1.5,
      2 ** 31,
      2 ** 53 + 2,
      -(2 ** 63),
      1e308,
      '',
      'x',
      'assistant',
      'alice/assistant',
      '../../etc/passwd',
      'a'.repeat(300),
      '\u0000',
      '__proto__',
      'constructor',
      'toString',
    ];
    if (depth > 2 || this.chance(0.6)) return this.chance(0.3) ? this.text() : this.pick(leaves);
    if (this.chance(0.5)) return Array.from({ length: this.int(4) }, () => this.junk(depth + 1));
    const keys = [
      'id',
      'name',
      'text',
      'token',
      'roles',
      'agent',
      'adapter',
      'command',
      'env',
      'cwd',
      'kind',
      'root',
      '__proto__',
      'limit',
    ];
    const object: Record<string, unknown> = {};
    for (let i = this.int(4); i > 0; i--) object[this.pick(keys)] = this.junk(depth + 1);
    return object;
  }

  /** One HTTP/1.1 request, well-formed or not. */
  httpRequest(host: string): Buffer {
    const method = this.pick([
      'GET',
      'GET',
      'HEAD',
      'POST',
      'PUT',
      'DELETE',
      'OPTIONS',
      'CONNECT',
      'TRACE',
      'BREW',
      '',
    ]);
    const target = this.pick([
      '/',
      '/api',
      '/index.html',
      '/assets/x.js',
      '/%',
      '/%E0%A4%A',
      '/..%2F..%2Fpackage.json',
      '/%2e%2e/%2e%2e/',
      `/${this.text(20)}`,
      '*',
      'http://evil.example/',
      '/' + 'a'.repeat(this.int(20_000)),
    ]);
    const headers: string[] = [];
    if (this.chance(0.8))
      headers.push(`Host: ${this.pick([host, 'evil.example', '', '[::1', `${host}:${host}`, this.text(10)])}`);
    if (this.chance(0.3)) headers.push('Upgrade: websocket', 'Connection: Upgrade');
    if (this.chance(0.3))
      headers.push(`Sec-WebSocket-Key: ${this.pick(['dGhlIHNhbXBsZSBub25jZQ==', '', this.text(24)])}`);
    if (this.chance(0.3)) headers.push(`Sec-WebSocket-Version: ${this.pick(['13', '8', '', '99999999999'])}`);
    if (this.chance(0.3))
      headers.push(
        `Origin: ${this.pick(['null', 'http://[', `http://${host}`, 'http://evil.example', this.text(12)])}`,
      );
    if (this.chance(0.2))
      headers.push(`Content-Length: ${this.pick(['0', '5', '-1', '99999999999999999999', 'x', '1, 2'])}`);
    if (this.chance(0.2)) headers.push(`Transfer-Encoding: ${this.pick(['chunked', 'gzip, chunked', 'x'])}`);
    for (let i = this.int(3); i > 0; i--) headers.push(`${this.text(8) || 'X'}: ${this.text(20)}`);
    if (this.chance(0.05)) headers.push(`X-Big: ${'b'.repeat(70_000)}`);
    const version = this.pick(['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9', '']);
    const head = `${method} ${target} ${version}\r\n${headers.join('\r\n')}\r\n\r\n`;
    const body = this.chance(0.3) ? this.bytes(200) : Buffer.alloc(0);
    const whole = Buffer.concat([Buffer.from(head, 'latin1'), body]);
    // Sometimes cut short: a request that never ends.
    return this.chance(0.15) ? whole.subarray(0, this.int(whole.length)) : whole;
  }

  /** One WebSocket frame of any opcode, bits, masking and length. */
  wsFrame(payload?: Buffer | string): Buffer {
    const opcode = this.chance(0.6) ? this.pick([1, 2, 8, 9, 10, 0]) : this.int(16);
    const data = payload ?? (this.chance(0.5) ? this.bytes(64) : JSON.stringify(this.junk()));
    const frame = wsFrame({
      opcode,
      payload: data,
      fin: this.chance(0.85),
      rsv: this.chance(0.1) ? this.int(8) : 0,
      mask: this.chance(0.95),
      declaredLength: this.chance(0.05) ? this.pick([0, 125, 126, 65535, 65536, 2 ** 32, 2 ** 53 - 1]) : undefined,
    });
    return this.chance(0.05) ? frame.subarray(0, this.int(frame.length)) : frame;
  }

  /** A call of a real method (mostly) with params of any shape. */
  rpcCall(): { method: string; params: unknown } {
    const names = Object.keys(methods);
    const method = this.chance(0.95)
      ? this.pick(names)
      : this.pick(['', 'x', '__proto__', 'constructor', this.text(10)]);
    return { method, params: this.junk() };
  }

  /** A JSON-RPC message: mostly real method names with params of any shape. */
  rpcMessage(id: number): string {
    const names = Object.keys(methods);
    const method = this.chance(0.9)
      ? this.pick(names)
      : this.pick(['', 'x', '__proto__', 'constructor', this.text(10)]);
    const message: Record<string, unknown> = { jsonrpc: '2.0', id, method, params: this.junk() };
    if (this.chance(0.1)) message.jsonrpc = this.junk();
    if (this.chance(0.1)) message.id = this.junk();
    if (this.chance(0.05)) return JSON.stringify(message).slice(0, this.int(60));
    return JSON.stringify(message);
  }
}

/** Runs `task` for 0…count-1, `width` at a time. */
export async function inParallel(count: number, width: number, task: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await task(next++);
    }),
  );
}
