// How an ACP agent's request to use a tool (`session/request_permission`) is answered:
// by the role's policy at once (`allow`, `reject`), or by a person (`ask`, DESIGN §11.9),
// whom the worker asks through the role API and whose answer becomes the agent's option.
// Parley's own tools (the MCP server `parley`) are always allowed: they are how the agent
// acts in Parley, and Parley authorizes each call itself.
import type { PermissionOption, RequestPermissionOutcome, ToolCallUpdate } from '@agentclientprotocol/sdk';

export type PermissionPolicy = 'allow' | 'reject' | 'ask';

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
export type ToolCallSeen = Pick<ToolCallUpdate, 'title' | 'name' | 'rawInput' | 'kind'>;

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

/** What a person is asked about a tool call: as the role API's `permission` call takes it. */
export interface PermissionQuestion {
  title: string;
  toolKind?: string;
  input?: string;
}

/** How Parley answered: a person's word, or why there was none. */
export type PersonsAnswer =
  { outcome: 'approved' | 'denied'; by: string; reason?: string } | { outcome: 'cancelled'; reason: string };

const INPUT_CHARS = 4_000;

/**
 * What to ask a person about a request, when the role's policy is `ask`; null when the
 * answer is Parley's at once (another policy, or one of Parley's own tools).
 */
export function questionFor(
  policy: PermissionPolicy,
  request: { toolCall: ToolCallSeen },
  earlier?: ToolCallSeen,
): PermissionQuestion | null {
  if (policy !== 'ask' || isParleyTool(request.toolCall, ...(earlier ? [earlier] : []))) return null;
  const title = earlier?.title?.trim() || request.toolCall.title?.trim() || 'a tool';
  const kind = request.toolCall.kind ?? earlier?.kind;
  const raw = request.toolCall.rawInput ?? earlier?.rawInput;
  const input = raw === undefined || raw === null ? undefined : typeof raw === 'string' ? raw : JSON.stringify(raw);
  return {
    title: title.slice(0, 500),
    ...(kind ? { toolKind: kind } : {}),
    ...(input ? { input: input.length > INPUT_CHARS ? `${input.slice(0, INPUT_CHARS)}…` : input } : {}),
  };
}

/** A person's word as the agent's option: allow once (else always), reject once (else always); cancelled stays so. */
export function answerFromPerson(
  answer: PersonsAnswer,
  question: PermissionQuestion,
  options: readonly PermissionOption[],
): PermissionDecision {
  if (answer.outcome === 'cancelled')
    return {
      outcome: { outcome: 'cancelled' },
      says: `Parley: nobody answered whether to use ${question.title} (${answer.reason}); cancelled`,
    };
  const allow = answer.outcome === 'approved';
  const chosen = option(options, allow);
  if (!chosen)
    return {
      outcome: { outcome: 'cancelled' },
      says: `Parley: ${answer.by} ${allow ? 'approved' : 'denied'} ${question.title}, but the agent offered no way to ${allow ? 'allow' : 'reject'} it; cancelled`,
    };
  return {
    outcome: { outcome: 'selected', optionId: chosen.optionId },
    says: `${answer.by} ${allow ? 'allowed' : 'rejected'} ${question.title}${answer.reason ? `: ${answer.reason}` : ''}`,
  };
}
