// A connection's trust level, read by everyone and changed by owners.
import { useId } from 'react';
import type { ConnectionSummary, TrustLevel } from '../../../shared/domain';
import { TRUST_LEVELS } from '../../../shared/domain';
import { useAction } from '../../components/ui';
import { useConnections } from '../../state/connections';

export const trustWords: Record<TrustLevel, { label: string; says: string }> = {
  answer: {
    label: 'Answers only',
    says: 'Agents working for them read the role’s folder and reach only their model; every tool request is denied.',
  },
  work: {
    label: 'Work in the role’s folder',
    says: 'Agents working for them may change files in the role’s folder; tool requests wait for a person.',
  },
  full: {
    label: 'Full: as the role’s own settings',
    says: 'Agents working for them run as the role’s settings say, as they do for you.',
  },
};

/** How far agents working for this peer may reach: owners change it, everyone reads it. */
export function TrustStat({ connection, editable }: { connection: ConnectionSummary; editable: boolean }) {
  const [busy, run] = useAction();
  const id = useId();
  const words = trustWords[connection.trust];
  return (
    <div className="stat">
      <span className="stat-label" id={`${id}-label`}>
        Trust
      </span>
      {editable ? (
        <select
          aria-label={`Trust for ${connection.name}`}
          aria-describedby={`${id}-says`}
          value={connection.trust}
          disabled={busy}
          onChange={(event) => {
            const level = event.target.value as TrustLevel;
            void run(() => useConnections.getState().setTrust(connection.id, level));
          }}
        >
          {TRUST_LEVELS.map((level) => (
            <option key={level} value={level}>
              {trustWords[level].label}
            </option>
          ))}
        </select>
      ) : (
        <span aria-labelledby={`${id}-label`}>{words.label}</span>
      )}
      <span className="muted small" id={`${id}-says`}>
        {words.says}
      </span>
    </div>
  );
}
