// Agent conversations that peers started (each its own root, with the relays made on
// its behalf inside), and — for owners — those whose conversation or task was deleted.
import { sidebarCounts } from '../attention-facts';
import { ArchiveIcon, InboxIcon } from '../components/icons';
import { ThreadList } from '../components/threads';
import { EmptyState } from '../components/ui';
import { selectAttention, useAttention } from '../state/attention';
import { selectIsOwner, useSession } from '../state/session';

export function PeerThreadsView() {
  const unread = sidebarCounts(useAttention(selectAttention)?.marks ?? []).peerStarted;
  return (
    <div className="view list-view">
      <header className="view-header">
        <span className="view-icon" aria-hidden="true">
          <InboxIcon size={22} />
        </span>
        <div className="view-title">
          <h1>Started by peers</h1>
          <p className="muted">
            Questions the roles of your connections asked the roles here. Each is a topic of its own; what a role asked
            others on its behalf shows inside it.
          </p>
        </div>
        {unread > 0 && (
          <div className="view-actions">
            <button
              type="button"
              className="btn btn-ghost btn-sm"
              onClick={() => void useAttention.getState().markRead({ kind: 'peerStarted' })}
            >
              Mark all read
            </button>
          </div>
        )}
      </header>
      <div className="list-body">
        <ThreadList
          listKey="peer"
          empty={
            <EmptyState icon={<InboxIcon size={28} />} title="Nothing from peers yet">
              When a connected installation&rsquo;s role asks one of your roles something, it shows up here.
            </EmptyState>
          }
        />
      </div>
    </div>
  );
}

export function OrphanedThreadsView() {
  const isOwner = useSession(selectIsOwner);
  return (
    <div className="view list-view">
      <header className="view-header">
        <span className="view-icon" aria-hidden="true">
          <ArchiveIcon size={22} />
        </span>
        <div className="view-title">
          <h1>From deleted chats and tasks</h1>
          <p className="muted">
            Agent conversations whose conversation or task was deleted. They are closed; their history stays, for owners
            only.
          </p>
        </div>
      </header>
      <div className="list-body">
        {isOwner ? (
          <ThreadList
            listKey="orphaned"
            groupByRoot
            empty={<EmptyState icon={<ArchiveIcon size={28} />} title="Nothing left from deleted conversations" />}
          />
        ) : (
          <EmptyState title="Only owners read these" />
        )}
      </div>
    </div>
  );
}
