// A role's secrets — its environment values and the openai-compatible API key — are
// written through the app API and never read back through it: a role comes out with
// each `env` name as `{set: true}` and `hasApiKey`, to owners and members alike.
//
// An update that leaves a secret out (or sends `{set: true}` back for it) keeps the
// stored one, as long as it would still go where it was meant to: the API key while the
// endpoint keeps its origin; environment values while the program that gets them stays
// the same (adapter, command, working folder, and the variables that decide what runs
// or what it loads). Otherwise anyone allowed to edit a role could point a stored secret
// at a program or server of their choosing and read it there.
import { ApiError } from '../../shared/api-contract';
import type {
  AgentSettings,
  AgentSettingsUpdate,
  AgentSettingsView,
  Role,
  RoleView,
  StoredSecret,
} from '../../shared/domain';

/** The role as the app API shows it: environment names without their values, no API key. */
export function publicRole(role: Role): RoleView {
  const { agent, ...rest } = role;
  switch (agent.adapter) {
    case 'scripted':
      return { ...rest, agent };
    case 'openai-compatible': {
      const { apiKey, ...shown } = agent;
      return { ...rest, agent: shown, hasApiKey: apiKey !== undefined };
    }
    default: {
      const { env: values, ...others } = agent;
      const env: Record<string, StoredSecret> = {};
      for (const name of Object.keys(values ?? {})) env[name] = { set: true };
      const shown = (values ? { ...others, env } : others) as AgentSettingsView;
      return { ...rest, agent: shown };
    }
  }
}

/**
 * Variables that change which program runs or what it loads: a stored value stays only
 * while these stay as they were, so none of them can be set to run something that reads
 * the others.
 */
const LAUNCH_VARIABLES = new Set([
  'PATH',
  'NODE_OPTIONS',
  'NODE_PATH',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'DYLD_INSERT_LIBRARIES',
  'DYLD_LIBRARY_PATH',
  'BASH_ENV',
  'ENV',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'PERL5OPT',
  'PERL5LIB',
  'RUBYOPT',
  'RUBYLIB',
]);

type WithEnv = Extract<AgentSettings, { adapter: 'command' | 'claude-code' | 'codex' | 'acp' }>;
type UpdateWithEnv = Extract<AgentSettingsUpdate, { adapter: 'command' | 'claude-code' | 'codex' | 'acp' }>;

const hasEnv = (agent: AgentSettings): agent is WithEnv =>
  agent.adapter === 'command' ||
  agent.adapter === 'claude-code' ||
  agent.adapter === 'codex' ||
  agent.adapter === 'acp';

/** What decides the program stored environment values go to, but for the launch variables. */
const program = (agent: WithEnv) => JSON.stringify([agent.adapter, agent.command, agent.cwd ?? null]);

/** Why the update cannot keep stored environment values, or null when it can. */
function whyNotKept(next: UpdateWithEnv, stored: AgentSettings): string | null {
  if (!hasEnv(stored) || program(stored) !== program(next as WithEnv))
    return 'this update changes the agent, its command or its working folder';
  for (const name of LAUNCH_VARIABLES) {
    const before = stored.env?.[name];
    const given = next.env === undefined ? before : next.env[name];
    const after = given === undefined || typeof given === 'string' ? given : before;
    if (after !== before) return `this update changes ${name}, which decides what runs`;
  }
  return null;
}

/**
 * The settings to store for an update: `{set: true}` values (and a missing `env`) keep
 * the stored ones where they may, and the API key is kept as `keepStoredKey` says.
 * Refuses, with `invalid`, to keep a value that is not stored or may not be kept.
 */
export function keepStoredSecrets(next: AgentSettingsUpdate, stored: AgentSettings): AgentSettings {
  if (next.adapter === 'scripted') return next;
  if (next.adapter === 'openai-compatible') return keepStoredKey(next, stored);
  const storedEnv = hasEnv(stored) ? (stored.env ?? {}) : {};
  const why = whyNotKept(next, stored);
  const env: Record<string, string> = {};
  if (next.env === undefined) {
    // Settings without `env` keep every stored value they may; moving to another program starts without them.
    if (why === null) Object.assign(env, storedEnv);
  } else {
    for (const [name, value] of Object.entries(next.env)) {
      if (typeof value === 'string') {
        env[name] = value;
        continue;
      }
      const kept = storedEnv[name];
      if (kept === undefined)
        throw new ApiError('invalid', `agent.env.${name}: there is no stored value to keep; give its value`);
      if (why !== null)
        throw new ApiError(
          'invalid',
          `agent.env.${name}: a stored value goes only to the program it was given for, and ${why}; give ${name} again, or leave it out to remove it`,
        );
      env[name] = kept;
    }
  }
  const { env: _given, ...rest } = next;
  return Object.keys(env).length > 0 ? { ...rest, env } : rest;
}

function origin(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * New settings for a role: an openai-compatible update without `apiKey` keeps the
 * stored key when the base URL keeps its origin (scheme, host and port); moving to
 * another server needs the key given again.
 */
export function keepStoredKey(next: AgentSettings, stored: AgentSettings): AgentSettings {
  if (next.adapter !== 'openai-compatible' || next.apiKey !== undefined) return next;
  if (stored.adapter !== 'openai-compatible' || stored.apiKey === undefined) return next;
  const from = origin(stored.baseUrl);
  if (from === null || from !== origin(next.baseUrl)) return next;
  return { ...next, apiKey: stored.apiKey };
}
