// Settings › Roles: this installation's agents, each opened in the role editor.
import { useEffect, useState } from 'react';
import type { RoleView } from '../../../shared/domain';
import { PlusIcon, RobotIcon } from '../../components/icons';
import {
  Avatar,
  Badge,
  ConfirmDialog,
  CopyField,
  EmptyState,
  ErrorNote,
  Loading,
  useAction,
} from '../../components/ui';
import { selectRoles, selectRolesError, useRoles } from '../../state/roles';
import { selectIsOwner, useSession } from '../../state/session';
import { adapterLabel } from '../adapter-label';
import { RoleEditor } from '../role-editor';
import { PaneHeader } from './pane-header';

export function describeAgent(role: RoleView): string {
  const a = role.agent;
  switch (a.adapter) {
    case 'command':
      return a.command.join(' ');
    case 'claude-code':
    case 'codex':
      return [a.command ?? (a.adapter === 'codex' ? 'codex' : 'claude'), a.model].filter(Boolean).join(' · ');
    case 'openai-compatible':
      return `${a.model} at ${a.baseUrl}`;
    case 'acp':
      return [a.command.join(' '), a.model].filter(Boolean).join(' · ');
    default:
      return 'Built-in rules';
  }
}

export function RolesPane() {
  const roles = useRoles(selectRoles);
  const error = useRoles(selectRolesError);
  const load = useRoles((s) => s.load);
  const isOwner = useSession(selectIsOwner);
  const [editing, setEditing] = useState<RoleView | 'new' | null>(null);
  const [removing, setRemoving] = useState<RoleView | null>(null);
  const [token, setToken] = useState<{ role: string; token: string } | null>(null);
  const [, run] = useAction();
  useEffect(() => {
    void load();
  }, [load]);
  return (
    <section aria-label="Roles">
      <PaneHeader
        title="Roles"
        description="The agents of this installation. Each has its own agent, settings and instructions."
        actions={
          isOwner && (
            <button type="button" className="btn btn-primary" onClick={() => setEditing('new')}>
              <PlusIcon size={16} />
              New role
            </button>
          )
        }
      />
      {token && (
        <div className="callout" role="status">
          <p>
            A role token for <strong>{token.role}</strong>: scripts read its agent conversations with it; it can never
            send. Shown only now.
          </p>
          <CopyField label="Role token" value={token.token} copyLabel="Copy token" />
          <button type="button" className="btn btn-ghost btn-sm" onClick={() => setToken(null)}>
            Done
          </button>
        </div>
      )}
      {roles?.find((role) => role.unsandboxed) && (
        <p className="callout" role="status">
          Agents start without a sandbox on this computer ({roles.find((role) => role.unsandboxed)!.unsandboxed}). Your
          own runs start; runs working for a peer start only on a connection an owner allowed without a sandbox.
        </p>
      )}
      {roles?.some((role) => role.movedFrom) && (
        <p className="callout" role="status">
          Roles now work in folders of their own, outside Parley’s data folder, which agents can no longer read. Their
          old files stay where they were:{' '}
          {roles
            .filter((role) => role.movedFrom)
            .map((role) => `${role.name} (${role.movedFrom})`)
            .join(', ')}
          .
        </p>
      )}
      {error && !roles && <ErrorNote onRetry={() => void load()}>{error}</ErrorNote>}
      {!roles && !error && <Loading />}
      {roles?.length === 0 && (
        <EmptyState icon={<RobotIcon size={28} />} title="No roles yet">
          {isOwner ? 'Make the first one: an assistant, a researcher…' : 'An owner of this installation makes roles.'}
        </EmptyState>
      )}
      <ul className="role-list">
        {roles?.map((role) => (
          <li key={role.id} className="card role-card" aria-label={`Role ${role.name}`}>
            <Avatar name={role.name} square />
            <div className="role-text">
              <div className="role-title">
                <h3>{role.name}</h3>
                <Badge tone="accent">{adapterLabel[role.agent.adapter]}</Badge>
              </div>
              {role.description && <p>{role.description}</p>}
              <p className="muted small mono">{describeAgent(role)}</p>
            </div>
            {isOwner && (
              <div className="role-actions">
                <button type="button" className="btn btn-secondary btn-sm" onClick={() => setEditing(role)}>
                  Edit
                </button>
                <button
                  type="button"
                  className="btn btn-ghost btn-sm"
                  onClick={() =>
                    void run(async () => setToken({ role: role.name, token: await useRoles.getState().token(role.id) }))
                  }
                >
                  Role token
                </button>
                <button
                  type="button"
                  className="btn btn-ghost btn-sm btn-danger-text"
                  onClick={() => setRemoving(role)}
                >
                  Remove
                </button>
              </div>
            )}
          </li>
        ))}
      </ul>
      {editing && <RoleEditor role={editing === 'new' ? null : editing} onClose={() => setEditing(null)} />}
      {removing && (
        <ConfirmDialog
          title={`Remove the role ${removing.name}?`}
          body={<p>Its agents are stopped, and its conversations and tasks are deleted with it.</p>}
          confirm="Remove"
          onConfirm={() => useRoles.getState().remove(removing.id)}
          onClose={() => setRemoving(null)}
        />
      )}
    </section>
  );
}
