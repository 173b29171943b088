// `parley serve`: one installation, headless. Serves the built UI and the app API on
// loopback, writes DATA/serve.json (0600) and prints the UI address with the owner's
// sign-in token in the fragment, which never reaches the server's logs.
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { attachApiSocket } from './api/ws-transport';
import { openInstallation, type Installation } from './installation';
import { log } from './log';
import { assertBuilt, distPaths } from './paths';

const port = z.coerce.number().int().min(0).max(65535);
const serveArgs = z.strictObject({
  data: z.string().min(1).default(path.join(os.homedir(), '.parley')),
  name: z
    .string()
    .trim()
    .min(1)
    .max(80)
    .regex(/^[^\s/]+$/, 'must be one word without "/" (it is how peers address you: NAME/ROLE)')
    .optional(),
  host: z.string().min(1).default('127.0.0.1'),
  'ui-port': port.default(0),
  'peer-port': port.default(0),
});
export type ServeOptions = z.infer<typeof serveArgs>;

export interface ServeInfo {
  ui: string;
  api: string;
  peer: string | null;
  roleApi: string;
  token: string;
  pid: number;
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

const securityHeaders = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

function serveStatic(req: http.IncomingMessage, res: http.ServerResponse): void {
  const root = distPaths.renderer;
  const url = new URL(req.url ?? '/', 'http://localhost');
  let file = path.normalize(path.join(root, decodeURIComponent(url.pathname)));
  if (!file.startsWith(root)) {
    res.writeHead(403).end();
    return;
  }
  if (!existsSync(file) || statSync(file).isDirectory()) file = path.join(root, 'index.html');
  if (!existsSync(file)) {
    res
      .writeHead(503, { 'content-type': 'text/plain; charset=utf-8' })
      .end('The Parley UI is not built: run `npm run build`.\n');
    return;
  }
  res.writeHead(200, {
    ...securityHeaders,
    'content-type': contentTypes[path.extname(file)] ?? 'application/octet-stream',
    'cache-control': file.endsWith('index.html') ? 'no-cache' : 'max-age=3600',
  });
  res.end(readFileSync(file));
}

export interface RunningServer {
  info: ServeInfo;
  installation: Installation;
  close(): Promise<void>;
}

const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host);

/** Starts one headless installation; used by the CLI, the demo and tests. */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  assertBuilt();
  const installation = await openInstallation({
    dataDir: options.data,
    name: options.name,
    // The flags decide; Settings shows them and cannot change them (docs/architecture.md).
    peers: { kind: 'fixed', listenHost: options.host, port: options['peer-port'] },
  });
  const server = http.createServer(serveStatic);
  attachApiSocket(server, installation);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options['ui-port'], options.host, () => resolve());
  });
  const address = server.address() as { port: number };
  const base = `http://${urlHost(options.host)}:${address.port}/`;
  const info: ServeInfo = {
    ui: base,
    api: `ws://${urlHost(options.host)}:${address.port}/api`,
    peer: installation.peerAddress ? `wss://${installation.peerAddress}` : null,
    roleApi: installation.roleApiSocket,
    token: installation.issueOwnerToken('serve'),
    pid: process.pid,
  };
  const infoFile = path.join(installation.dataDir, 'serve.json');
  rmSync(infoFile, { force: true });
  writeFileSync(infoFile, JSON.stringify(info, null, 2) + '\n', { mode: 0o600 });
  return {
    info,
    installation,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await installation.close();
      rmSync(infoFile, { force: true });
    },
  };
}

export async function serveCommand(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      data: { type: 'string' },
      name: { type: 'string' },
      host: { type: 'string' },
      'ui-port': { type: 'string' },
      'peer-port': { type: 'string' },
    },
  });
  const parsed = serveArgs.safeParse(values);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `--${issue.path.join('.')}: ${issue.message}`).join('; ');
    process.stderr.write(`parley serve: ${problems}\n`);
    process.exit(2);
  }
  const running = await startServer(parsed.data);
  process.stdout.write(
    `Parley "${running.installation.name}" is running: ${running.info.ui}#token=${running.info.token}\n`,
  );
  const firstRun = running.installation.firstRun;
  if (firstRun) process.stdout.write(`${firstRun.message}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    void running.close().then(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
