// Settings: connections to peers, the people of this installation and its roles.
// Everyone reads them; the owner's controls are not there for members (main refuses
// them anyway).
import { useId, type ReactNode } from 'react';
import { GearIcon, PeopleIcon, PlugIcon, RobotIcon } from '../components/icons';
import { useTabs } from '../components/tabs';
import { useUi, type SettingsTab } from '../state/ui';
import { ConnectionsPane } from './settings/connections-pane';
import { PeoplePane } from './settings/people-pane';
import { RolesPane } from './settings/roles-pane';

const tabs: Array<{ id: SettingsTab; label: string; icon: ReactNode }> = [
  { id: 'connections', label: 'Connections', icon: <PlugIcon size={16} /> },
  { id: 'people', label: 'People', icon: <PeopleIcon size={16} /> },
  { id: 'roles', label: 'Roles', icon: <RobotIcon size={16} /> },
];

const tabIds = tabs.map((t) => t.id);

export function SettingsView({ tab }: { tab: SettingsTab }) {
  const navigate = useUi((s) => s.navigate);
  const tabsId = useId();
  const tabProps = useTabs(tabIds, tab, (id) => navigate({ kind: 'settings', tab: id }));
  return (
    <div className="view settings-view">
      <header className="view-header">
        <span className="view-icon" aria-hidden="true">
          <GearIcon size={22} />
        </span>
        <div className="view-title">
          <h1>Settings</h1>
          <p className="muted">Connections to other installations, the people here and their roles.</p>
        </div>
      </header>
      <div className="tabs" role="tablist" aria-label="Settings">
        {tabs.map((t) => (
          <button
            key={t.id}
            type="button"
            {...tabProps(t.id)}
            id={`${tabsId}-${t.id}`}
            aria-controls={`${tabsId}-panel`}
            className="tab"
          >
            {t.icon}
            {t.label}
          </button>
        ))}
      </div>
      {/* Focusable, as a tab panel is: it scrolls, and a member's may hold no control to reach it by. */}
      <div
        className="settings-body"
        role="tabpanel"
        tabIndex={0}
        id={`${tabsId}-panel`}
        aria-labelledby={`${tabsId}-${tab}`}
      >
        {tab === 'connections' && <ConnectionsPane />}
        {tab === 'people' && <PeoplePane />}
        {tab === 'roles' && <RolesPane />}
      </div>
    </div>
  );
}
