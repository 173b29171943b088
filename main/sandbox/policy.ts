// What an agent's process tree may read, write and reach, as a pure function of the turn
// (docs/security.md, "The agents' sandbox"). The I/O (detecting bubblewrap, starting the
// proxies, wrapping the command) is in sandbox.ts; everything decided is here, tested by
// tables.
import { BlockList, isIP } from 'node:net';
import path from 'node:path';
import type { TurnTrust } from '../../shared/domain';

export interface SandboxPolicyInput {
  trust: TurnTrust;
  /** The installation's data folder: database, identity, serve.json, tokens, secrets. */
  dataDir: string;
  /** The role's own working folder (outside the data folder). */
  roleFolder: string;
  /** Every other role's working folder: none of them is this agent's business. */
  otherRoleFolders: readonly string[];
  /** The run's temporary folder (TMPDIR), inside the data folder's `turns`. */
  runTmp: string;
  /** The role-API socket the turn signs in to with its own token. */
  roleApiSocket: string;
  /** What the `parley` launcher needs: its folder, Node, Parley's own code. */
  launcher: readonly string[];
  /** Model endpoints (URLs or host names): the one place a turn at `answer` may reach (host and port). */
  modelEndpoints: readonly string[];
  /** Hosts the agent program itself talks to besides its model (sign-in, updates): not at `answer`. */
  programHosts: readonly string[];
  /** The agent program's own state (~/.claude, ~/.codex): it reads and writes there to run at all. */
  agentConfig: readonly string[];
  /** Where the agent program is installed (its binary, its runtime): readable at every level. */
  programDirs: readonly string[];
  /** The owner's home folder, unreadable at `answer`. */
  home: string;
}

/**
 * How far a turn's network goes, always through the sandbox's proxy:
 * - `endpoints`: only the model endpoints, each as exact host:port;
 * - `beyond-machine`: any destination that is not this machine (its loopback, its own
 *   addresses, link-local and metadata addresses), plus the model endpoints;
 * - `open`: that, and this machine's loopback too.
 */
export type NetworkReach = 'endpoints' | 'beyond-machine' | 'open';

export function networkReach(trust: TurnTrust): NetworkReach {
  switch (trust) {
    case 'answer':
      return 'endpoints';
    case 'work':
      return 'beyond-machine';
    case 'full':
    case 'own':
      return 'open';
  }
}

export interface SandboxPolicy {
  filesystem: { denyRead: string[]; allowRead: string[]; allowWrite: string[]; denyWrite: string[] };
  /** How far the turn reaches; `endpoints` means `allowedDomains` and nothing else. */
  reach: NetworkReach;
  /** Destinations (host:port, or a host for every port) the turn may reach whatever else is refused. */
  allowedDomains: string[];
}

const inside = (child: string, parent: string) => {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
};

/** The host of an endpoint (`http://127.0.0.1:8080/v1` → `127.0.0.1`), or null when it names none. */
export function endpointHost(endpoint: string): string | null {
  return parseEndpoint(endpoint)?.host ?? null;
}

function parseEndpoint(endpoint: string): { host: string; port: number } | null {
  const text = endpoint.trim();
  if (!text) return null;
  try {
    // A bare host name is an HTTPS API (api.anthropic.com).
    const url = new URL(text.includes('://') ? text : `https://${text}`);
    if (!url.hostname) return null;
    const port = url.port ? Number(url.port) : url.protocol === 'http:' || url.protocol === 'ws:' ? 80 : 443;
    return { host: url.hostname, port };
  } catch {
    return null;
  }
}

/**
 * What the proxy is told for an endpoint: its host and port, exactly
 * (`http://127.0.0.1:8080/v1` → `127.0.0.1:8080`), so a model server on loopback opens
 * that one port and not the rest of the machine. Null for what the proxy cannot be told:
 * a name without a dot other than localhost, or no host at all.
 */
export function endpointDestination(endpoint: string): string | null {
  const parsed = parseEndpoint(endpoint);
  if (!parsed) return null;
  const { host, port } = parsed;
  if (!(host.includes('.') || host.startsWith('[') || host === 'localhost')) return null;
  return `${host}:${port}`;
}

/** This machine's loopback, by the names the proxy compares (every port). */
export const LOOPBACK_DESTINATIONS = ['127.0.0.1', 'localhost', '[::1]'];

/** Addresses that are this machine, or not a network destination at all, whatever the level. */
const NOT_BEYOND = new BlockList();
for (const [network, prefix, family] of [
  ['127.0.0.0', 8, 'ipv4'],
  ['0.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['255.255.255.255', 32, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['::', 128, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
] as const)
  NOT_BEYOND.addSubnet(network, prefix, family);

const bare = (host: string) => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

/**
 * Whether a turn that reaches beyond this machine may open `host` (what no per-turn entry
 * decided). A name may: the runtime refuses by itself a name that resolves to this
 * machine or to a link-local address. An address may unless it is this machine's
 * (loopback, unspecified, one of `localAddresses`) or link-local, multicast, broadcast.
 */
export function beyondMachineAllows(host: string, localAddresses: readonly string[]): boolean {
  const address = bare(host).toLowerCase();
  const family = isIP(address);
  if (family === 0) return address !== 'localhost' && !address.endsWith('.localhost');
  const kind = family === 4 ? 'ipv4' : 'ipv6';
  // An IPv4 address written as IPv6 (::ffff:127.0.0.1) is that IPv4 address.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address)?.[1];
  if (mapped) return beyondMachineAllows(mapped, localAddresses);
  if (NOT_BEYOND.check(address, kind)) return false;
  return !localAddresses.some((local) => bare(local).toLowerCase() === address);
}

const unique = (paths: Iterable<string>) => [...new Set([...paths].map((entry) => path.resolve(entry)))];

export function sandboxPolicy(input: SandboxPolicyInput): SandboxPolicy {
  const answer = input.trust === 'answer';
  const denyRead = [input.dataDir];
  // Other roles' folders, unless this role's folder is within one (then it is its own).
  for (const folder of input.otherRoleFolders)
    if (!inside(input.roleFolder, folder) && !inside(folder, input.roleFolder)) denyRead.push(folder);
  // A socket outside the data folder sits beside other installations' sockets: only ours is readable.
  const socketDir = path.dirname(input.roleApiSocket);
  if (!inside(input.roleApiSocket, input.dataDir)) denyRead.push(socketDir);
  if (answer) denyRead.push(input.home);
  const allowRead = [input.roleFolder, input.runTmp, input.roleApiSocket, ...input.launcher, ...input.programDirs];
  allowRead.push(...input.agentConfig);
  const allowWrite = answer ? [input.runTmp] : [input.roleFolder, input.runTmp];
  allowWrite.push(...input.agentConfig);
  const reach = networkReach(input.trust);
  const destinations = [...input.modelEndpoints, ...(answer ? [] : input.programHosts)]
    .map(endpointDestination)
    .filter((destination): destination is string => destination !== null);
  if (reach === 'open') destinations.push(...LOOPBACK_DESTINATIONS);
  return {
    filesystem: {
      denyRead: unique(denyRead),
      allowRead: unique(allowRead),
      allowWrite: unique(allowWrite),
      denyWrite: [],
    },
    reach,
    allowedDomains: [...new Set(destinations)],
  };
}

/** Where an adapter's agent program keeps its own state, which it must read and write to run at all. */
export function agentConfigDirs(
  adapter: string,
  env: Readonly<Record<string, string | undefined>>,
  home: string,
): string[] {
  const claude = env.CLAUDE_CONFIG_DIR
    ? [env.CLAUDE_CONFIG_DIR]
    : [path.join(home, '.claude'), path.join(home, '.claude.json')];
  const codex = [env.CODEX_HOME || path.join(home, '.codex')];
  switch (adapter) {
    case 'claude-code':
      return claude;
    case 'codex':
      return codex;
    case 'acp':
      // An ACP agent is one of the two (claude-agent-acp, codex-acp) or another program.
      return [...claude, ...codex];
    default:
      return [];
  }
}

/** Hosts the adapters' programs reach when their settings name no endpoint of their own. */
export const defaultModelHosts: Record<string, string[]> = {
  'claude-code': ['api.anthropic.com'],
  codex: ['api.openai.com', 'chatgpt.com'],
  acp: ['api.anthropic.com', 'api.openai.com', 'chatgpt.com'],
};

/** The `base_url`s a Codex config.toml names for its model providers. */
export function codexConfigEndpoints(toml: string): string[] {
  return [...toml.matchAll(/^\s*base_url\s*=\s*["']([^"'\n]+)["']/gm)].map((match) => match[1]!);
}

/**
 * The model endpoints of a turn: the role's base URL, any `*_BASE_URL` its agent is
 * given, those the agent's own configuration names (`configured`), else the adapter's own.
 */
export function modelEndpoints(
  adapter: string,
  baseUrl: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  configured: readonly string[] = [],
): string[] {
  const named = Object.entries(env)
    .filter(([name, value]) => /_(BASE_URL|API_BASE|BASE)$/i.test(name) && value)
    .map(([, value]) => value!);
  if (baseUrl) named.push(baseUrl);
  named.push(...configured);
  return named.length > 0 ? [...new Set(named)] : (defaultModelHosts[adapter] ?? []);
}
