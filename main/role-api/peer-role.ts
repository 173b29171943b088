// `PEER/ROLE`: a connection's name and a role it exposes. The role API's schema and the
// CLI's argument check both use this pattern and message (the CLI checks it without
// loading the schema library, which would double its start-up time).
import { PEER_ROLE_MESSAGE, PEER_ROLE_PATTERN } from '../../shared/role-name';

export { PEER_ROLE_MESSAGE, PEER_ROLE_PATTERN };

/** Null when `value` is a PEER/ROLE, else what is wrong with it. */
export function peerRoleProblem(value: string): string | null {
  return PEER_ROLE_PATTERN.test(value) ? null : PEER_ROLE_MESSAGE;
}
