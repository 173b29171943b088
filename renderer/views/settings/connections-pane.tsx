// Settings › Connections: the peers this installation is paired with, and inviting or accepting a new one.
import { useEffect, useState } from 'react';
import { LinkIcon, PlugIcon, PlusIcon } from '../../components/icons';
import { EmptyState, ErrorNote, Loading } from '../../components/ui';
import { selectConnections, selectConnectionsError, useConnections } from '../../state/connections';
import { selectIsOwner, useSession } from '../../state/session';
import { selectPendingInvitation, useUi } from '../../state/ui';
import { PeerAddressCard } from '../peer-address';
import { NotificationsButton } from './connection-remembered';
import { PendingInvitations } from '../pending-invitations';
import { RelayList } from '../relay-list';
import { ConnectionCard } from './connection-card';
import { AcceptDialog, InviteDialog } from './invite-dialogs';
import { PaneHeader } from './pane-header';

export function ConnectionsPane() {
  const list = useConnections(selectConnections);
  const error = useConnections(selectConnectionsError);
  const load = useConnections((s) => s.load);
  const isOwner = useSession(selectIsOwner);
  const pending = useUi(selectPendingInvitation);
  const [dialog, setDialog] = useState<'invite' | 'accept' | null>(null);
  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    if (pending && isOwner) setDialog('accept');
  }, [pending, isOwner]);
  return (
    <section aria-label="Connections">
      <PaneHeader
        title="Connections"
        description="Installations this one is paired with. Their roles and yours talk only through these."
        actions={
          <>
            <NotificationsButton />
            {isOwner && (
              <>
                <button type="button" className="btn btn-secondary" onClick={() => setDialog('accept')}>
                  <LinkIcon size={16} />
                  Accept
                </button>
                <button type="button" className="btn btn-primary" onClick={() => setDialog('invite')}>
                  <PlusIcon size={16} />
                  Invite
                </button>
              </>
            )}
          </>
        }
      />
      <PeerAddressCard />
      <PendingInvitations isOwner={isOwner} />
      <RelayList isOwner={isOwner} />
      {error && !list && <ErrorNote onRetry={() => void load()}>{error}</ErrorNote>}
      {!list && !error && <Loading />}
      {list?.length === 0 && (
        <EmptyState icon={<PlugIcon size={28} />} title="Not connected to anyone yet">
          {isOwner
            ? 'Invite another installation’s owner, or accept the invitation they sent you.'
            : 'An owner of this installation pairs it with others.'}
        </EmptyState>
      )}
      <ul className="connection-list">
        {list?.map((connection) => (
          <li key={connection.id}>
            <ConnectionCard connection={connection} isOwner={isOwner} />
          </li>
        ))}
      </ul>
      {dialog === 'invite' && <InviteDialog onClose={() => setDialog(null)} />}
      {dialog === 'accept' && (
        <AcceptDialog
          initial={pending ?? ''}
          onClose={() => {
            setDialog(null);
            useUi.getState().offerInvitation(null);
          }}
        />
      )}
    </section>
  );
}
