// What waits for a person's approval, shown where they work: Approve and Deny under the
// chat line that made an ask (ask-state.tsx), on the agent conversation's card and its
// held texts, and above the composer of a conversation or task for what has no chat
// line (a peer's text held before the agent takes it, an agent's request to use a tool).
import { useId, useState } from 'react';
import type { ApprovalView } from '../../shared/domain';
import { useApprovals } from '../state/approvals';
import { AlwaysAllowMenu } from './always-allow';
import { ArrowInIcon, ArrowOutIcon, AlertIcon } from './icons';
import { useAction } from './ui';

/** What an approval is about, in a few words: the end of its buttons' names. */
export function approvalSubject(approval: ApprovalView): string {
  const peer = approval.thread?.peer ?? 'the peer';
  switch (approval.kind) {
    case 'outgoing':
      return `text #${approval.text?.seq ?? '?'} to ${peer}`;
    case 'incoming':
      return `text #${approval.text?.seq ?? '?'} from ${peer}`;
    case 'permission':
      return `${approval.role} using ${approval.title}`;
  }
}

/** Who decides, for a person who may read it but not decide it. */
function waitsFor(approval: ApprovalView): string {
  return approval.kind === 'incoming' ? 'Waiting for approval' : 'Waiting for an owner’s approval';
}

/** Approve and Deny; or, when it is not the person's to decide, whom it waits for. */
export function ApprovalActions({ approval }: { approval: ApprovalView }) {
  const decide = useApprovals((s) => s.decide);
  const [busy, run] = useAction();
  if (!approval.canDecide) return <span className="approval-who">{waitsFor(approval)}</span>;
  const subject = approvalSubject(approval);
  return (
    <span className="approval-actions">
      <button
        type="button"
        className="btn btn-primary btn-sm"
        disabled={busy}
        aria-label={`Approve ${subject}`}
        onClick={() => void run(() => decide(approval.id, true))}
      >
        Approve
      </button>
      <button
        type="button"
        className="btn btn-secondary btn-sm"
        disabled={busy}
        aria-label={`Deny ${subject}`}
        onClick={() => void run(() => decide(approval.id, false))}
      >
        Deny
      </button>
      <AlwaysAllowMenu approval={approval} busy={busy} run={run} />
    </span>
  );
}

/** One sentence on what waits. */
function approvalWords(approval: ApprovalView): string {
  const peer = approval.thread?.peer ?? 'a peer';
  switch (approval.kind) {
    case 'outgoing':
      return `${approval.role} wants to send text #${approval.text?.seq ?? '?'} to ${peer}`;
    case 'incoming':
      return `${peer} wrote to ${approval.role}; it waits before the agent takes it`;
    case 'permission':
      return `${approval.role} asks to use ${approval.title}`;
  }
}

/** What a tool request says it will do. */
function permissionInput(approval: ApprovalView): string | null {
  const detail = approval.detail as { input?: unknown; toolKind?: unknown } | null;
  return typeof detail?.input === 'string' ? detail.input : null;
}

/** A tool's arguments as the agent gave them, laid out when they are JSON. */
function readableInput(input: string): string {
  try {
    return JSON.stringify(JSON.parse(input), null, 2);
  } catch {
    return input;
  }
}

/** A text taller than this many lines (or longer than this) starts folded, with "Show all". */
const FOLDED_LINES = 8;
const FOLDED_CHARS = 600;

/**
 * What the person is asked to let through, to read before deciding: the held text as it
 * was written, or the tool and what it would be given.
 */
export function ApprovalContent({ approval }: { approval: ApprovalView }) {
  const [unfolded, setUnfolded] = useState(false);
  if (approval.kind === 'permission') {
    const input = permissionInput(approval);
    const toolKind = (approval.detail as { toolKind?: unknown } | null)?.toolKind;
    return (
      <div className="approval-content">
        <p className="approval-tool">
          Tool <code>{approval.title}</code>
          {typeof toolKind === 'string' && ` (${toolKind})`}
        </p>
        {input ? (
          <pre className="approval-args" aria-label={`What ${approval.title} would be given`}>
            {readableInput(input)}
          </pre>
        ) : (
          <p className="muted small">The agent gave no arguments.</p>
        )}
      </div>
    );
  }
  const body = approval.text?.preview;
  if (!body) return null;
  const long = body.length > FOLDED_CHARS || body.split('\n').length > FOLDED_LINES;
  return (
    <div className="approval-content">
      <figure
        className="approval-text-figure"
        aria-label={`Text #${approval.text?.seq ?? '?'}${approval.kind === 'outgoing' ? ' to send' : ' received'}`}
      >
        <blockquote className={`approval-text${long && !unfolded ? ' folded' : ''}`}>{body}</blockquote>
      </figure>
      {long && (
        <button
          type="button"
          className="btn btn-ghost btn-sm"
          aria-expanded={unfolded}
          onClick={() => setUnfolded(!unfolded)}
        >
          {unfolded ? 'Show less' : 'Show all'}
        </button>
      )}
    </div>
  );
}

/** A held text or a tool request, with what it says and the person's choice. */
export function ApprovalItem({ approval, withPreview = true }: { approval: ApprovalView; withPreview?: boolean }) {
  const id = useId();
  const Icon = approval.kind === 'outgoing' ? ArrowOutIcon : approval.kind === 'incoming' ? ArrowInIcon : AlertIcon;
  return (
    <li className={`approval-item approval-${approval.kind}`} aria-labelledby={id}>
      <div className="approval-head">
        <Icon size={14} />
        <span id={id} className="approval-words">
          {approvalWords(approval)}
        </span>
        <ApprovalActions approval={approval} />
      </div>
      {withPreview && <ApprovalContent approval={approval} />}
    </li>
  );
}

/**
 * A list of what waits, as a region named "Waiting for approval"; nothing when none waits.
 * `compact`: on an agent conversation's card, which shows the text already.
 */
export function WaitingForApproval({ approvals, compact }: { approvals: readonly ApprovalView[]; compact?: boolean }) {
  if (approvals.length === 0) return null;
  const items = approvals.map((approval) => (
    <ApprovalItem key={approval.id} approval={approval} withPreview={!compact || approval.kind === 'permission'} />
  ));
  // On a card, a list of the card's own: the view's region of the same name is the one landmark.
  if (compact)
    return (
      <div className="approvals approvals-compact">
        <ul aria-label="Waiting for approval">{items}</ul>
      </div>
    );
  return (
    <section className="approvals" aria-label="Waiting for approval">
      <ul>{items}</ul>
    </section>
  );
}
