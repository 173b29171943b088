// The role picker: open (or go to) the conversation with a role.
import { selectConversations, useConversations } from '../state/conversations';
import { selectRoles, useRoles } from '../state/roles';
import { selectIsOwner, useSession } from '../state/session';
import { useUi } from '../state/ui';
import { Avatar, Dialog, EmptyState, useAction } from './ui';

export function RolePicker({ onPicked }: { onPicked?: () => void }) {
  const roles = useRoles(selectRoles);
  const conversations = useConversations(selectConversations);
  const open = useConversations((s) => s.open);
  const navigate = useUi((s) => s.navigate);
  const isOwner = useSession(selectIsOwner);
  const [busy, run] = useAction();
  if (roles && roles.length === 0)
    return (
      <EmptyState title="No roles yet">
        {isOwner ? (
          <>
            Make one under{' '}
            <button
              type="button"
              className="link-button"
              onClick={() => {
                onPicked?.();
                navigate({ kind: 'settings', tab: 'roles' });
              }}
            >
              Settings → Roles
            </button>
            .
          </>
        ) : (
          'An owner of this installation makes roles.'
        )}
      </EmptyState>
    );
  return (
    <ul className="role-picker" aria-label="Roles">
      {roles?.map((role) => {
        const existing = conversations?.find((c) => c.roleId === role.id);
        return (
          <li key={role.id}>
            <button
              type="button"
              className="role-choice"
              disabled={busy}
              onClick={() =>
                void run(async () => {
                  const conversation = existing ?? (await open(role.id));
                  onPicked?.();
                  navigate({ kind: 'conversation', id: conversation.id });
                })
              }
            >
              <Avatar name={role.name} square />
              <span className="role-choice-text">
                <strong>{role.name}</strong>
                <span className="muted">{role.description || `A ${role.agent.adapter} agent`}</span>
              </span>
              <span className="role-choice-action">{existing ? 'Open' : 'Start'}</span>
            </button>
          </li>
        );
      })}
    </ul>
  );
}

export function NewConversationDialog({ onClose }: { onClose: () => void }) {
  return (
    <Dialog
      title="Start a conversation"
      description="One conversation per role; pick whom to talk to."
      onClose={onClose}
    >
      <RolePicker onPicked={onClose} />
    </Dialog>
  );
}
