// The state of an ask, under the chat line of the turn that made it ("bob/researcher"):
// held for approval (with Approve and Deny), delivered, working (the peer's agent has it),
// answered, stopped or failed there, or why it was not delivered with the fix when the
// person can apply it; once a held ask went, who let it through. Which turn sent an ask and
// which turn posted a line are stored and come with the conversation and its agent
// conversations (thread-facts.ts, placeAsks); a turn that posted no line gets a row of its
// own ("asked bob/researcher").
import { useEffect, useMemo } from 'react';
import type { AskRef, Message, ThreadSummary } from '../../shared/domain';
import { selectConnection, useConnections } from '../state/connections';
import { selectIsOwner, useSession } from '../state/session';
import { selectThread, selectThreadDetail, useThreads, watchThread, type ThreadListKey } from '../state/threads';
import { approvedWords, askState, canWithdraw, peerKey, placeAsks, type AskLink, type LoneAsks } from '../ask-facts';
import { approvalOfText, selectApprovals, useApprovals } from '../state/approvals';
import { ApprovalActions, ApprovalContent } from './approvals';
import { ArrowOutIcon } from './icons';
import { useAction } from './ui';

/** The asks the newest texts of a list's agent conversations made from here (their summaries carry them). */
function recentAsks(
  ids: readonly number[] | null | undefined,
  summaries: ReadonlyMap<number, ThreadSummary>,
): AskRef[] {
  const asks: AskRef[] = [];
  for (const id of ids ?? []) {
    const thread = summaries.get(id);
    const last = thread?.lastText;
    if (!thread || thread.startedBy !== 'local' || !last || last.direction !== 'out' || last.sentByTurnId === null)
      continue;
    asks.push({ threadId: thread.id, textId: last.id, sentByTurnId: last.sentByTurnId, createdAt: last.createdAt });
  }
  return asks;
}

const recentAsksKey = (asks: readonly AskRef[]) =>
  asks.map((a) => `${a.threadId}:${a.textId}:${a.sentByTurnId}:${a.createdAt}`).join(',');

export interface AskPlaces {
  /** The asks under each line, by message id. */
  under: Map<number, AskLink[]>;
  /** Asks of turns that posted no line. */
  alone: LoneAsks[];
}

const NONE: AskPlaces = { under: new Map(), alone: [] };

/**
 * Where the asks of a conversation or a task show: under the line of the turn that made
 * each (a message, a log entry), or alone. `stored` is what the root's detail brought.
 */
export function useAskLinks(
  listKey: ThreadListKey,
  stored: readonly AskRef[] | undefined,
  lines: readonly Pick<Message, 'id' | 'postedByTurnId'>[] | undefined,
): AskPlaces {
  // The root's detail brings the asks made by the time it loaded; an agent conversation's
  // newest text brings one made since. Followed as a string, so that a page of the list read
  // (most of whose rows asked nothing from here) does not render the whole view again.
  const recent = useThreads((s) => recentAsksKey(recentAsks(s.lists[listKey]?.ids, s.summaries)));
  const asks = useMemo(() => {
    const byText = new Map<number, AskRef>();
    for (const ask of stored ?? []) byText.set(ask.textId, ask);
    const { lists, summaries } = useThreads.getState();
    for (const ask of recentAsks(lists[listKey]?.ids, summaries))
      if (!byText.has(ask.textId)) byText.set(ask.textId, ask);
    return [...byText.values()];
    // `recent` says what recentAsks returns changed.
  }, [stored, listKey, recent]);

  const wantedKey = useMemo(() => [...new Set(asks.map((a) => a.threadId))].sort((a, b) => a - b).join(','), [asks]);
  // Their texts, kept fresh while the conversation is on screen.
  useEffect(() => {
    const ids = wantedKey ? wantedKey.split(',').map(Number) : [];
    const unwatch = ids.map((id) => watchThread(id));
    const { details, loadDetail } = useThreads.getState();
    for (const id of ids) if (!details[id]) void loadDetail(id);
    return () => unwatch.forEach((off) => off());
  }, [wantedKey]);

  return useMemo(() => (lines && asks.length > 0 ? placeAsks(lines, asks) : NONE), [lines, asks]);
}

/** One ask's line: the peer role, its state in words, and the fix when there is one here. */
export function AskLine({
  link,
  asked = false,
}: {
  link: AskLink;
  /** On a row of its own (the turn posted no line): say that the role asked. */
  asked?: boolean;
}) {
  const thread = useThreads(selectThread(link.threadId));
  const detail = useThreads(selectThreadDetail(link.threadId));
  const connection = useConnections(selectConnection(thread?.connection.id ?? 0));
  const isOwner = useSession(selectIsOwner);
  const approvals = useApprovals(selectApprovals);
  const [busy, run] = useAction();
  let text = detail?.texts.find((t) => t.id === link.textId);
  // Just sent: the summary has it before the detail reloads.
  if (!text && thread?.lastText?.id === link.textId) text = thread.lastText;
  if (!thread || !detail || !text) return null;
  const approval = text.state === 'held' ? approvalOfText(approvals, text.id) : undefined;
  const state = askState(text, detail.texts, thread, connection, isOwner, approval?.canDecide ?? false);
  const approved = approvedWords(text);
  return (
    <div className={`ask-state ask-${state.tone}`}>
      {state.tone === 'accent' ? <span className="dot" aria-hidden="true" /> : <ArrowOutIcon size={13} />}
      <span className="ask-peer">{asked ? `asked ${peerKey(thread)}` : peerKey(thread)}</span>
      <span className="ask-words">{state.words}</span>
      {approved && <span className="ask-approved">{approved}</span>}
      {state.fix === 'unpause' && connection && (
        <button
          type="button"
          className="link-button"
          disabled={busy}
          onClick={() => void run(() => useConnections.getState().unpause(connection.id))}
        >
          Unpause
        </button>
      )}
      {state.fix === 'approve' && approval && <ApprovalActions approval={approval} />}
      {state.tone !== 'good' && text.seq === thread.lastText?.seq && canWithdraw(thread) && (
        <button
          type="button"
          className="link-button"
          disabled={busy}
          onClick={() => void run(() => useThreads.getState().withdraw(thread.id))}
        >
          Withdraw
        </button>
      )}
      {/* What the person lets out, read before deciding (the chat line does not say it). */}
      {state.fix === 'approve' && approval && (
        <div className="ask-held-text">
          <ApprovalContent approval={approval} />
        </div>
      )}
    </div>
  );
}
