// How an ACP agent's request to use a tool (`session/request_permission`) is answered.
// For now the role's policy decides, at once; when people decide them (DESIGN §11.9) this
// is the one function to replace. Parley's own tools (the MCP server `parley`) are always
// allowed: they are how the agent acts in Parley, and Parley authorizes each call itself.
import type { PermissionOption, RequestPermissionOutcome, ToolCallUpdate } from '@agentclientprotocol/sdk';

export type PermissionPolicy = 'allow' | 'reject';

export interface PermissionDecision {
  outcome: RequestPermissionOutcome;
  /** One line for people watching the run. */
  says: string;
}

const PARLEY_TOOLS = ['context', 'report', 'send', 'reply', 'history', 'peers'];

const PARLEY_TOOL = new RegExp(
  `^(?:tool:\\s*)?(?:mcp__)?parley(?:__|[./:]\\s*|\\s+)(?:${PARLEY_TOOLS.join('|')})\\b`,
  'i',
);

/** A tool call as the agent described it: in the permission request, or earlier in its `tool_call` update. */
export type ToolCallSeen = Pick<ToolCallUpdate, 'title' | 'name' | 'rawInput'>;

/**
 * True for a tool of Parley's MCP server, however the agent names it: `mcp__parley__send`
 * (Claude), `Tool: parley/send` with `{server: "parley", tool: "send"}` (Codex), `parley.send`.
 */
export function isParleyTool(...seen: ToolCallSeen[]): boolean {
  return seen.some((call) => {
    if ([call.name, call.title].some((name) => PARLEY_TOOL.test((name ?? '').trim()))) return true;
    const input = call.rawInput as { server?: unknown; tool?: unknown } | null | undefined;
    return input?.server === 'parley' && PARLEY_TOOLS.includes(String(input.tool));
  });
}

/** Picks the option of the wanted kind: once if the agent offers it, else always. */
function option(options: readonly PermissionOption[], allow: boolean): PermissionOption | undefined {
  const kinds = allow ? (['allow_once', 'allow_always'] as const) : (['reject_once', 'reject_always'] as const);
  for (const kind of kinds) {
    const found = options.find((o) => o.kind === kind);
    if (found) return found;
  }
  return undefined;
}

/**
 * The answer to one permission request. `earlier` is the agent's own `tool_call` update for
 * the same call, when it sent one (some agents ask with a generic title such as "Approve
 * MCP tool call").
 */
export function decidePermission(
  policy: PermissionPolicy,
  request: { toolCall: ToolCallSeen; options: readonly PermissionOption[] },
  earlier?: ToolCallSeen,
): PermissionDecision {
  const title = earlier?.title?.trim() || request.toolCall.title?.trim() || 'a tool';
  const parley = isParleyTool(request.toolCall, ...(earlier ? [earlier] : []));
  const allow = parley || policy === 'allow';
  const chosen = option(request.options, allow);
  if (!chosen)
    return {
      outcome: { outcome: 'cancelled' },
      says: `Parley: the agent asked to use ${title} without offering to ${allow ? 'allow' : 'reject'} it; cancelled`,
    };
  const why = parley ? 'a Parley tool' : `the role’s permissions are “${policy}”`;
  return {
    outcome: { outcome: 'selected', optionId: chosen.optionId },
    says: `Parley ${allow ? 'allowed' : 'rejected'} ${title} (${why})`,
  };
}
