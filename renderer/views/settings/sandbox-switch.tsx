// "Run without a sandbox" on a connection card: whether runs working for this peer may
// start on a computer where the agents' sandbox cannot (docs/security.md). Owners switch
// it; others see it only when it is on.
import { useId } from 'react';
import type { ConnectionSummary } from '../../../shared/domain';
import { useAction } from '../../components/ui';
import { useConnections } from '../../state/connections';

export function SandboxSwitch({ connection, editable }: { connection: ConnectionSummary; editable: boolean }) {
  const [busy, run] = useAction();
  const id = useId();
  const without = !connection.sandboxRequired;
  const says = without
    ? `Where the agents’ sandbox cannot start, runs working for ${connection.name} start without it.`
    : `Runs working for ${connection.name} start only inside the agents’ sandbox.`;
  if (!editable && !without) return null;
  return (
    <div className="stat">
      <span className="stat-label">Sandbox</span>
      {editable ? (
        <label className="check">
          <input
            type="checkbox"
            role="switch"
            checked={without}
            disabled={busy}
            aria-describedby={`${id}-says`}
            onChange={(event) => {
              const required = !event.target.checked;
              void run(() => useConnections.getState().setSandboxRequired(connection.id, required));
            }}
          />
          <span>Run without a sandbox</span>
        </label>
      ) : (
        <span>Runs without a sandbox</span>
      )}
      <span className="muted small" id={`${id}-says`}>
        {says}
      </span>
    </div>
  );
}
