// "Always allow" (DESIGN §12.10 `remember`): which asks a person's earlier choice lets
// through without asking again, and who may make, read and remove such a choice. Pure
// functions over plain rows, like ./rules.ts.
import type { ApprovalKind, ContextKind, RememberScope } from '../../shared/domain';
import { inAudience, type Audience, type Decision, type Viewer } from './rules';

/** The reason recorded on an approval that a remembered "always allow" gave. */
export const ALWAYS_ALLOWED = 'always allowed';

/** A stored rule, as the columns that decide. */
export interface AllowRuleFacts {
  connection_id: number;
  peer_role: string;
  kind: ApprovalKind;
  /** A tool request's tool; null for texts. */
  tool: string | null;
  /** Null: everywhere. */
  root_kind: ContextKind | null;
  root_id: number | null;
  created_by: number | null;
}

/** Something that would wait for a person: which peer role it is for, where, and what. */
export interface AskFacts {
  kind: ApprovalKind;
  connectionId: number;
  peerRole: string;
  /** The tool a request names; null for texts. */
  tool: string | null;
  /** The root of the agent conversation it belongs to. */
  root: { kind: ContextKind; id: number };
}

/** The rule among `rules` that lets `ask` through without a person, if any. */
export function allowingRule<R extends AllowRuleFacts>(rules: readonly R[], ask: AskFacts): R | undefined {
  return rules.find(
    (rule) =>
      rule.connection_id === ask.connectionId &&
      rule.peer_role === ask.peerRole &&
      rule.kind === ask.kind &&
      (rule.kind !== 'permission' || rule.tool === ask.tool) &&
      (rule.root_kind === null || (rule.root_kind === ask.root.kind && rule.root_id === ask.root.id)),
  );
}

/** The rule a person's "always allow" on `ask` makes. */
export function ruleFor(ask: AskFacts, scope: RememberScope): Omit<AllowRuleFacts, 'created_by'> {
  return {
    connection_id: ask.connectionId,
    peer_role: ask.peerRole,
    kind: ask.kind,
    tool: ask.kind === 'permission' ? ask.tool : null,
    root_kind: scope === 'root' ? ask.root.kind : null,
    root_id: scope === 'root' ? ask.root.id : null,
  };
}

const ownersOnly: Decision = { allowed: false, code: 'forbidden', needs: 'an owner' };

/**
 * Whether `viewer`, who may decide this ask (its deciders are `deciders`), may also
 * remember the choice: within its root, whoever decides it; everywhere, owners only, since
 * the rule then decides in roots others read.
 */
export function decideRemember(viewer: Viewer, deciders: Audience, scope: RememberScope): Decision {
  if (!inAudience(viewer, deciders)) return ownersOnly;
  return scope === 'root' || viewer.kind === 'owner' ? { allowed: true } : ownersOnly;
}

/**
 * Whether `viewer` sees a rule in its connection's settings: one that holds everywhere,
 * everyone (like the connection); one within a root, whoever reads that root
 * (`rootReaders`, undefined once it is gone: owners).
 */
export function mayReadRule(viewer: Viewer, rule: AllowRuleFacts, rootReaders: Audience | undefined): boolean {
  if (rule.root_kind === null) return true;
  return inAudience(viewer, rootReaders ?? 'owners');
}

/** Removing a rule: owners, or the person who made it while they still read where it holds. */
export function decideRemoveRule(viewer: Viewer, rule: AllowRuleFacts, rootReaders: Audience | undefined): Decision {
  if (!mayReadRule(viewer, rule, rootReaders)) return { allowed: false, code: 'not_found' };
  return viewer.kind === 'owner' || (rule.created_by !== null && rule.created_by === viewer.id)
    ? { allowed: true }
    : ownersOnly;
}

/** The ask a text or a tool request in an agent conversation makes. */
export function threadAsk(
  kind: ApprovalKind,
  thread: { connection_id: number; peer_role: string; root_kind: ContextKind; root_id: number },
  tool: string | null = null,
): AskFacts {
  return {
    kind,
    connectionId: thread.connection_id,
    peerRole: thread.peer_role,
    tool: kind === 'permission' ? tool : null,
    root: { kind: thread.root_kind, id: thread.root_id },
  };
}
