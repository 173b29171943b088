// The role API client used by the `parley` CLI (and `parley mcp`). Every agent action
// starts a process that loads this, so it speaks its one request of HTTP/1.1 on a plain
// socket: `node:http` costs a fifth of a bare `node` start here (its modules, the
// agent, the parser), for one POST to our own server that closes the connection after
// answering. No schema library either.
import net from 'node:net';
import { RoleApiError, type RoleApiResponse } from './errors';
import type { RoleApiCommand, RoleApiParams, RoleApiResult } from './protocol';

export interface RoleApiTarget {
  socketPath: string;
  token: string;
}

export class ConnectError extends Error {}

/** A token as the server reads it (`Bearer (\S+)`): visible ASCII, so it cannot break the request's head. */
const TOKEN = /^[\x21-\x7e]+$/;

/** One command, typed by the contract (protocol.ts); the answer is not validated here, where no zod is loaded. */
export function callRoleApi<C extends RoleApiCommand>(
  target: RoleApiTarget,
  command: C,
  body: RoleApiParams<C>,
): Promise<RoleApiResult<C>>;
/** A command whose params are built from what an agent gave (a model's tool call): the server validates them. */
export function callRoleApi<T = unknown>(target: RoleApiTarget, command: RoleApiCommand, body: object): Promise<T>;
export function callRoleApi<T>(target: RoleApiTarget, command: RoleApiCommand, body: object): Promise<T> {
  if (!TOKEN.test(target.token))
    return Promise.reject(
      new RoleApiError('unauthenticated', 'this token is not valid: PARLEY_TOKEN has spaces or control characters'),
    );
  const payload = Buffer.from(JSON.stringify(body), 'utf8');
  const head =
    `POST /v1/${command} HTTP/1.1\r\n` +
    'Host: parley\r\n' +
    `Authorization: Bearer ${target.token}\r\n` +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${payload.length}\r\n` +
    'Connection: close\r\n\r\n';
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    /** The answer's whole length once its head says (Content-Length); until then, check every chunk. */
    let expected = 0;
    let failure: NodeJS.ErrnoException | null = null;
    let settled = false;
    const socket = net.connect(target.socketPath);
    // An answer mostly arrives in one chunk: then there is nothing to join.
    const whole = () => (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    const settle = (closed: boolean) => {
      let answer: HttpAnswer | null;
      try {
        answer = readHttpAnswer(whole(), closed);
      } catch (error) {
        if (!closed) {
          // Malformed: nothing more will help. Say so once the connection is gone.
          socket.destroy();
          return;
        }
        const why = failure ? (failure.code ?? failure.message) : (error as Error).message;
        settled = true;
        reject(new ConnectError(`cannot reach Parley at ${target.socketPath}: ${why}`));
        return;
      }
      if (!answer) {
        if (expected === 0) expected = answerLength(whole()) ?? 0;
        return;
      }
      settled = true;
      // The whole answer is here: no need to wait for the server to close the connection.
      // Closing it waits a turn of the loop, so a CLI that exits on the answer never pays
      // for tearing the socket down (about half a millisecond of a 30 ms start).
      setImmediate(() => socket.destroy());
      let response: RoleApiResponse<T>;
      try {
        response = JSON.parse(answer.body.toString('utf8')) as RoleApiResponse<T>;
      } catch {
        reject(new RoleApiError('internal', `Parley answered with something that is not JSON (HTTP ${answer.status})`));
        return;
      }
      if (response.ok) resolve(response.result);
      else reject(new RoleApiError(response.error.code, response.error.message));
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (!settled && received >= expected) settle(false);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => (failure = error));
    // An answer that arrived whole counts even if the connection then broke.
    socket.on('close', () => {
      if (!settled) settle(true);
    });
    // Not end(): Node's HTTP server drops a request whose client half-closes before it
    // is answered. The server closes the connection once it has answered.
    socket.write(Buffer.concat([Buffer.from(head, 'latin1'), payload]));
  });
}

export interface HttpAnswer {
  status: number;
  body: Buffer;
}

/**
 * An HTTP/1.1 response read so far: the status and the body (by Content-Length, chunked,
 * or, once the server has closed the connection, everything after the head). Null while
 * it is still coming; throws on a malformed response, or a truncated one once `closed`.
 */
export function readHttpAnswer(bytes: Buffer, closed: boolean): HttpAnswer | null {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) {
    if (closed) throw new Error('the connection closed before it answered');
    return null;
  }
  const lines = bytes.toString('latin1', 0, end).split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0]!);
  if (!status) throw new Error(`not an HTTP response: ${lines[0]}`);
  const headers = headersOf(lines);
  const rest = bytes.subarray(end + 4);
  let body: Buffer | null;
  const transferEncoding = headers.get('transfer-encoding');
  if (transferEncoding !== undefined && /(^|,)\s*chunked\s*$/i.test(transferEncoding)) body = unchunk(rest);
  else if (headers.has('content-length')) {
    const length = Number(headers.get('content-length'));
    if (!Number.isSafeInteger(length) || length < 0) throw new Error('a bad Content-Length');
    body = rest.length >= length ? rest.subarray(0, length) : null;
  } else body = closed ? rest : null;
  if (body === null && closed) throw new Error('the connection closed before it answered');
  return body === null ? null : { status: Number(status[1]), body };
}

function headersOf(lines: string[]): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

/** The whole answer's length in bytes when its head is in and names a Content-Length. */
function answerLength(bytes: Buffer): number | null {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const length = Number(headersOf(bytes.toString('latin1', 0, end).split('\r\n')).get('content-length'));
  return Number.isSafeInteger(length) && length >= 0 ? end + 4 + length : null;
}

/** A chunked body, or null while its last chunk has not arrived. */
function unchunk(bytes: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) return null;
    const size = parseInt(bytes.toString('latin1', at, lineEnd).split(';')[0]!, 16);
    if (!Number.isSafeInteger(size) || size < 0) throw new Error('bad chunk size');
    if (size === 0) return Buffer.concat(parts);
    const start = lineEnd + 2;
    if (bytes.length < start + size + 2) return null;
    parts.push(bytes.subarray(start, start + size));
    at = start + size + 2;
  }
}
