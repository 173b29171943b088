// `PEER/ROLE`: a connection's name and a role it exposes. The role API's schema and the
// CLI's argument check both use this pattern and message (the CLI checks it without
// loading the schema library, which would double its start-up time).

export const PEER_ROLE_PATTERN = /^[^\s/]+\/[a-z0-9][a-z0-9_-]*$/;

export const PEER_ROLE_MESSAGE = 'must look like PEER/ROLE, e.g. bob/researcher';

/** Null when `value` is a PEER/ROLE, else what is wrong with it. */
export function peerRoleProblem(value: string): string | null {
  return PEER_ROLE_PATTERN.test(value) ? null : PEER_ROLE_MESSAGE;
}
