// The stand-in's `app`: ready, paths, command-line switches, the single-instance lock,
// the quit sequence and the badge, as Electron documents them. What it fakes: the
// single-instance lock is a lock file plus a Unix socket in the temp folder (Electron
// on Linux uses much the same); there is no dock, no jump list and no real relaunch.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { preventable, push, records } from './state';

function findAppPath(): string {
  // Electron's app path is the folder it was started on; here, the package above the entry script.
  let dir = path.dirname(path.resolve(process.argv[1] ?? '.'));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

const appPath = findAppPath();
const pkg = JSON.parse(readFileSync(path.join(appPath, 'package.json'), 'utf8')) as {
  name?: string;
  productName?: string;
  version?: string;
};

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface WindowRegistry {
  /** Closes every window as app.quit() does; false when one refused to close. */
  closeAll(): boolean;
}

class App extends EventEmitter {
  readonly isPackaged = false;
  readonly commandLine = {
    getSwitchValue: (name: string): string => {
      const prefix = `--${name}=`;
      const found = process.argv.find((arg) => arg.startsWith(prefix));
      return found === undefined ? '' : found.slice(prefix.length);
    },
    hasSwitch: (name: string): boolean =>
      process.argv.some((arg) => arg === `--${name}` || arg.startsWith(`--${name}=`)),
  };
  private ready = false;
  private readonly readyPromise: Promise<void>;
  private readonly paths = new Map<string, string>();
  private quitting = false;
  private lock: { file: string; socket: string; server: net.Server } | null = null;
  private forwarding: Promise<void> = Promise.resolve();
  windows: WindowRegistry | null = null;

  constructor() {
    super();
    // Electron is ready once the main script's first run is over.
    this.readyPromise = new Promise((resolve) =>
      setImmediate(() => {
        this.emit('will-finish-launching');
        this.ready = true;
        this.emit('ready', preventable(), {});
        resolve();
      }),
    );
  }

  whenReady(): Promise<void> {
    return this.readyPromise;
  }
  isReady(): boolean {
    return this.ready;
  }
  getName(): string {
    return pkg.productName ?? pkg.name ?? 'Electron';
  }
  getVersion(): string {
    return pkg.version ?? '0.0.0';
  }
  getAppPath(): string {
    return appPath;
  }

  getPath(name: string): string {
    const set = this.paths.get(name);
    if (set) return set;
    const config = process.env.XDG_CONFIG_HOME ?? path.join(os.homedir(), '.config');
    switch (name) {
      case 'home':
        return os.homedir();
      case 'appData':
        return config;
      case 'userData':
        return path.join(config, this.getName());
      case 'temp':
        return os.tmpdir();
      case 'exe':
        return process.execPath;
      case 'logs':
        return path.join(this.getPath('userData'), 'logs');
      default:
        throw new Error(`Failed to get '${name}' path`);
    }
  }
  setPath(name: string, value: string): void {
    this.paths.set(name, value);
  }

  requestSingleInstanceLock(): boolean {
    if (this.lock) return true;
    const dir = this.getPath('userData');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'SingletonLock');
    const socket = path.join(
      os.tmpdir(),
      `electron-stand-in-${createHash('sha256').update(dir).digest('hex').slice(0, 16)}.sock`,
    );
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(file, String(process.pid), { flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const holder = Number(readFileSync(file, 'utf8'));
        if (Number.isInteger(holder) && holder > 0 && alive(holder)) {
          this.forwardToFirstInstance(socket);
          return false;
        }
        rmSync(file, { force: true }); // left by a process that died
        continue;
      }
      rmSync(socket, { force: true });
      const server = net.createServer((connection) => {
        let data = '';
        connection.setEncoding('utf8');
        connection.on('data', (chunk: string) => (data += chunk));
        connection.on('end', () => {
          try {
            const { argv, cwd } = JSON.parse(data) as { argv: string[]; cwd: string };
            this.emit('second-instance', preventable(), argv, cwd, {});
          } catch {
            // not one of ours
          }
        });
      });
      server.listen(socket);
      server.unref();
      this.lock = { file, socket, server };
      return true;
    }
    return false;
  }

  hasSingleInstanceLock(): boolean {
    return this.lock !== null;
  }

  releaseSingleInstanceLock(): void {
    if (!this.lock) return;
    this.lock.server.close();
    rmSync(this.lock.socket, { force: true });
    rmSync(this.lock.file, { force: true });
    this.lock = null;
  }

  /** Electron hands a second instance's argv to the first before requestSingleInstanceLock returns. */
  private forwardToFirstInstance(socket: string): void {
    this.forwarding = new Promise((resolve) => {
      const connection = net.connect(socket, () =>
        connection.end(JSON.stringify({ argv: process.argv, cwd: process.cwd() })),
      );
      connection.on('close', () => resolve());
      connection.on('error', () => resolve());
    });
  }

  setAsDefaultProtocolClient(protocol: string): boolean {
    records.defaultProtocolClients.push(protocol);
    return true;
  }
  setAppUserModelId(_id: string): void {}
  setBadgeCount(count?: number): boolean {
    records.badgeCount = count ?? 0;
    push({ push: 'badge', count: records.badgeCount });
    return true;
  }
  getBadgeCount(): number {
    return records.badgeCount;
  }
  focus(): void {}

  /** before-quit, close every window, will-quit, quit; any of the first three can be prevented. */
  quit(): void {
    if (this.quitting) return;
    this.quitting = true;
    try {
      const before = preventable();
      this.emit('before-quit', before);
      if (before.defaultPrevented) return;
      if (this.windows && !this.windows.closeAll()) return;
      const will = preventable();
      this.emit('will-quit', will);
      if (will.defaultPrevented) return;
      this.emit('quit', preventable(), 0);
      this.terminate(0);
    } finally {
      this.quitting = false;
    }
  }

  get isQuitting(): boolean {
    return this.quitting;
  }

  /** Ends the process at once, without the quit events. */
  exit(code = 0): void {
    this.terminate(code);
  }

  private terminate(code: number): void {
    this.releaseSingleInstanceLock();
    void this.forwarding.then(() => process.exit(code));
  }
}

export const app = new App();
