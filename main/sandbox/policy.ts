// What an agent's process tree may read, write and reach, as a pure function of the turn
// (docs/security.md, "The agents' sandbox"). The I/O (detecting bubblewrap, starting the
// proxies, wrapping the command) is in sandbox.ts; everything decided is here, tested by
// tables.
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
  /** Model endpoints (URLs or host names): the one place a turn at `answer` may reach. */
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

export interface SandboxPolicy {
  filesystem: { denyRead: string[]; allowRead: string[]; allowWrite: string[]; denyWrite: string[] };
  /** Hosts the turn may reach through the sandbox's proxy. */
  allowedDomains: string[];
}

const inside = (child: string, parent: string) => {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
};

/** The host of an endpoint (`http://127.0.0.1:8080/v1` → `127.0.0.1`), or null when it names none. */
export function endpointHost(endpoint: string): string | null {
  const text = endpoint.trim();
  if (!text) return null;
  try {
    const url = new URL(text.includes('://') ? text : `http://${text}`);
    return url.hostname || null;
  } catch {
    return null;
  }
}

/**
 * What the sandbox's proxy can be told to allow: a name with a dot or an address. A bare
 * `localhost` cannot be (and clients do not send it through a proxy): a model server on
 * this machine is named by its address, 127.0.0.1.
 */
const allowable = (host: string) => host.includes('.') || host.startsWith('[');

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
  const hosts = [...input.modelEndpoints.map(endpointHost), ...(answer ? [] : input.programHosts)].filter(
    (host): host is string => host !== null && allowable(host),
  );
  return {
    filesystem: {
      denyRead: unique(denyRead),
      allowRead: unique(allowRead),
      allowWrite: unique(allowWrite),
      denyWrite: [],
    },
    allowedDomains: [...new Set(hosts)],
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
