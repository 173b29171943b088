// The store's side of "always allow": the rules of one peer role, asked of the pure
// decision in ./allow-rules.ts.
import type { ApprovalKind, ContextKind } from '../../shared/domain';
import type { Db } from '../store/database';
import { allowRulesFor, type AllowRuleRow } from '../store/queries/allow-rules';
import { get } from '../store/sql';
import { allowingRule, threadAsk, type AskFacts } from './allow-rules';

interface ThreadPlace {
  connection_id: number;
  peer_role: string;
  root_kind: ContextKind;
  root_id: number;
}

/** The rule that lets a text or a tool request in this agent conversation through, if a person made one. */
export function ruleAllowing(
  db: Db,
  kind: ApprovalKind,
  thread: ThreadPlace,
  tool: string | null = null,
): AllowRuleRow | undefined {
  return allowingRule(allowRulesFor(db, thread.connection_id, thread.peer_role), threadAsk(kind, thread, tool));
}

/** The agent conversation a run works in, when it works in one. */
export function threadPlace(db: Db, context: { kind: ContextKind; id: number }): ThreadPlace | undefined {
  if (context.kind !== 'thread') return undefined;
  return get<ThreadPlace>(
    db,
    'SELECT connection_id, peer_role, root_kind, root_id FROM threads WHERE id = ?',
    context.id,
  );
}

/** The tool a request names, as rules remember it: its kind when the agent gave one, else its title. */
export function toolOf(title: string, detail: unknown): string {
  const toolKind = (detail as { toolKind?: unknown } | null)?.toolKind;
  return typeof toolKind === 'string' && toolKind !== '' ? toolKind : title;
}

/** What an approval asked, for making a rule from it; undefined when no peer role is involved. */
export function approvalAsk(
  db: Db,
  approval: {
    kind: ApprovalKind;
    context_kind: ContextKind;
    context_id: number;
    text_id: number | null;
    title: string;
    detail: string | null;
  },
): AskFacts | undefined {
  const thread =
    approval.text_id !== null
      ? get<ThreadPlace>(
          db,
          `SELECT threads.connection_id, threads.peer_role, threads.root_kind, threads.root_id
           FROM texts JOIN threads ON threads.id = texts.thread_id WHERE texts.id = ?`,
          approval.text_id,
        )
      : threadPlace(db, { kind: approval.context_kind, id: approval.context_id });
  if (!thread) return undefined;
  const detail = approval.detail === null ? null : (JSON.parse(approval.detail) as unknown);
  return threadAsk(approval.kind, thread, approval.kind === 'permission' ? toolOf(approval.title, detail) : null);
}
