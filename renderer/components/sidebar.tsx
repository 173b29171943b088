// The left column: the person's conversations, the other places, and Settings. Where the
// window is narrow (a small window, or 200% zoom) it folds into a rail with a menu button
// and opens over the page; where it is short, its lower blocks shrink to a row of icons so
// the conversations keep the height.
import { useEffect, useId, useState, type ReactNode } from 'react';
import { sidebarCounts } from '../attention-facts';
import { oneLine } from '../format';
import { selectAttention, selectWaitingCount, useAttention } from '../state/attention';
import { selectConversations, useConversations } from '../state/conversations';
import { selectInstallation, selectIsOwner, selectPerson, useSession } from '../state/session';
import { selectTasks, useTasks } from '../state/tasks';
import { useSwitcher } from '../state/switcher';
import { selectView, useUi, type View } from '../state/ui';
import {
  ArchiveIcon,
  BellIcon,
  GearIcon,
  HomeIcon,
  InboxIcon,
  MenuIcon,
  PlusIcon,
  SearchIcon,
  TasksIcon,
} from './icons';
import { NewConversationDialog } from './new-conversation';
import { Avatar, UnreadBadge } from './ui';
import './sidebar.css';
import { DELETED_ROOTS_LABEL, useHasDeletedRoots } from './deleted-roots-item';

export function Sidebar() {
  const installation = useSession(selectInstallation);
  const person = useSession(selectPerson);
  const isOwner = useSession(selectIsOwner);
  const conversations = useConversations(selectConversations);
  const tasks = useTasks(selectTasks);
  const view = useUi(selectView);
  const showDeletedRoots = useHasDeletedRoots(isOwner, view.kind === 'orphaned');
  const navigate = useUi((s) => s.navigate);
  const [picking, setPicking] = useState(false);
  const [open, setOpen] = useState(false);
  const sidebarId = useId();
  const go = (target: View) => {
    setOpen(false);
    navigate(target);
  };
  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') setOpen(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [open]);
  const openTasks = tasks?.filter((t) => t.status === 'open').length ?? 0;
  const workingTasks = tasks?.filter((t) => t.run.state !== 'idle').length ?? 0;
  const waiting = useAttention(selectWaitingCount);
  const attention = useAttention(selectAttention);
  const marks = useAttention((s) => s.marks);
  const unread = sidebarCounts(attention?.marks ?? []);

  const navItem = (target: View, label: string, icon: ReactNode, extra?: ReactNode) => {
    const current = view.kind === target.kind;
    return (
      <li>
        <button
          type="button"
          className={`nav-item${current ? ' is-current' : ''}`}
          aria-current={current ? 'page' : undefined}
          onClick={() => go(target)}
          title={label}
        >
          {icon}
          <span className="nav-label">{label}</span>
          {extra}
        </button>
      </li>
    );
  };

  return (
    <div className={`sidebar-slot${open ? ' is-open' : ''}`}>
      <div className="sidebar-rail">
        <button
          type="button"
          className="btn btn-ghost btn-icon"
          aria-label={open ? 'Hide the sidebar' : 'Show the sidebar'}
          aria-expanded={open}
          aria-controls={sidebarId}
          onClick={() => setOpen(!open)}
        >
          <MenuIcon />
        </button>
        {waiting > 0 && <UnreadBadge count={waiting} />}
      </div>
      {open && <div className="sidebar-backdrop" aria-hidden="true" onClick={() => setOpen(false)} />}
      <nav className="sidebar" aria-label="Parley" id={sidebarId}>
        <div className="brand">
          <span className="brand-mark" aria-hidden="true">
            P
          </span>
          <div className="brand-text">
            <span className="brand-name">Parley</span>
            {installation && <span className="brand-installation">{installation.name}</span>}
          </div>
        </div>

        <div className="sidebar-search">
          <button
            type="button"
            className="search-button"
            aria-keyshortcuts="Control+K Meta+K"
            onClick={() => useSwitcher.getState().setOpen(true)}
          >
            <SearchIcon size={16} />
            <span className="search-button-label">Search</span>
            <kbd aria-hidden="true">{/Mac|iPhone|iPad/.test(navigator.platform) ? '⌘K' : 'Ctrl K'}</kbd>
          </button>
        </div>

        <div className="sidebar-section">
          <div className="sidebar-heading">
            <h2>Conversations</h2>
            <button
              type="button"
              className="btn btn-ghost btn-icon btn-sm"
              aria-label="New conversation"
              title="New conversation"
              onClick={() => setPicking(true)}
            >
              <PlusIcon size={16} />
            </button>
          </div>
          <ul className="conversation-list">
            {conversations?.map((conversation) => {
              const current = view.kind === 'conversation' && view.id === conversation.id;
              const last = conversation.lastMessage;
              return (
                <li key={conversation.id}>
                  <button
                    type="button"
                    className={`conversation-item${current ? ' is-current' : ''}`}
                    aria-current={current ? 'page' : undefined}
                    onClick={() => go({ kind: 'conversation', id: conversation.id })}
                  >
                    <Avatar name={conversation.roleName} size="sm" square />
                    <span className="conversation-text">
                      <span className="conversation-name">
                        {conversation.roleName}
                        {conversation.run.state !== 'idle' && (
                          <span className={`live-dot run-${conversation.run.state}`} title="Working" />
                        )}
                      </span>
                      <span className="conversation-preview">
                        {last
                          ? oneLine(`${last.author.kind === 'person' ? 'You: ' : ''}${last.body}`, 60)
                          : 'No messages yet'}
                      </span>
                    </span>
                    <UnreadBadge count={marks.get(`conversation:${conversation.id}`) ?? 0} />
                  </button>
                </li>
              );
            })}
            {conversations?.length === 0 && (
              <li>
                <button type="button" className="conversation-start" onClick={() => setPicking(true)}>
                  <PlusIcon size={14} /> Start a conversation
                </button>
              </li>
            )}
          </ul>
        </div>

        <ul className="nav-list">
          {navItem({ kind: 'home' }, 'Home', <HomeIcon />)}
          {navItem({ kind: 'attention' }, 'Waiting on you', <BellIcon />, <UnreadBadge count={waiting} />)}
          {navItem(
            { kind: 'tasks', id: null },
            'Tasks',
            <TasksIcon />,
            <>
              <UnreadBadge count={unread.tasks} />
              {openTasks > 0 && (
                <span className={`count${workingTasks > 0 ? ' count-live' : ''}`} title={`${openTasks} open`}>
                  {openTasks}
                </span>
              )}
            </>,
          )}
          {navItem({ kind: 'peer' }, 'Started by peers', <InboxIcon />, <UnreadBadge count={unread.peerStarted} />)}
          {showDeletedRoots && navItem({ kind: 'orphaned' }, DELETED_ROOTS_LABEL, <ArchiveIcon />)}
        </ul>

        <div className="sidebar-footer">
          {person && (
            <div className="whoami" title={`Signed in as ${person.name} (${person.kind})`}>
              <Avatar name={person.name} size="sm" />
              <span className="whoami-text">
                <span className="whoami-name">{person.name}</span>
                <span className="whoami-kind">{person.kind}</span>
              </span>
            </div>
          )}
          <button
            type="button"
            className={`btn btn-ghost settings-button${view.kind === 'settings' ? ' is-current' : ''}`}
            aria-current={view.kind === 'settings' ? 'page' : undefined}
            onClick={() => go({ kind: 'settings', tab: 'connections' })}
          >
            <GearIcon />
            <span className="settings-label">Settings</span>
          </button>
        </div>
        {picking && <NewConversationDialog onClose={() => setPicking(false)} />}
      </nav>
    </div>
  );
}
