// The window: sign-in when needed, else the sidebar and the view it picked. Stores
// load what they show and stay fresh through the API's change events.
import { lazy, Suspense, useEffect, useState, type FormEvent } from 'react';
import { titleWithCount } from '../shared/attention';
import { RolePicker } from './components/new-conversation';
import { Sidebar } from './components/sidebar';
import { TextWithCode } from './components/text-with-code';
import { Loading } from './components/ui';
import { describeItem } from './attention-facts';
import { oneLine } from './format';
import { openItem, selectAttention, selectWaitingCount, useAttention } from './state/attention';
import { useConnections } from './state/connections';
import { selectConversations, useConversations } from './state/conversations';
import { checklistWanted, selectFirstRun, useFirstRun } from './state/first-run';
import { selectLink, useLink } from './state/link';
import { useApprovals } from './state/approvals';
import { startLiveUpdates } from './state/live';
import { usePeople } from './state/people';
import { useRoles } from './state/roles';
import {
  selectInstallation,
  selectIsOwner,
  selectPerson,
  selectSessionError,
  selectStatus,
  useSession,
} from './state/session';
import { isSwitcherShortcut, useSwitcher } from './state/switcher';
import { useTasks } from './state/tasks';
import { selectPendingInvitation, selectToasts, selectView, useUi } from './state/ui';
import { AttentionView } from './views/attention';
import { ConversationView } from './views/conversation';
import { FirstRunChecklist } from './views/first-run';
import { TasksView } from './views/tasks';
import { OrphanedThreadsView, PeerThreadsView } from './views/threads';

// Settings and the switcher (with search) load when first opened: the first view's script
// carries only what it shows.
const SettingsView = lazy(() => import('./views/settings').then((module) => ({ default: module.SettingsView })));
const Switcher = lazy(() => import('./components/switcher').then((module) => ({ default: module.Switcher })));

export function App() {
  const status = useSession(selectStatus);
  const error = useSession(selectSessionError);
  const load = useSession((s) => s.load);

  useEffect(() => {
    void load();
  }, [load]);

  if (status === 'loading')
    return (
      <main className="splash">
        <span className="brand-mark brand-mark-lg" aria-hidden="true">
          P
        </span>
        <Loading label="Connecting…" />
      </main>
    );
  if (status === 'signed-out') return <SignIn error={error} />;
  if (status === 'failed')
    return (
      <main className="splash">
        <section className="card narrow" role="alert">
          <h1>Parley is not answering</h1>
          <p className="muted">{error && <TextWithCode text={error} />}</p>
          <button type="button" className="btn btn-primary" onClick={() => void load()}>
            Try again
          </button>
        </section>
      </main>
    );
  return <Workspace />;
}

function Workspace() {
  const view = useUi(selectView);
  const navigate = useUi((s) => s.navigate);
  const pendingInvitation = useUi(selectPendingInvitation);
  const conversations = useConversations(selectConversations);
  const isOwner = useSession(selectIsOwner);
  const firstRun = useFirstRun(selectFirstRun);
  const firstRunError = useFirstRun((s) => s.error);
  const switcherOpen = useSwitcher((s) => s.open);
  const [pickedStart, setPickedStart] = useState(false);
  const waiting = useAttention(selectWaitingCount);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!isSwitcherShortcut(event)) return;
      event.preventDefault();
      useSwitcher.getState().setOpen(true);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  useEffect(() => {
    const stop = startLiveUpdates();
    void useFirstRun.getState().load();
    void useConversations.getState().load();
    void useRoles.getState().load();
    void useTasks.getState().load();
    void useConnections.getState().load();
    void usePeople.getState().load();
    void useApprovals.getState().load();
    void useAttention.getState().load();
    return stop;
  }, []);

  // The tab's title counts what waits, as the desktop app's window title does.
  useEffect(() => {
    document.title = titleWithCount(waiting);
  }, [waiting]);

  // Opening the app lands in the most recent conversation, unless an owner's first-run
  // checklist has something left to do.
  useEffect(() => {
    if (pickedStart || !conversations) return;
    if (isOwner && !firstRun && !firstRunError) return;
    setPickedStart(true);
    const first = conversations[0];
    if (isOwner && checklistWanted(firstRun)) return;
    if (useUi.getState().view.kind === 'home' && first) navigate({ kind: 'conversation', id: first.id });
  }, [conversations, pickedStart, navigate, isOwner, firstRun, firstRunError]);

  useEffect(() => {
    if (pendingInvitation) navigate({ kind: 'settings', tab: 'connections' });
  }, [pendingInvitation, navigate]);

  return (
    <div className="shell">
      <Sidebar />
      <main className="main">
        <LinkBanner />
        {view.kind === 'home' && <Home />}
        {view.kind === 'conversation' && <ConversationView key={view.id} id={view.id} />}
        {view.kind === 'tasks' && <TasksView id={view.id} />}
        {view.kind === 'peer' && <PeerThreadsView />}
        {view.kind === 'orphaned' && <OrphanedThreadsView />}
        {view.kind === 'attention' && <AttentionView />}
        {view.kind === 'settings' && (
          <Suspense fallback={<Loading label="Opening Settings…" />}>
            <SettingsView tab={view.tab} />
          </Suspense>
        )}
      </main>
      <Toasts />
      {switcherOpen && (
        <Suspense fallback={null}>
          <Switcher onClose={() => useSwitcher.getState().setOpen(false)} />
        </Suspense>
      )}
    </div>
  );
}

/** While the page cannot reach Parley: says so, counts down to the next try, offers one now. */
function LinkBanner() {
  const { status, retryAt, reconnect } = useLink(selectLink);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (status !== 'lost' || retryAt === null) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [status, retryAt]);
  if (status !== 'lost') return null;
  const seconds = retryAt === null ? 0 : Math.max(0, Math.ceil((retryAt - now) / 1000));
  return (
    <div className="link-banner" role="alert">
      <span>
        <strong>Connection to Parley lost.</strong>{' '}
        {seconds > 0 ? `Trying again in ${seconds} s.` : 'Trying to reconnect…'} What you see may be out of date.
      </span>
      <button type="button" className="btn btn-secondary btn-sm" onClick={reconnect}>
        Reconnect now
      </button>
    </div>
  );
}

function Home() {
  const person = useSession(selectPerson);
  const installation = useSession(selectInstallation);
  const isOwner = useSession(selectIsOwner);
  const firstRun = useFirstRun(selectFirstRun);
  // Once shown, the checklist stays while the page does, so its last tick is seen.
  const [keepChecklist, setKeepChecklist] = useState(false);
  const wanted = isOwner && checklistWanted(firstRun);
  useEffect(() => {
    if (wanted) setKeepChecklist(true);
  }, [wanted]);
  const greeting = <h1>Hello{person ? `, ${person.name}` : ''}</h1>;
  if (firstRun?.offered && !firstRun.dismissed && (wanted || keepChecklist))
    return (
      <div className="view view-center home home-first-run">
        <FirstRunChecklist state={firstRun} greeting={greeting} />
      </div>
    );
  return (
    <div className="view view-center home">
      <div className="home-card">
        {greeting}
        <p className="muted">
          Talk with the roles of {installation?.name ?? 'this installation'}. They can ask the roles of your connections
          for help, and you can follow every exchange.
        </p>
        <HomeWaiting />
        <HomeRecent />
        <h2 className="section-title">Start a conversation</h2>
        <RolePicker />
      </div>
    </div>
  );
}

/** The first few things that need the person, and the way to the rest. */
function HomeWaiting() {
  const list = useAttention(selectAttention);
  const navigate = useUi((s) => s.navigate);
  const waiting = list?.items.filter((item) => item.section === 'waiting') ?? [];
  if (waiting.length === 0) return null;
  return (
    <section className="home-section" aria-labelledby="home-waiting">
      <h2 id="home-waiting" className="section-title">
        Needs you <span className="count">{waiting.length.toLocaleString()}</span>
      </h2>
      <ul className="home-list">
        {waiting.slice(0, 3).map((item) => {
          const { headline, detail } = describeItem(item);
          return (
            <li key={item.key}>
              <button type="button" className="home-item" onClick={() => openItem(item)}>
                <span className="home-item-title">{headline}</span>
                <span className="home-item-detail">{detail}</span>
              </button>
            </li>
          );
        })}
      </ul>
      {waiting.length > 3 && (
        <button type="button" className="btn btn-ghost btn-sm" onClick={() => navigate({ kind: 'attention' })}>
          All that waits on you
        </button>
      )}
    </section>
  );
}

/** The conversations with something new, newest first. */
function HomeRecent() {
  const conversations = useConversations(selectConversations);
  const navigate = useUi((s) => s.navigate);
  const recent = (conversations ?? []).filter((conversation) => conversation.lastMessage).slice(0, 5);
  if (recent.length === 0) return null;
  return (
    <section className="home-section" aria-labelledby="home-recent">
      <h2 id="home-recent" className="section-title">
        Recent
      </h2>
      <ul className="home-list">
        {recent.map((conversation) => (
          <li key={conversation.id}>
            <button
              type="button"
              className="home-item"
              onClick={() => navigate({ kind: 'conversation', id: conversation.id })}
            >
              <span className="home-item-title">{conversation.roleName}</span>
              <span className="home-item-detail">{oneLine(conversation.lastMessage?.body ?? '', 90)}</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Toasts() {
  const toasts = useUi(selectToasts);
  const dismiss = useUi((s) => s.dismiss);
  return (
    <div className="toasts" role="status" aria-live="polite">
      {toasts.map((toast) => (
        <div key={toast.id} className={`toast toast-${toast.tone}`}>
          <span>
            <TextWithCode text={toast.text} />
          </span>
          <button type="button" className="toast-close" aria-label="Dismiss" onClick={() => dismiss(toast.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

function SignIn({ error }: { error: string | null }) {
  const signIn = useSession((s) => s.signIn);
  const signingIn = useSession((s) => s.signingIn);
  const [token, setToken] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = token.trim();
    if (trimmed) void signIn(trimmed);
  };
  return (
    <main className="splash">
      <section className="card narrow sign-in-card" aria-labelledby="sign-in-title">
        <span className="brand-mark brand-mark-lg" aria-hidden="true">
          P
        </span>
        <h1 id="sign-in-title">Sign in to Parley</h1>
        <p className="muted">
          Open the address that <code>parley serve</code> printed, or paste the sign-in token an owner gave you.
        </p>
        <form onSubmit={submit} className="form">
          <label className="field">
            <span className="field-label">Sign-in token</span>
            <input
              type="password"
              autoComplete="off"
              spellCheck={false}
              value={token}
              onChange={(event) => setToken(event.target.value)}
              autoFocus
            />
          </label>
          <button type="submit" className="btn btn-primary btn-block" disabled={token.trim() === '' || signingIn}>
            {signingIn ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        {error && (
          <p className="error" role="alert">
            <TextWithCode text={error} />
          </p>
        )}
      </section>
    </main>
  );
}
