// An opened agent conversation: between whom, its texts with their states and their
// Approve and Deny while held, the agent's live output, how its last turn ended and the
// notes its agent kept.
import { useEffect, useMemo, type ReactNode } from 'react';
import type { TextView, ThreadSummary } from '../../../shared/domain';
import { failureReason, fullTime, shortTime } from '../../format';
import { approvalOfText, selectApprovals, useApprovals } from '../../state/approvals';
import { selectThread, selectThreadDetail, selectThreadError, useThreads, watchThread } from '../../state/threads';
import { answeredAfter, receivedWithAgent, textLabel, type TextLabel } from '../../thread-facts';
import { peerKey } from '../../ask-facts';
import { ApprovalActions } from '../approvals';
import { Markdown } from '../markdown';
import { useMarkSeen } from '../seen';
import { TextWithCode } from '../text-with-code';
import { ArrowInIcon, ArrowOutIcon } from '../icons';
import { ErrorNote, Loading, TextStateBadge } from '../ui';

/** `children` end the detail, once its texts are read. */
export function ThreadDetailView({ id, children }: { id: number; children?: ReactNode }) {
  const thread = useThreads(selectThread(id));
  const detail = useThreads(selectThreadDetail(id));
  const error = useThreads(selectThreadError(id));
  const loadDetail = useThreads((s) => s.loadDetail);

  useEffect(() => watchThread(id), [id]);
  // Open is read: what came in, and what was not delivered.
  useMarkSeen({ kind: 'thread', id });
  useEffect(() => {
    void loadDetail(id);
  }, [id, loadDetail]);
  // Live output arrives as `changed thread` events (at most twice a second), which
  // refresh watched threads; nothing to poll.

  const withAgent = useMemo(
    () => (thread && detail ? receivedWithAgent(detail.texts, thread) : new Set<number>()),
    [thread, detail],
  );
  if (!thread) return null;
  if (!detail) return error ? <ErrorNote>{error}</ErrorNote> : <Loading label="Loading texts…" />;
  const peer = peerKey(thread);
  const lastTurn = thread.run.lastTurn;
  return (
    <div className="thread-detail">
      <dl className="facts">
        <div>
          <dt>Between</dt>
          <dd>
            {thread.localRole} (here) and {peer}
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd title={fullTime(thread.createdAt)}>
            {thread.startedBy === 'local' ? 'here' : `by ${thread.connection.name}`}, {shortTime(thread.createdAt)}
          </dd>
        </div>
      </dl>
      {detail.texts.length === 0 ? (
        <p className="muted small">No texts yet.</p>
      ) : (
        <ol className="texts" aria-label={`Texts with ${peer}`}>
          {detail.texts.map((text) => (
            <TextItem
              key={text.id}
              text={text}
              thread={thread}
              label={textLabel(text, peer, {
                withAgent: withAgent.has(text.id),
                turn: detail.turns.find((turn) => turn.id === text.takenByTurnId),
                peerTurn: thread.peerTurn,
                answered: answeredAfter(text, detail.texts),
              })}
            />
          ))}
        </ol>
      )}
      {detail.live.length > 0 && (
        <section className="live" aria-label="Live output">
          <h4>
            <span className="dot" aria-hidden="true" /> Live output
          </h4>
          <pre>{detail.live.join('\n')}</pre>
        </section>
      )}
      {lastTurn && lastTurn.status !== 'done' && lastTurn.status !== 'running' && (
        <p className={`turn-note turn-${lastTurn.status}`}>
          Last turn {lastTurn.status}
          {lastTurn.reason ? (
            <>
              {' '}
              — <TextWithCode text={lastTurn.reason} />
            </>
          ) : null}
        </p>
      )}
      {detail.runLog.length > 0 && (
        <details className="run-log">
          <summary>
            {thread.localRole}&rsquo;s notes{' '}
            <span className="muted">({detail.runLog.length}, kept here, never sent)</span>
          </summary>
          <ol>
            {detail.runLog.map((entry) => (
              <li key={entry.turnId}>
                <time dateTime={entry.at} title={fullTime(entry.at)}>
                  {shortTime(entry.at)}
                </time>
                <Markdown text={entry.output} />
              </li>
            ))}
          </ol>
        </details>
      )}
      {children}
    </div>
  );
}

function TextItem({ text, thread, label }: { text: TextView; thread: ThreadSummary; label: TextLabel }) {
  const from = text.direction === 'out' ? thread.localRole : peerKey(thread);
  const approvals = useApprovals(selectApprovals);
  const approval = text.state === 'held' ? approvalOfText(approvals, text.id) : undefined;
  return (
    <li className={`text text-${text.direction} text-${text.state}`}>
      <div className="text-meta">
        <span className="text-route">
          {text.direction === 'out' ? <ArrowOutIcon size={13} /> : <ArrowInIcon size={13} />}
          <strong>{from}</strong>
        </span>
        <time dateTime={text.createdAt} title={fullTime(text.createdAt)}>
          {shortTime(text.createdAt)}
        </time>
        <TextStateBadge label={label} reason={text.reason} />
      </div>
      <Markdown text={text.body} className="text-body" />
      {text.state === 'failed' && text.reason !== 'denied' && (
        <p className="text-failure">{failureReason(text.reason, text.failedBy, thread.connection.name)}</p>
      )}
      {label.note && <p className="text-note">{label.note}</p>}
      {approval && (
        <p className="text-approval">
          <span>{label.help}</span>
          <ApprovalActions approval={approval} />
        </p>
      )}
    </li>
  );
}
