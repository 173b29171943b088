// "Waiting on you": what needs the person (decisions, what was not delivered, agents that
// failed, a peer's pause or revoke), kept apart from the answers that came and the work
// that is done. Each item opens where its object is shown, which marks it read; a
// decision also has its Approve and Deny here.
import { useId, type ReactNode } from 'react';
import { attentionSections, type AttentionItem, type AttentionSection } from '../../shared/attention';
import { describeItem } from '../attention-facts';
import { ApprovalActions, ApprovalContent } from '../components/approvals';
import { AlertIcon, BellIcon, ChatIcon, InboxIcon, PauseIcon, PlugIcon, TasksIcon } from '../components/icons';
import { EmptyState, ErrorNote, Loading } from '../components/ui';
import { fullTime, shortTime } from '../format';
import { useApprovals } from '../state/approvals';
import { openItem, selectAttention, useAttention } from '../state/attention';

const sectionHeading: Record<AttentionSection, string> = {
  waiting: 'Needs you',
  answered: 'Answered',
  done: 'Done',
};

const sectionNote: Record<AttentionSection, string> = {
  waiting: 'Decisions to make, and what did not work.',
  answered: 'Your roles answered you.',
  done: 'News on tasks, and what peers’ roles asked yours.',
};

const kindIcon: Record<AttentionItem['kind'], ReactNode> = {
  held: <PauseIcon size={16} />,
  held_in: <PauseIcon size={16} />,
  permission: <AlertIcon size={16} />,
  not_delivered: <AlertIcon size={16} />,
  agent_failed: <AlertIcon size={16} />,
  peer_paused: <PauseIcon size={16} />,
  peer_revoked: <PlugIcon size={16} />,
  answer: <ChatIcon size={16} />,
  task_update: <TasksIcon size={16} />,
  peer_asked: <InboxIcon size={16} />,
};

export function AttentionView() {
  const list = useAttention(selectAttention);
  const error = useAttention((s) => s.error);
  const notifications = useAttention((s) => s.notifications);
  const { load, markRead, enableNotifications } = useAttention.getState();
  const total = list?.total ?? 0;
  return (
    <div className="view list-view attention-view">
      <header className="view-header">
        <span className="view-icon" aria-hidden="true">
          <BellIcon size={22} />
        </span>
        <div className="view-title">
          <h1>Waiting on you</h1>
          <p className="muted">What needs you, apart from answers and finished work, in what you may read.</p>
        </div>
        <div className="view-actions">
          {notifications === 'default' && (
            <button type="button" className="btn btn-secondary btn-sm" onClick={() => void enableNotifications()}>
              <BellIcon size={14} />
              Turn on notifications
            </button>
          )}
          {notifications === 'denied' && (
            <span className="muted small">This browser blocks Parley’s notifications</span>
          )}
          {total > 0 && (
            <button type="button" className="btn btn-ghost btn-sm" onClick={() => void markRead({ kind: 'all' })}>
              Mark all read
            </button>
          )}
        </div>
      </header>
      <div className="list-body attention-body">
        {!list && !error && <Loading />}
        {!list && error && <ErrorNote onRetry={() => void load()}>{error}</ErrorNote>}
        {list && total === 0 && (
          <EmptyState icon={<BellIcon size={28} />} title="Nothing waits on you">
            When a text waits for your approval, something is not delivered, an agent fails or a role answers, it shows
            here.
          </EmptyState>
        )}
        {list &&
          attentionSections.map((section) => (
            <AttentionSectionList
              key={section}
              section={section}
              items={list.items.filter((item) => item.section === section)}
            />
          ))}
        {list && list.total > list.items.length && (
          <p className="muted small attention-more">
            {(list.total - list.items.length).toLocaleString()} more, older; open the newest first.
          </p>
        )}
      </div>
    </div>
  );
}

function AttentionSectionList({ section, items }: { section: AttentionSection; items: AttentionItem[] }) {
  const headingId = useId();
  if (items.length === 0) return null;
  return (
    <section className={`attention-section section-${section}`} aria-labelledby={headingId}>
      <header className="attention-section-header">
        <h2 id={headingId}>
          {sectionHeading[section]} <span className="count">{items.length.toLocaleString()}</span>
        </h2>
        <p className="muted small">{sectionNote[section]}</p>
      </header>
      <ul className="attention-list">
        {items.map((item) => (
          <li key={item.key}>
            <AttentionRow item={item} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function AttentionRow({ item }: { item: AttentionItem }) {
  const { headline, detail } = describeItem(item);
  const open = () => {
    openItem(item);
    // Settings shows a connection, not what the peer did to it: the click is the reading.
    if (item.object.kind === 'connection') void useAttention.getState().markRead(item.object);
  };
  const row = (
    <button type="button" className={`attention-item kind-${item.kind} section-${item.section}`} onClick={open}>
      <span className="attention-icon" aria-hidden="true">
        {kindIcon[item.kind]}
      </span>
      <span className="attention-text">
        <span className="attention-headline">{headline}</span>
        <span className="attention-detail">{detail}</span>
      </span>
      <time className="attention-time" dateTime={item.at} title={fullTime(item.at)}>
        {shortTime(item.at)}
      </time>
    </button>
  );
  if (item.approvalId === undefined) return row;
  return <Decision row={row} approvalId={item.approvalId} />;
}

/** A decision, made here as where the person works: what it lets through, read before Approve and Deny. */
function Decision({ row, approvalId }: { row: ReactNode; approvalId: number }) {
  const approval = useApprovals((s) => s.list?.find((a) => a.id === approvalId));
  return (
    <div className="attention-decision">
      {row}
      {approval && (
        <div className="attention-decision-body">
          <ApprovalContent approval={approval} />
          <ApprovalActions approval={approval} />
        </div>
      )}
    </div>
  );
}
