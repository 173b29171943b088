// The role API between agent processes and Parley: HTTP on a Unix socket readable
// only by the user, one POST per command, the caller named by a bearer token. The
// `parley` CLI and `parley mcp` are its clients. This is its contract: each command's
// params schema and result schema, and the handler table the server must fill, so a
// changed result breaks the build where it is made and where it is read. The codes and
// messages the clients need without zod are in errors.ts and peer-role.ts.
import { z } from 'zod';
import { multiLine, TRUST_LEVELS } from '../../shared/domain';
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

// ---------------------------------------------------------------- results

const id = z.number().int();
const contextKind = z.enum(['conversation', 'task', 'thread']);
const named = z.strictObject({ id, name: z.string() });

/** What the run works on and for whom: what an agent is told, and what `parley context` returns. */
export const agentContextSchema = z.strictObject({
  kind: contextKind,
  id,
  role: named,
  /** One sentence for the agent: where it is and where its output goes. */
  summary: z.string(),
  person: named.optional(),
  task: z
    .strictObject({ id, title: z.string(), body: z.string(), status: z.string(), parentId: id.nullable() })
    .optional(),
  /** The topic this run answers for (ADR 0035). */
  root: z.strictObject({ kind: contextKind, id, summary: z.string() }),
  /** How the agent's final output and `parley report` reach the root. */
  reporting: z.string(),
  /** Whether the peer started this agent conversation (threads only). */
  peerStarted: z.boolean().optional(),
  peer: z.string().optional(),
  /**
   * The trust this run works under (DESIGN §12.3): `own` for this installation's people,
   * else the level of the peer it works for; `note` says why it is less than that level.
   */
  trust: z
    .strictObject({
      level: z.enum(['own', ...TRUST_LEVELS]),
      peer: z.string().optional(),
      note: z.string().optional(),
    })
    .optional(),
  /** The peer took back what it asked here (a withdrawal); its later texts continue the agent conversation. */
  withdrawn: z.strictObject({ by: z.string(), at: z.string() }).optional(),
});
export type AgentContext = z.infer<typeof agentContextSchema>;

/** One connection as an agent sees it: whom it can ask there (DESIGN §11.8). */
export const peerDirectoryEntrySchema = z.strictObject({
  /** The connection's name: the PEER of PEER/ROLE. */
  peer: z.string(),
  /** online: a send goes now; offline: it waits until the peer is back; paused: sends are refused. */
  state: z.enum(['online', 'offline', 'paused']),
  /** Present when the peer paused it (it told us, at `pausedAt`) and it is not paused here too. */
  pausedBy: z.literal('peer').optional(),
  pausedAt: z.string().optional(),
  /** Present when the link goes over the DHT: holepunched, or through a relay (which sees only ciphertext). */
  path: z.enum(['holepunched', 'relayed']).optional(),
  /** With `relayed`: the relay's DHT key (hex). */
  relay: z.string().optional(),
  /** The roles this peer lets this installation's roles address, with what they do. */
  roles: z.array(z.strictObject({ address: z.string(), description: z.string() })),
});
export type PeerDirectoryEntry = z.infer<typeof peerDirectoryEntrySchema>;

/** A text committed on an agent conversation: `send`, `reply`, and a report that goes to a peer. */
export const sendResultSchema = z.strictObject({
  /** The wire thread ID. */
  thread: z.string(),
  /** The agent conversation's row id here. */
  threadRowId: id,
  seq: id,
  to: z.string(),
  /** On a connection that asks first: the text waits for a person (told once decided). */
  held: z.literal(true).optional(),
  note: z.string().optional(),
});
export type SendResult = z.infer<typeof sendResultSchema>;

/** Where `parley report` posted: the person's conversation, the task's log, or the agent conversation a peer started. */
export const reportResultSchema = z.discriminatedUnion('reported', [
  z.strictObject({ reported: z.literal('conversation'), id, messageId: id }),
  z.strictObject({ reported: z.literal('task'), id, logId: id }),
  sendResultSchema.extend({ reported: z.literal('thread') }),
]);
export type ReportResult = z.infer<typeof reportResultSchema>;

/** One text between a role and a peer role, as `parley history` lists it. */
export const historyEntrySchema = z.strictObject({
  thread: z.string(),
  direction: z.enum(['in', 'out']),
  from: z.string(),
  to: z.string(),
  seq: id,
  body: z.string(),
  state: z.enum(['held', 'queued', 'sent', 'acked', 'failed', 'received', 'handled']),
  reason: z.string().nullable(),
  at: z.string(),
});
export type HistoryEntry = z.infer<typeof historyEntrySchema>;

/** A person's word on an agent's request to use a tool, or why nobody gave one. */
export const permissionOutcomeSchema = z.discriminatedUnion('outcome', [
  z.strictObject({ outcome: z.literal('approved'), by: z.string() }),
  /** `reason`: Parley denied it without asking anyone, and why. */
  z.strictObject({ outcome: z.literal('denied'), by: z.string(), reason: z.string().optional() }),
  z.strictObject({ outcome: z.literal('cancelled'), reason: z.string() }),
]);
export type PermissionOutcome = z.infer<typeof permissionOutcomeSchema>;

const peers = z.array(peerDirectoryEntrySchema);

export const roleApiResults = {
  /** A role token has no run and no context; a run token has both. */
  context: z.discriminatedUnion('token', [
    z.strictObject({ token: z.literal('role'), role: named, run: z.null(), context: z.null(), peers }),
    z.strictObject({
      token: z.literal('run'),
      role: named,
      run: z.strictObject({ id, turnId: id, session: z.string().nullable() }),
      context: agentContextSchema,
      peers,
    }),
  ]),
  report: reportResultSchema,
  history: z.array(historyEntrySchema),
  send: sendResultSchema,
  reply: sendResultSchema,
  peers,
  permission: permissionOutcomeSchema,
} as const satisfies Record<RoleApiCommand, z.ZodType>;

/** What a command's handler is given: its params as the schema parsed them. */
export type RoleApiParams<C extends RoleApiCommand> = z.output<(typeof roleApiRequests)[C]>;
/** What a command answers. */
export type RoleApiResult<C extends RoleApiCommand> = z.output<(typeof roleApiResults)[C]>;

/** The requests' table seen by key, so that the schema of command C is known to parse to RoleApiParams<C>. */
const paramsSchemas: { [C in RoleApiCommand]: z.ZodType<RoleApiParams<C>> } = roleApiRequests;

export function isRoleApiCommand(value: string): value is RoleApiCommand {
  return Object.hasOwn(roleApiRequests, value);
}

/** A command's params checked against its schema. */
export function parseRoleApiParams<C extends RoleApiCommand>(
  command: C,
  json: unknown,
): z.ZodSafeParseResult<RoleApiParams<C>> {
  return paramsSchemas[command].safeParse(json);
}

/** The server's table: one handler per command, each typed by the contract. */
export type RoleApiHandlers<Caller> = {
  [C in RoleApiCommand]: (caller: Caller, params: RoleApiParams<C>) => RoleApiResult<C> | Promise<RoleApiResult<C>>;
};

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
