// The role API between agent processes and Parley: HTTP on a Unix socket readable
// only by the user, one POST per command, the caller named by a bearer token. The
// `parley` CLI and `parley mcp` are its clients. The requests' schemas are here; the
// codes and messages the clients need without zod are in errors.ts and peer-role.ts.
import { z } from 'zod';
import { multiLine } from '../../shared/domain';
import { PEER_ROLE_MESSAGE, PEER_ROLE_PATTERN } from './peer-role';

/** `PEER/ROLE`: a connection's name and a role it exposes. */
export const peerRoleSchema = z.string().regex(PEER_ROLE_PATTERN, PEER_ROLE_MESSAGE);

const text = multiLine(
  z.string().trim().min(1, 'text must not be empty').max(100_000, 'text is too long (100,000 characters at most)'),
);

export const roleApiRequests = {
  context: z.strictObject({}),
  report: z.strictObject({ text }),
  history: z.strictObject({ with: peerRoleSchema }),
  send: z.strictObject({ to: peerRoleSchema, text }),
  reply: z.strictObject({ text }),
  peers: z.strictObject({}),
  /**
   * An agent asks to use a tool and waits for a person's word (asked by the acp worker on
   * its agent's behalf; no CLI command or MCP tool of its own).
   */
  permission: z.strictObject({
    title: z.string().trim().min(1, 'title must not be empty').max(500),
    /** The kind of tool (read, edit, execute, fetch, …), as the agent says. */
    toolKind: z.string().max(100).optional(),
    /** What the tool is to do, as text people can read. */
    input: z.string().max(20_000).optional(),
  }),
} as const;
export type RoleApiCommand = keyof typeof roleApiRequests;

/** Set in `parley mcp`'s environment for Claude Code at `work`: it then serves the permission prompt tool. */
export const PERMISSION_TOOL_VARIABLE = 'PARLEY_MCP_PERMISSION_TOOL';

export {
  exitCodes,
  NO_TOPIC_MESSAGE,
  RoleApiError,
  roleApiErrorCodes,
  type RoleApiErrorCode,
  type RoleApiResponse,
} from './errors';
