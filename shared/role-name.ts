// What a role's name may be, said once: the app API, the wire, the role API, the CLI and
// the page all check names against these. It imports nothing, so the role CLI can check
// an argument without loading a schema library.

/** Lowercase letters, digits, "-" and "_", starting with a letter or digit. */
const ROLE_NAME_SOURCE = '[a-z0-9][a-z0-9_-]*';

export const ROLE_NAME_PATTERN = new RegExp(`^${ROLE_NAME_SOURCE}$`);
export const MAX_ROLE_NAME_CHARS = 40;
export const ROLE_NAME_MESSAGE = 'use lowercase letters, digits, "-" and "_"';

/** `PEER/ROLE`: a connection's name (no space or slash) and a role it exposes; captures both. */
export const PEER_ROLE_PATTERN = new RegExp(`^([^\\s/]+)\\/(${ROLE_NAME_SOURCE})$`);
export const PEER_ROLE_MESSAGE = 'must look like PEER/ROLE, e.g. bob/researcher';

export function isRoleName(value: string): boolean {
  return value.length <= MAX_ROLE_NAME_CHARS && ROLE_NAME_PATTERN.test(value);
}
