// The tiny agent scripts the benchmark runs, and the UNIX socket they signal on.
// Both measurements of a pair (Parley vs bare spawn) run the very same script with the
// very same signal, so the only difference is what stands between "input committed"
// and "process has it".
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/**
 * echo-agent: connects to the bench's socket while it waits for stdin; the moment it
 * has the first full line of input (and the socket is up) it writes one byte, then
 * echoes the line on stdout and exits when stdin ends.
 */
const ECHO_AGENT = `import net from 'node:net';
const sock = net.connect(process.argv[2]);
let connected = false;
let line = null;
let sent = false;
function maybeSignal() {
  if (sent || !connected || line === null) return;
  sent = true;
  sock.end('1');
  process.stdout.write('echo: ' + line + '\\n');
}
sock.once('connect', () => { connected = true; maybeSignal(); });
let buffer = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  if (line !== null) return;
  buffer += chunk;
  const newline = buffer.indexOf('\\n');
  if (newline >= 0) { line = buffer.slice(0, newline); maybeSignal(); }
});
process.stdin.on('end', () => {
  if (line === null) { line = buffer; maybeSignal(); }
});
`;

/**
 * sleeper-agent: starts a child (\`sleep 30\`) in its own process group, so the turn is
 * a real tree, then reports both pids on the socket and sleeps. No SIGTERM handler:
 * default behaviour, it dies on SIGTERM.
 */
const SLEEPER_AGENT = `import net from 'node:net';
import { spawn } from 'node:child_process';
const sock = net.connect(process.argv[2]);
const child = spawn('sleep', ['30'], { stdio: 'ignore' });
let connected = false;
let spawned = false;
function maybeSignal() {
  if (!connected || !spawned) return;
  sock.end(JSON.stringify({ pid: process.pid, child: child.pid }) + '\\n');
}
sock.once('connect', () => { connected = true; maybeSignal(); });
child.once('spawn', () => { spawned = true; maybeSignal(); });
setTimeout(() => {}, 60_000);
`;

/**
 * holder-agent: hands its turn's environment (with PARLEY_TOKEN and PARLEY_API) to the
 * bench over the socket, then waits to be stopped, so its run token stays valid.
 */
const HOLDER_AGENT = `import net from 'node:net';
net.connect(process.argv[2]).end(JSON.stringify(process.env));
setTimeout(() => {}, 600_000);
`;

export interface AgentScripts {
  echo: string;
  sleeper: string;
  holder: string;
}

export function writeAgentScripts(dir: string): AgentScripts {
  const echo = path.join(dir, 'echo-agent.mjs');
  const sleeper = path.join(dir, 'sleeper-agent.mjs');
  writeFileSync(echo, ECHO_AGENT);
  const holder = path.join(dir, 'holder-agent.mjs');
  writeFileSync(sleeper, SLEEPER_AGENT);
  writeFileSync(holder, HOLDER_AGENT);
  return { echo, sleeper, holder };
}

export interface Signal {
  /** process.hrtime.bigint() when the first byte arrived. */
  at: bigint;
  /** Everything the agent wrote before closing its end. */
  text: string;
}

/**
 * The bench's listening socket. Measurements are strictly sequential, so the next
 * connection's signal belongs to whoever waits for it.
 */
export class SignalServer {
  private readonly server: net.Server;
  private readonly arrived: Signal[] = [];
  private waiter: ((signal: Signal) => void) | null = null;

  constructor(readonly socketPath: string) {
    this.server = net.createServer((socket) => {
      let at: bigint | null = null;
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        if (at === null) at = process.hrtime.bigint();
        text += chunk;
      });
      socket.on('error', () => {});
      socket.on('end', () => {
        socket.end();
        if (at === null) return;
        const signal = { at, text };
        if (this.waiter) {
          const waiter = this.waiter;
          this.waiter = null;
          waiter(signal);
        } else this.arrived.push(signal);
      });
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.socketPath, () => resolve());
    });
  }

  /** The next signal, failing after timeoutMs. */
  next(timeoutMs = 10_000): Promise<Signal> {
    const ready = this.arrived.shift();
    if (ready) return Promise.resolve(ready);
    if (this.waiter) throw new Error('already waiting for a signal');
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error(`no signal from the agent within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiter = (signal) => {
        clearTimeout(timer);
        resolve(signal);
      };
    });
  }

  /** Signals nobody waited for: a sign that a measurement got out of step. */
  strays(): number {
    return this.arrived.length;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
