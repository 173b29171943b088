// One agent conversation's card: who it is with, its state, its last text and what waits
// for an approval; opened, its detail. A peer-started one's detail ends with the
// conversations its agent started on its behalf, as cards of their own.
import { memo, useEffect, useId, useMemo } from 'react';
import type { TextView, ThreadSummary } from '../../../shared/domain';
import { oneLine, plural, shortTime } from '../../format';
import { approvalsOfThread, selectApprovals, useApprovals } from '../../state/approvals';
import { selectUnread, useAttention } from '../../state/attention';
import { selectConnection, useConnections } from '../../state/connections';
import { selectThread, selectThreadList, useThreads, type ThreadListKey } from '../../state/threads';
import { selectExpandedThreads, useUi } from '../../state/ui';
import { cardStatus } from '../../thread-filters';
import { textLabel, waitingForAgent, type TextLabel } from '../../thread-facts';
import {
  connectionState,
  connectionStateLabel,
  connectionStateNote,
  connectionStateTone,
} from '../../connection-facts';
import { canWithdraw, peerKey } from '../../ask-facts';
import { WaitingForApproval } from '../approvals';
import { cardShape } from '../card-heights';
import { ArrowInIcon, ArrowOutIcon, ChevronIcon } from '../icons';
import { TextWithCode } from '../text-with-code';
import { useBannerConnections } from '../thread-panel-bar';
import { Avatar, Badge, isActive, RunStateBadge, StopButton, TextStateBadge, UnreadBadge, useAction } from '../ui';
import { ThreadDetailView } from './thread-detail';

const startedLabel = (t: ThreadSummary) =>
  t.startedBy === 'local' ? `${t.localRole} asked` : `${t.connection.name} asked ${t.localRole}`;

/** The label of a card's last text, from what the summary knows. */
function lastTextLabel(thread: ThreadSummary, last: TextView): TextLabel {
  const peer = peerKey(thread);
  const turn = thread.run.lastTurn;
  return textLabel(last, peer, {
    withAgent: last.direction === 'in' && isActive(thread.run) && waitingForAgent(thread) === 0,
    peerTurn: thread.peerTurn,
    ...(turn && last.takenByTurnId === turn.id ? { turn } : {}),
  });
}

export const ThreadCard = memo(function ThreadCard({
  id,
  expanded,
  onToggle,
  nested,
}: {
  id: number;
  expanded: boolean;
  onToggle: (id: number) => void;
  nested?: boolean;
}) {
  const thread = useThreads(selectThread(id));
  const connection = useConnections(selectConnection(thread?.connection.id ?? 0));
  const stop = useThreads((s) => s.stop);
  const withdraw = useThreads((s) => s.withdraw);
  const [withdrawing, runWithdraw] = useAction();
  const approvals = useApprovals(selectApprovals);
  // Opened, its held texts carry their own Approve and Deny; a tool request has no text.
  const waiting = useMemo(
    () => approvalsOfThread(approvals, id).filter((a) => !expanded || a.kind === 'permission'),
    [approvals, id, expanded],
  );
  const unread = useAttention(selectUnread({ kind: 'thread', id }));
  const bannered = useBannerConnections();
  const detailId = useId();
  if (!thread) return null;
  const peer = peerKey(thread);
  const last = thread.lastText;
  const failed = thread.counts.failed;
  const waitingTexts = waitingForAgent(thread);
  const active = isActive(thread.run);
  const linkState = connectionState(connection);
  // Offline and paused matter while the conversation is open; a revoke, always.
  const shownState = linkState === 'revoked' || thread.status === 'open' ? linkState : null;
  const status = cardStatus(thread, linkState);
  // Cards of one shape have one height; an unread mark or an approval may add to it.
  const shape = !expanded && waiting.length === 0 && unread === 0 ? cardShape(thread, linkState) : undefined;
  return (
    <article
      data-shape={shape}
      data-thread-id={id}
      className={`thread-card thread-${thread.status} run-${thread.run.state}${nested ? ' thread-nested' : ''}${expanded ? ' is-expanded' : ''}`}
      aria-label={`Agent conversation with ${peer}`}
    >
      <div className="thread-head">
        <button
          type="button"
          className="thread-toggle"
          aria-expanded={expanded}
          aria-controls={expanded ? detailId : undefined}
          onClick={() => onToggle(id)}
        >
          <ChevronIcon size={14} />
          <Avatar name={thread.connection.name} size="sm" />
          <span className="thread-title">
            <span className="thread-peer" title={peer}>
              <strong title={`certificate ${thread.connection.fingerprint.slice(0, 16)}…`}>
                {thread.connection.name}
              </strong>
              <span className="sep">/</span>
              {thread.peerRole}
            </span>
            <span className="thread-sub">
              {startedLabel(thread)} · {shortTime(last?.createdAt ?? thread.createdAt)}
            </span>
          </span>
        </button>
        <div className="thread-state">
          <UnreadBadge count={unread} />
          {/* One status: the run's while the agent works, else the connection's, else open or closed. */}
          {status.kind === 'run' && <RunStateBadge run={thread.run} hideIdle />}
          {status.kind === 'connection' && (
            <Badge
              tone={connectionStateTone[status.state]}
              title={connectionStateNote(status.state, thread.connection.name)}
            >
              {connectionStateLabel[status.state]}
            </Badge>
          )}
          {status.kind === 'closed' && (
            <Badge tone="neutral" title={thread.closeReason ?? undefined}>
              Closed
            </Badge>
          )}
          {status.kind === 'open' && <Badge tone="good">Open</Badge>}
          {active && <StopButton size="sm" onStop={() => stop(id)} disabled={thread.run.state === 'stopping'} />}
          {canWithdraw(thread) && (
            <button
              type="button"
              className="link-button"
              disabled={withdrawing}
              aria-label={`Withdraw the ask to ${peer}`}
              onClick={() => void runWithdraw(() => withdraw(id))}
            >
              Withdraw
            </button>
          )}
        </div>
      </div>
      {thread.withdrawn && !canWithdraw(thread) && thread.lastText?.seq === thread.withdrawn.seq && (
        <p className="thread-withdrawn">
          Withdrawn by {thread.withdrawn.by} · {shortTime(thread.withdrawn.at)}
        </p>
      )}
      {thread.status === 'closed' && thread.closeReason && (
        <p className="thread-close-reason" title={thread.closeReason}>
          Closed: <TextWithCode text={thread.closeReason} />
        </p>
      )}
      {shownState && shownState !== 'revoked' && !bannered.has(thread.connection.id) && (
        <p className={`thread-connection-note note-${shownState}`}>
          {connectionStateNote(shownState, thread.connection.name)}
        </p>
      )}
      {last && !expanded && (
        <p className="thread-last">
          {last.direction === 'out' ? <ArrowOutIcon size={14} /> : <ArrowInIcon size={14} />}
          <span className="thread-last-body" title={oneLine(last.body, 400)}>
            {oneLine(last.body, 160)}
          </span>
          <TextStateBadge label={lastTextLabel(thread, last)} reason={last.reason} />
        </p>
      )}
      {!expanded && (failed > 0 || waitingTexts > 0) && (
        <p className="thread-counts">
          {failed > 0 && <Badge tone="bad">{plural(failed, 'failed text')}</Badge>}
          {waitingTexts > 0 && (
            <Badge tone="warn">
              {waitingTexts} {active ? 'more ' : ''}waiting for the agent
            </Badge>
          )}
        </p>
      )}
      <WaitingForApproval approvals={waiting} compact />
      {expanded && (
        <div id={detailId}>
          <ThreadDetailView id={id}>{thread.startedBy === 'peer' && <Relays rootThreadId={id} />}</ThreadDetailView>
        </div>
      )}
    </article>
  );
});

/** Agent conversations rooted in a peer-started one: the relays made on its behalf. */
function Relays({ rootThreadId }: { rootThreadId: number }) {
  const key: ThreadListKey = `thread:${rootThreadId}`;
  const list = useThreads(selectThreadList(key));
  const loadList = useThreads((s) => s.loadList);
  const expanded = useUi(selectExpandedThreads);
  const toggle = useUi((s) => s.toggleThread);
  useEffect(() => {
    void loadList(key);
  }, [key, loadList]);
  // A peer-started thread is its own root: it is in its own list.
  const ids = list?.ids?.filter((id) => id !== rootThreadId) ?? [];
  if (ids.length === 0) return null;
  return (
    <section className="relays" aria-label="Asked on its behalf">
      <h4>Asked on its behalf</h4>
      {ids.map((id) => (
        <ThreadCard key={id} id={id} expanded={expanded.has(id)} onToggle={toggle} nested />
      ))}
    </section>
  );
}
