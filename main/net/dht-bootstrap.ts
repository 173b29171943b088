// Which DHT an installation joins: HyperDHT's public bootstrap nodes (the default), a list
// of HOST:PORT nodes (a private network, a test's loopback testnet), or none at all.
// `--dht-bootstrap` and PARLEY_DHT_BOOTSTRAP take the same text.
import { z } from 'zod';
import { isLoopbackHost, parseHostPort } from './hosts';

export type DhtBootstrap =
  | { kind: 'off' }
  /** HyperDHT's own public bootstrap nodes. */
  | { kind: 'public' }
  | { kind: 'nodes'; nodes: { host: string; port: number }[] };

export const DHT_BOOTSTRAP_ENV = 'PARLEY_DHT_BOOTSTRAP';

const MALFORMED = 'must be off or a comma-separated list of HOST:PORT bootstrap nodes, such as 127.0.0.1:49737';

/** `off`, or HOST:PORT,HOST:PORT,… */
export const dhtBootstrapText = z
  .string()
  .trim()
  .transform((value, ctx): DhtBootstrap => {
    if (value.toLowerCase() === 'off') return { kind: 'off' };
    const parts = value.split(',').map((part) => part.trim());
    const nodes = parts.map(parseHostPort);
    if (parts.length === 0 || nodes.some((node) => node === null)) {
      ctx.addIssue({ code: 'custom', message: MALFORMED });
      return z.NEVER;
    }
    return { kind: 'nodes', nodes: nodes as { host: string; port: number }[] };
  });

export type BootstrapFromEnv = { ok: true; bootstrap: DhtBootstrap } | { ok: false; message: string };

/** What the environment says; unset is the public network. */
export function dhtBootstrapFromEnv(env: NodeJS.ProcessEnv = process.env): BootstrapFromEnv {
  const value = env[DHT_BOOTSTRAP_ENV];
  if (value === undefined || value === '') return { ok: true, bootstrap: { kind: 'public' } };
  const parsed = dhtBootstrapText.safeParse(value);
  return parsed.success
    ? { ok: true, bootstrap: parsed.data }
    : { ok: false, message: `${DHT_BOOTSTRAP_ENV} ${parsed.error.issues[0]!.message}` };
}

/** A network whose every bootstrap node is on this machine: the DHT node binds loopback too. */
export function isLoopbackBootstrap(bootstrap: DhtBootstrap): boolean {
  return bootstrap.kind === 'nodes' && bootstrap.nodes.every((node) => isLoopbackHost(node.host));
}

export function describeBootstrap(bootstrap: DhtBootstrap): string {
  if (bootstrap.kind === 'off') return 'off';
  if (bootstrap.kind === 'public') return 'the public HyperDHT bootstrap nodes';
  return bootstrap.nodes.map((node) => `${node.host}:${node.port}`).join(',');
}
