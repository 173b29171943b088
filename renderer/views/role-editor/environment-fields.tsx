// The environment of an agent's process in the role editor: the names whose values are
// stored (each kept or removed, never shown), and new or replacing KEY=value lines.
import { useId } from 'react';
import type { Controls } from './form-controls';

export function EnvironmentFields({ controls: { form, set, field, area } }: { controls: Controls }) {
  const storedId = useId();
  const storedNames = Object.keys(form.storedEnv);
  return (
    <>
      {storedNames.length > 0 && (
        <div className="field">
          <span className="field-label" id={storedId}>
            Stored environment values
          </span>
          <ul className="stored-env" aria-labelledby={storedId}>
            {storedNames.map((name) => {
              const keep = form.storedEnv[name];
              return (
                <li key={name} className={keep ? undefined : 'removed'}>
                  <code>{name}</code>
                  <span className="muted small">{keep ? 'set' : 'will be removed'}</span>
                  <button
                    type="button"
                    className="btn btn-ghost btn-sm"
                    aria-label={`${keep ? 'Remove' : 'Keep'} ${name}`}
                    onClick={() => set('storedEnv', { ...form.storedEnv, [name]: !keep })}
                  >
                    {keep ? 'Remove' : 'Keep'}
                  </button>
                </li>
              );
            })}
          </ul>
          <span className="field-hint">
            Values are never shown again. To replace one, write NAME=new value below. A new command or folder needs them
            given again.
          </span>
        </div>
      )}
      {field(
        'env',
        storedNames.length > 0 ? 'New or replaced values' : 'Environment',
        area('env', 3, 'KEY=value'),
        'One KEY=value per line; optional.',
      )}
    </>
  );
}
