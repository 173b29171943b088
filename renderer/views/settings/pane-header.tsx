// The title, description and actions at the top of a Settings tab.
import { type ReactNode } from 'react';

export function PaneHeader({
  title,
  description,
  actions,
}: {
  title: string;
  description: ReactNode;
  actions?: ReactNode;
}) {
  return (
    <div className="pane-intro">
      <div>
        <h2>{title}</h2>
        <p className="muted">{description}</p>
      </div>
      {actions && <div className="pane-actions">{actions}</div>}
    </div>
  );
}
