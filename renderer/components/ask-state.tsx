// The state of an ask, under the chat line that made it ("asked bob/researcher"): held
// for approval (with Approve and Deny), delivered, working (the peer's agent has it),
// answered, stopped or failed there, or why it was not delivered with the fix when the
// person can apply it. The line is linked to its agent conversation by the PEER/ROLE it
// names, among the agent conversations of this conversation, and to its text by time
// (thread-facts.ts).
import { useEffect, useMemo } from 'react';
import type { Message } from '../../shared/domain';
import { selectConnection, selectConnections, useConnections } from '../store/connections';
import { selectIsOwner, useSession } from '../store/session';
import { selectThread, selectThreadDetail, useThreads, watchThread, type ThreadListKey } from '../store/threads';
import {
  askState,
  canWithdraw,
  linkAsks,
  mentionedPeers,
  peerKey,
  threadAt,
  threadsByPeer,
  type AskLink,
} from '../thread-facts';
import { approvalOfText, selectApprovals, useApprovals } from '../store/approvals';
import { ApprovalActions } from './approvals';
import { ArrowOutIcon } from './icons';
import { useAction } from './ui';

const NONE = new Map<number, AskLink[]>();

/** The asks each role message of a conversation made, keyed by message id. */
export function useAskLinks(conversationId: number, messages: readonly Message[] | undefined): Map<number, AskLink[]> {
  const listKey: ThreadListKey = `conversation:${conversationId}`;
  const ids = useThreads((s) => s.lists[listKey]?.ids);
  const version = useThreads((s) => s.version);
  const connections = useConnections(selectConnections);
  const details = useThreads((s) => s.details);

  // Which PEER/ROLE each role message names (only names of connections count).
  const mentions = useMemo(() => {
    const names = connections?.map((c) => c.name) ?? [];
    const out = new Map<number, string[]>();
    if (!messages || names.length === 0) return out;
    for (const message of messages) {
      if (message.author.kind !== 'role') continue;
      const keys = mentionedPeers(message.body, names);
      if (keys.length > 0) out.set(message.id, keys);
    }
    return out;
  }, [messages, connections]);

  // The agent conversation each of those lines talks about.
  const candidates = useMemo(() => {
    const out = new Map<number, number[]>();
    if (mentions.size === 0 || !ids || !messages) return out;
    const { summaries } = useThreads.getState();
    const byPeer = threadsByPeer(
      ids.map((id) => summaries.get(id)),
      new Set([...mentions.values()].flat()),
    );
    for (const message of messages) {
      const threadIds = (mentions.get(message.id) ?? [])
        .map((key) => threadAt(byPeer.get(key) ?? [], message.createdAt)?.id)
        .filter((id): id is number => id !== undefined);
      if (threadIds.length > 0) out.set(message.id, threadIds);
    }
    return out;
    // `version`: summaries change in place.
  }, [mentions, ids, messages, version]);

  const wanted = useMemo(() => [...new Set([...candidates.values()].flat())].sort((a, b) => a - b), [candidates]);
  const wantedKey = wanted.join(',');
  // Their texts, kept fresh while the conversation is on screen.
  useEffect(() => {
    const ids = wantedKey ? wantedKey.split(',').map(Number) : [];
    const unwatch = ids.map((id) => watchThread(id));
    const { details, loadDetail } = useThreads.getState();
    for (const id of ids) if (!details[id]) void loadDetail(id);
    return () => unwatch.forEach((off) => off());
  }, [wantedKey]);

  return useMemo(() => {
    if (!messages || candidates.size === 0) return NONE;
    return linkAsks(messages, candidates, (id) => details[id]?.texts);
  }, [messages, candidates, details]);
}

/** One ask's line: the peer role, its state in words, and the fix when there is one here. */
export function AskLine({ link }: { link: AskLink }) {
  const thread = useThreads(selectThread(link.threadId));
  const detail = useThreads(selectThreadDetail(link.threadId));
  const connection = useConnections(selectConnection(thread?.connection.id ?? 0));
  const isOwner = useSession(selectIsOwner);
  const approvals = useApprovals(selectApprovals);
  const [busy, run] = useAction();
  const text = detail?.texts.find((t) => t.id === link.textId);
  if (!thread || !detail || !text) return null;
  const approval = text.state === 'held' ? approvalOfText(approvals, text.id) : undefined;
  const state = askState(text, detail.texts, thread, connection, isOwner, approval?.canDecide ?? false);
  return (
    <p className={`ask-state ask-${state.tone}`}>
      {state.tone === 'accent' ? <span className="dot" aria-hidden="true" /> : <ArrowOutIcon size={13} />}
      <span className="ask-peer">{peerKey(thread)}</span>
      <span className="ask-words">{state.words}</span>
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
    </p>
  );
}
