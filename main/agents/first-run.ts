// First run (DESIGN §10): a new installation gets one role, `assistant`, behind the
// first agent that is there to use: Claude Code (`claude` on PATH), Codex (`codex` on
// PATH), an ACP agent on PATH (claude-agent-acp, codex-acp, gemini, goose: the acp
// adapter), an OpenAI-compatible server answering on localhost:11434 (Ollama), else the
// scripted agent. The choice is logged, kept as a note the home page's checklist shows
// (never in the role's description, which peers read), and returned for `parley serve`
// to print.
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { acpAgentPresets } from '../../shared/acp-agents';
import type { AgentSettings } from '../../shared/domain';
import type { Db } from '../store/database';
import { transaction } from '../store/database';
import { saveFirstRunNote } from '../store/queries/first-run';
import { insertRole, listRoles } from '../store/queries/roles';

export const DEFAULT_ROLE = 'assistant';
export const DEFAULT_PROBE_URL = 'http://localhost:11434/v1';

export interface FirstRunOptions {
  /** Where `claude` and `codex` are looked for; Parley's own PATH when omitted. */
  path?: string;
  /** The OpenAI-compatible server to try (loopback only); Ollama's address when omitted. */
  probeUrl?: string;
  /** How long the server has to answer `GET /models`. */
  probeTimeoutMs?: number;
}

export interface FirstRunNote {
  role: string;
  adapter: AgentSettings['adapter'];
  /** Why, e.g. `found claude at /usr/local/bin/claude`. */
  found: string;
  /** One line for people: which adapter and how to change it. */
  message: string;
}

/** The executable `name` in one of the PATH's folders, or null. */
export function findOnPath(name: string, searchPath: string | undefined): string | null {
  const extensions =
    process.platform === 'win32' ? (process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').filter(Boolean) : [''];
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const extension of extensions) {
      const file = path.join(dir, name + extension);
      try {
        if (!statSync(file).isFile()) continue;
        accessSync(file, constants.X_OK);
        return file;
      } catch {
        // not there, or not executable
      }
    }
  }
  return null;
}

function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The models a local OpenAI-compatible server offers, or null when none answers in time. */
export async function probeModels(baseUrl: string, timeoutMs: number): Promise<string[] | null> {
  let url: URL;
  try {
    url = new URL(`${baseUrl.replace(/\/+$/, '')}/models`);
  } catch {
    return null;
  }
  // Only this machine: a first run never reaches out to the network.
  if (!isLoopback(url) || (url.protocol !== 'http:' && url.protocol !== 'https:')) return null;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) return null;
    const body = (await response.json()) as { data?: { id?: unknown }[] };
    if (!Array.isArray(body.data)) return null;
    return body.data.map((model) => model.id).filter((id): id is string => typeof id === 'string' && id !== '');
  } catch {
    return null;
  }
}

/** The first available agent, and what was found. */
export async function chooseDefaultAgent(
  options: FirstRunOptions = {},
): Promise<{ agent: AgentSettings; found: string }> {
  const searchPath = options.path ?? process.env.PATH;
  const claude = findOnPath('claude', searchPath);
  if (claude) return { agent: { adapter: 'claude-code' }, found: `found claude at ${claude}` };
  const codex = findOnPath('codex', searchPath);
  if (codex) return { agent: { adapter: 'codex' }, found: `found codex at ${codex}` };
  for (const preset of acpAgentPresets) {
    const program = findOnPath(preset.command[0]!, searchPath);
    if (program)
      return {
        agent: { adapter: 'acp', command: [...preset.command] },
        found: `found ${preset.command[0]} at ${program}, an agent that speaks the Agent Client Protocol`,
      };
  }
  const baseUrl = options.probeUrl ?? DEFAULT_PROBE_URL;
  const models = await probeModels(baseUrl, options.probeTimeoutMs ?? 700);
  if (models && models.length > 0)
    return {
      agent: { adapter: 'openai-compatible', baseUrl, model: models[0]! },
      found: `found an OpenAI-compatible server at ${baseUrl} with the model ${models[0]}`,
    };
  const server =
    models === null
      ? `no OpenAI-compatible server at ${baseUrl}`
      : `an OpenAI-compatible server at ${baseUrl}, but it has no models`;
  const acpPrograms = acpAgentPresets.map((preset) => preset.command[0]).join(', ');
  return { agent: { adapter: 'scripted' }, found: `no claude, codex or ACP agent (${acpPrograms}) on PATH, ${server}` };
}

/**
 * Creates the default role when the installation has no roles yet. Returns what was
 * chosen, or null when there already were roles.
 */
export async function createDefaultRole(db: Db, options: FirstRunOptions = {}): Promise<FirstRunNote | null> {
  if (listRoles(db).length > 0) return null;
  const { agent, found } = await chooseDefaultAgent(options);
  const message = `Default role "${DEFAULT_ROLE}" uses ${agent.adapter} (${found}). Change it in Settings → Roles.`;
  const created = transaction(db, () => {
    // Someone may have been quicker while we looked.
    if (listRoles(db).length > 0) return false;
    const role = insertRole(db, DEFAULT_ROLE, '', agent);
    saveFirstRunNote(db, { roleId: role.id, adapter: agent.adapter, found });
    return true;
  });
  return created ? { role: DEFAULT_ROLE, adapter: agent.adapter, found, message } : null;
}
