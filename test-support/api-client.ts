// A JSON-RPC client of the headless app API, for tests and the demo.
import WebSocket from 'ws';
import {
  ApiError,
  type AppEvent,
  type ErrorCode,
  type MethodName,
  type ParamsOf,
  type ResultOf,
} from '../shared/api-contract';

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export class ApiClient {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Set<(event: AppEvent) => void>();
  /** How the socket closed (the server's close code and reason), once it has. */
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(private readonly ws: WebSocket) {
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => resolve({ code, reason: reason.toString('utf8') })),
    );
    ws.on('message', (data) => {
      const message = JSON.parse((data as Buffer).toString('utf8')) as {
        id?: number;
        method?: string;
        params?: AppEvent;
        result?: unknown;
        error?: { message: string; data: { code: ErrorCode } };
      };
      if (message.method === 'event' && message.params) {
        for (const listener of this.listeners) listener(message.params);
        return;
      }
      const waiting = message.id !== undefined ? this.pending.get(message.id) : undefined;
      if (!waiting) return;
      this.pending.delete(message.id!);
      if (message.error) waiting.reject(new ApiError(message.error.data.code, message.error.message));
      else waiting.resolve(message.result);
    });
    ws.on('close', () => {
      for (const waiting of this.pending.values()) waiting.reject(new Error('socket closed'));
      this.pending.clear();
    });
  }

  static async connect(url: string, token?: string): Promise<ApiClient> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const client = new ApiClient(ws);
    if (token !== undefined) {
      try {
        await client.call('session.signIn', { token });
      } catch (error) {
        client.close();
        throw error;
      }
    }
    return client;
  }

  call<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    return this.raw(method, params) as Promise<ResultOf<M>>;
  }

  /** Sends anything, for tests of bad input. */
  raw(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    if (this.ws.readyState !== WebSocket.OPEN) return Promise.reject(new Error('socket closed'));
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  onEvent(listener: (event: AppEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when `check` returns a value, re-checking on every event (no polling sleeps). */
  async waitFor<T>(
    check: () => Promise<T | undefined | false | null>,
    timeoutMs = 15_000,
    what = 'condition',
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await check();
      if (value) return value;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(remaining, 1000));
        const off = this.onEvent(done);
        function done() {
          clearTimeout(timer);
          off();
          resolve();
        }
      });
    }
  }

  close(): void {
    this.ws.close();
  }
}
