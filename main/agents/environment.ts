// What an agent process gets of Parley's own environment. Parley may run with secrets
// in its environment (a developer's OPENAI_API_KEY, cloud credentials, ELECTRON_*
// switches); an agent gets only what programs need to run at all, plus what its role
// sets, plus Parley's own PARLEY_* and PATH. See docs/agents.md.
import path from 'node:path';

/** Inherited by name (compared case-insensitively, for Windows' `Path` and `http_proxy`). */
const INHERITED = new Set(
  [
    // Unix basics
    'PATH',
    'HOME',
    'USER',
    'LOGNAME',
    'SHELL',
    'LANG',
    'LANGUAGE',
    'TZ',
    'TMPDIR',
    'TERM',
    'XDG_RUNTIME_DIR',
    'XDG_CONFIG_HOME',
    'XDG_CACHE_HOME',
    'XDG_DATA_HOME',
    // Reaching the network from behind a proxy or a private CA
    'HTTP_PROXY',
    'HTTPS_PROXY',
    'NO_PROXY',
    'ALL_PROXY',
    'SSL_CERT_FILE',
    'SSL_CERT_DIR',
    'NODE_EXTRA_CA_CERTS',
    // Windows basics
    'SYSTEMROOT',
    'WINDIR',
    'COMSPEC',
    'PATHEXT',
    'TEMP',
    'TMP',
    'USERPROFILE',
    'USERNAME',
    'APPDATA',
    'LOCALAPPDATA',
    'PROGRAMDATA',
    'PROGRAMFILES',
    'HOMEDRIVE',
    'HOMEPATH',
  ].map((name) => name.toUpperCase()),
);

/** The part of Parley's environment every agent inherits: the names above and the locale (`LC_*`). */
export function inheritedEnv(source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    const upper = name.toUpperCase();
    if (INHERITED.has(upper) || upper.startsWith('LC_')) env[name] = value;
  }
  return env;
}

/**
 * An agent's environment: the inherited minimum, then the role's `env` (which may
 * override any of it), then Parley's turn variables (PARLEY_TOKEN, PARLEY_API, PATH
 * with `parley`), which the role cannot override. A role's PATH is put in front of
 * Parley's PATH rather than replacing it.
 */
export function agentEnv(
  roleEnv: Record<string, string> | undefined,
  turnEnv: Record<string, string>,
  source: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = { ...inheritedEnv(source), ...roleEnv, ...turnEnv };
  const rolePath = roleEnv?.PATH;
  const basePath = turnEnv.PATH ?? source.PATH;
  if (rolePath) env.PATH = basePath ? `${rolePath}${path.delimiter}${basePath}` : rolePath;
  return env;
}
