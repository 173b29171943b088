// Settings → Connections: the invitations made here that nobody has used yet. Owners
// cancel them; a peer presenting a cancelled one is refused.
import { useEffect, useState } from 'react';
import type { PendingInvitation } from '../../shared/api-contract';
import { ConfirmDialog, ErrorNote } from '../components/ui';
import { fullTime, shortTime } from '../format';
import { selectInvitations, selectInvitationsError, useInvitations } from '../state/invitations';
import './pending-invitations.css';

export function PendingInvitations({ isOwner }: { isOwner: boolean }) {
  const list = useInvitations(selectInvitations);
  const error = useInvitations(selectInvitationsError);
  const [cancelling, setCancelling] = useState<PendingInvitation | null>(null);
  useEffect(() => {
    void useInvitations.getState().load();
  }, []);
  if (error && !list) return <ErrorNote onRetry={() => void useInvitations.getState().load()}>{error}</ErrorNote>;
  if (!list || list.length === 0) return null;
  return (
    <section className="pending-invitations card" aria-labelledby="pending-invitations-title">
      <h3 id="pending-invitations-title">Invitations waiting to be used</h3>
      <p className="muted small">
        Codes you made that no one has used yet. Each works once, until it expires; cancel one you sent to the wrong
        person or no longer want used.
      </p>
      <ul className="pending-invitation-list">
        {list.map((invitation) => (
          <li key={invitation.id} className="pending-invitation" aria-label={`Invitation ${invitation.id}`}>
            <span className="pending-invitation-text">
              <span>
                {invitation.roles.length > 0
                  ? `They may address ${invitation.roles.join(', ')}`
                  : 'They may address none of your roles'}
              </span>
              <span className="muted small">
                Made{invitation.createdBy ? ` by ${invitation.createdBy.name}` : ''}{' '}
                <time dateTime={invitation.createdAt} title={fullTime(invitation.createdAt)}>
                  {shortTime(invitation.createdAt)}
                </time>{' '}
                · expires{' '}
                <time dateTime={invitation.expiresAt} title={fullTime(invitation.expiresAt)}>
                  {shortTime(invitation.expiresAt)}
                </time>
              </span>
            </span>
            {isOwner && (
              <button
                type="button"
                className="btn btn-ghost btn-sm btn-danger-text"
                onClick={() => setCancelling(invitation)}
              >
                Cancel
              </button>
            )}
          </li>
        ))}
      </ul>
      {cancelling && (
        <ConfirmDialog
          title="Cancel this invitation?"
          body={<p>Whoever has the code can no longer connect with it. You can make a new one at any time.</p>}
          confirm="Cancel invitation"
          onConfirm={() => useInvitations.getState().cancel(cancelling.id)}
          onClose={() => setCancelling(null)}
        />
      )}
    </section>
  );
}
