// A role's secrets (the openai-compatible API key) are written once and never read
// back through the app API: responses carry `hasApiKey` instead, and an update that
// leaves the key out keeps the stored one — as long as the endpoint stays on the same
// origin, so that nobody can send the stored key to a server of their choosing.
import type { AgentSettings, Role } from '../../shared/domain';

/** The role as the app API shows it: without its API key. */
export function publicRole(role: Role): Role {
  if (role.agent.adapter !== 'openai-compatible') return role;
  const { apiKey, ...agent } = role.agent;
  return { ...role, agent, hasApiKey: apiKey !== undefined };
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
