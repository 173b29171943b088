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

const PARLEY_TOOL = new RegExp(`^(?:mcp__)?parley(?:__|[./:]\\s*|\\s+)(?:${PARLEY_TOOLS.join('|')})\\b`, 'i');

/** True for a tool of Parley's MCP server, however the agent names it (`mcp__parley__send`, `parley.send`, `parley/send`). */
export function isParleyTool(toolCall: Pick<ToolCallUpdate, 'title' | 'name'>): boolean {
  return [toolCall.name, toolCall.title].some((name) => PARLEY_TOOL.test((name ?? '').trim()));
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

export function decidePermission(
  policy: PermissionPolicy,
  request: { toolCall: Pick<ToolCallUpdate, 'title' | 'name'>; options: readonly PermissionOption[] },
): PermissionDecision {
  const title = request.toolCall.title?.trim() || 'a tool';
  const parley = isParleyTool(request.toolCall);
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
