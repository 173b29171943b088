// Where peers reach this installation, kept in step with the engine's listener. The
// desktop app's settings are its own (an owner changes them in Settings; the port it
// picked on first start is remembered in the database); `parley serve` takes them from
// its flags and does not change them at run time. Decisions are in ./peer-settings.ts.
import type { PeerNetworkStatus } from '../../shared/api-contract';
import type { ConnectionEngine } from '../engine/engine';
import type { Identity } from '../engine/identity';
import { eventAudience } from '../access/rules';
import type { EventHub } from '../events';
import { log } from '../log';
import { transaction, type Db } from '../store/database';
import { readSetting, writeSetting } from '../store/queries/settings';
import {
  DEFAULT_PEER_SETTINGS,
  invitationAddress,
  isLoopback,
  isWildcard,
  readStoredSettings,
  settingsProblem,
  splitAddress,
  type PeerSettings,
} from './peer-settings';
import { checkReachable, type Reachability } from './reachability';
import { describeBootstrap, type DhtBootstrap } from '../net/dht-bootstrap';

/** How an installation gets its peer settings. */
export type PeerConfig =
  /** It does not listen (tests that need no peers). */
  | { kind: 'none' }
  /** Fixed for the process's life: `parley serve`'s flags, tests. A listener that cannot start fails the start. */
  | { kind: 'fixed'; listenHost: string; port: number; advertise?: string | null }
  /** The desktop app: remembered in the database, changed by an owner; a listener that cannot start is reported, not fatal. */
  | { kind: 'remembered' };

export type NetworkErrorCode = 'invalid' | 'in_use' | 'not_here' | 'denied' | 'fixed' | 'failed';

export class NetworkError extends Error {
  constructor(
    readonly code: NetworkErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'NetworkError';
  }
}

const SETTINGS_KEY = 'peer-network';
/** The desktop app's DHT switch, kept apart from the address settings: false is off, anything else on. */
const DHT_SETTING_KEY = 'peer-dht';

/** A listen failure in words, with the code the app API maps. */
function listenFailure(settings: PeerSettings, error: unknown): NetworkError {
  const code = (error as NodeJS.ErrnoException).code;
  const where = settings.port === 0 ? settings.listenHost : `${settings.listenHost} port ${settings.port}`;
  switch (code) {
    case 'EADDRINUSE':
      return new NetworkError('in_use', `port ${settings.port} is in use by another program; choose another port`);
    case 'EADDRNOTAVAIL':
      return new NetworkError('not_here', `${settings.listenHost} is not an address of this computer`);
    case 'EACCES':
    case 'EPERM':
      return new NetworkError(
        'denied',
        `this system does not let Parley listen on ${where} (ports below 1024 need special rights)`,
      );
    default:
      return new NetworkError('failed', `could not listen on ${where}: ${(error as Error).message}`);
  }
}

export interface PeerNetworkOptions {
  db: Db;
  engine: ConnectionEngine;
  identity: Identity;
  events: EventHub;
  config: PeerConfig;
  /** Which DHT it joins beside listening on its address (off: none). */
  dht?: DhtBootstrap;
}

export class PeerNetwork {
  private settings: PeerSettings;
  private boundPort: number | null = null;
  /** Why the listener is not running, when it should be. */
  private failure: string | null = null;
  /** Why the DHT carrier is not running, when it should be. */
  private dhtFailure: string | null = null;
  /** An owner's switch (the desktop app): off keeps it off the DHT whatever the environment says. */
  private dhtWanted: boolean;
  private lastCheck: Reachability | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly checks = new AbortController();
  private closed = false;

  constructor(private readonly options: PeerNetworkOptions) {
    const { config } = options;
    this.dhtWanted = config.kind !== 'remembered' || readSetting(options.db, DHT_SETTING_KEY) !== false;
    this.settings =
      config.kind === 'fixed'
        ? { listenHost: config.listenHost, port: config.port, advertise: config.advertise ?? null }
        : config.kind === 'remembered'
          ? (readStoredSettings(readSetting(options.db, SETTINGS_KEY)) ?? DEFAULT_PEER_SETTINGS)
          : DEFAULT_PEER_SETTINGS;
  }

  /** Starts listening as configured. Fixed settings that cannot be had throw; remembered ones are reported. */
  async start(): Promise<void> {
    const { config } = this.options;
    if (config.kind === 'none') return;
    if (config.kind === 'fixed') {
      const problem = settingsProblem(this.settings);
      if (problem && problem.field !== 'advertise') throw new NetworkError('invalid', problem.message);
      try {
        await this.bind(this.settings);
      } catch (error) {
        throw listenFailure(this.settings, error);
      }
      await this.joinDht();
      return;
    }
    try {
      await this.bind(this.settings);
      // The first start picks a port; from then on it is this one, so invitations keep working.
      if (this.settings.port === 0 || readSetting(this.options.db, SETTINGS_KEY) === undefined) {
        this.settings = { ...this.settings, port: this.boundPort! };
        this.save();
      }
    } catch (error) {
      this.failure = listenFailure(this.settings, error).message;
      log.warn('not listening for peers', { reason: this.failure });
    }
    await this.joinDht();
    this.checkInBackground();
  }

  /**
   * Joins the DHT as configured. Not being on it is reported, never fatal: the address
   * still works, and the DHT may be unreachable for a while (no network yet).
   */
  private async joinDht(): Promise<void> {
    const dht = this.options.dht ?? { kind: 'off' };
    if (dht.kind === 'off' || !this.dhtWanted || this.options.engine.listening === null) return;
    if (this.options.engine.dhtKey !== null) return;
    try {
      const key = await this.options.engine.listenDht(dht);
      this.dhtFailure = null;
      log.info('on the DHT', { key, bootstrap: describeBootstrap(dht) });
    } catch (error) {
      this.dhtFailure = `could not join the DHT (${describeBootstrap(dht)}): ${(error as Error).message}`;
      log.warn('not on the DHT', { reason: this.dhtFailure });
    }
  }

  /** Whether invitations can be made: an address to dial, or a DHT key to find. */
  get invitable(): boolean {
    return this.invitationAddress !== null || this.options.engine.dhtKey !== null;
  }

  get invitationAddress(): string | null {
    return invitationAddress(this.settings, this.boundPort);
  }

  status(): PeerNetworkStatus {
    const { config } = this.options;
    const address = this.invitationAddress;
    const check = this.lastCheck && this.lastCheck.address === address ? this.lastCheck : null;
    const parts = address === null ? null : splitAddress(address);
    return {
      configuredBy: config.kind === 'remembered' ? 'settings' : config.kind === 'fixed' ? 'command line' : 'none',
      listenHost: this.settings.listenHost,
      port: this.settings.port,
      advertise: this.settings.advertise,
      listening: this.options.engine.listening,
      invitationAddress: address,
      thisComputerOnly: parts !== null && isLoopback(parts.host),
      problem: this.invitable && address === null ? null : this.problem(address, check),
      check,
      dht: this.dhtStatus(),
    };
  }

  private dhtStatus(): PeerNetworkStatus['dht'] {
    const dht = this.options.dht ?? { kind: 'off' };
    const key = this.options.engine.dhtKey;
    const off = dht.kind === 'off' || !this.dhtWanted;
    return {
      state: off ? 'off' : key ? 'on' : 'failed',
      key,
      bootstrap: describeBootstrap(dht),
      problem: off || key ? null : (this.dhtFailure ?? 'not on the DHT'),
      relay: this.options.engine.relayKey,
    };
  }

  private problem(address: string | null, check: Reachability | null): string | null {
    const { config } = this.options;
    if (config.kind === 'none') return 'This installation does not listen for peers.';
    if (this.failure) return `Peers cannot reach this installation: ${this.failure}.`;
    if (address === null && isWildcard(this.settings.listenHost))
      return config.kind === 'fixed'
        ? `Listening on ${this.settings.listenHost} (every network) without an advertised address, so invitations cannot say where to dial: start parley serve with --advertise HOST:PORT.`
        : `Listening on ${this.settings.listenHost} (every network) without an advertised address, so invitations cannot say where to dial.`;
    if (check && !check.reachable) return check.message;
    return null;
  }

  /** Changes the settings (the desktop app only): listens on the new address first, saves only what worked. */
  update(request: Partial<PeerSettings> & { dht?: boolean }): Promise<PeerNetworkStatus> {
    return this.serially(async () => {
      if (this.options.config.kind !== 'remembered')
        throw new NetworkError(
          'fixed',
          this.options.config.kind === 'fixed'
            ? 'this installation takes its peer address from the command line (parley serve --peer-host, --peer-port, --advertise, --dht-bootstrap, --no-dht): change it there and restart'
            : 'this installation does not listen for peers',
        );
      const { dht, ...changes } = request;
      if (dht !== undefined) await this.switchDht(dht);
      if (Object.keys(changes).length === 0) return this.status();
      const next: PeerSettings = { ...this.settings, ...changes };
      const problem = settingsProblem(next);
      if (problem) throw new NetworkError('invalid', problem.message);
      const before = this.invitationAddress;
      const rebind =
        this.boundPort === null ||
        next.listenHost !== this.settings.listenHost ||
        next.port === 0 ||
        next.port !== this.boundPort;
      if (rebind) await this.rebind(next);
      this.settings = { ...next, port: this.boundPort ?? next.port };
      this.failure = null;
      this.save();
      const after = this.invitationAddress;
      this.options.engine.setAddress(after);
      if (after !== before) this.options.engine.reconnectAll();
      log.info('peer address changed', { listening: this.options.engine.listening, invitations: after });
      this.changed();
      this.checkInBackground();
      return this.status();
    });
  }

  /** The desktop app's switch: on joins the DHT the environment names, off leaves it; remembered either way. */
  private async switchDht(on: boolean): Promise<void> {
    if (on && (this.options.dht ?? { kind: 'off' }).kind === 'off')
      throw new NetworkError(
        'fixed',
        'PARLEY_DHT_BOOTSTRAP=off keeps this installation off the DHT: start it without that to turn the DHT on',
      );
    this.dhtWanted = on;
    transaction(this.options.db, () => writeSetting(this.options.db, DHT_SETTING_KEY, on));
    if (on) await this.joinDht();
    else await this.options.engine.stopDht();
    log.info(on ? 'DHT switched on' : 'DHT switched off', {});
    this.changed();
  }

  /** Dials the invitation address now; the result is part of the status. */
  check(): Promise<PeerNetworkStatus> {
    return this.serially(async () => {
      await this.runCheck();
      return this.status();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.checks.abort();
    await this.queue.catch(() => undefined);
  }

  private async bind(settings: PeerSettings): Promise<void> {
    const bound = await this.options.engine.listen(settings.listenHost, settings.port);
    this.boundPort = Number(bound.slice(bound.lastIndexOf(':') + 1));
    this.options.engine.setAddress(invitationAddress(settings, this.boundPort));
  }

  /** Moves the listener; on failure the old one is back (when there was one) and the error says why. */
  private async rebind(next: PeerSettings): Promise<void> {
    const previous = this.boundPort === null ? null : { ...this.settings, port: this.boundPort };
    await this.options.engine.stopListening();
    this.boundPort = null;
    try {
      await this.bind(next);
    } catch (error) {
      if (previous) {
        try {
          await this.bind(previous);
        } catch (again) {
          this.failure = listenFailure(previous, again).message;
          this.changed();
        }
      }
      throw listenFailure(next, error);
    }
  }

  private save(): void {
    transaction(this.options.db, () => writeSetting(this.options.db, SETTINGS_KEY, this.settings));
  }

  private changed(): void {
    if (!this.closed)
      this.options.events.emit({ type: 'changed', kind: 'network', id: 0 }, eventAudience.installation());
  }

  private async runCheck(): Promise<void> {
    const address = this.invitationAddress;
    if (address === null || this.closed) return;
    const result = await checkReachable(this.options.identity, address, { signal: this.checks.signal });
    if (this.closed || address !== this.invitationAddress) return;
    this.lastCheck = result;
    if (!result.reachable) log.warn('peers may not reach this installation', { address, reason: result.message });
    this.changed();
  }

  /** The desktop app checks on its own after a start or a change, so Settings can say at once when it fails. */
  private checkInBackground(): void {
    if (this.options.config.kind !== 'remembered') return;
    void this.serially(() => this.runCheck()).catch((error: unknown) =>
      log.warn('peer address check failed', { error: String(error) }),
    );
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
