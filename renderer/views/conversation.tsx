// A person's conversation with one role: the messages (virtualized, Markdown from the
// role), the composer, the run's state with Stop, and the agent conversations the role
// held with peers for it.
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { Message, RunSummary } from '../../shared/domain';
import { WaitingForApproval } from '../components/approvals';
import { AskLine, useAskLinks, type AskPlaces } from '../components/ask-state';
import { WithThreads } from '../components/layout';
import { Markdown } from '../components/markdown';
import { useMarkSeen } from '../components/seen';
import { SendIcon, TrashIcon, AlertIcon } from '../components/icons';
import { TextWithCode } from '../components/text-with-code';
import { ThreadList } from '../components/threads';
import { VirtualRows } from '../components/virtual-rows';
import {
  Avatar,
  ConfirmDialog,
  EmptyState,
  ErrorNote,
  isActive,
  Loading,
  RunStateBadge,
  StopButton,
  useAction,
  useSendText,
} from '../components/ui';
import { fullTime, shortTime } from '../format';
import type { AskLink, LoneAsks } from '../ask-facts';
import { approvalsForRoot, selectApprovals, useApprovals } from '../state/approvals';
import { messageOf } from '../state/client';
import {
  selectConversation,
  selectConversationDetail,
  selectConversationError,
  selectConversationGone,
  selectMessages,
  useConversations,
} from '../state/conversations';
import { selectRole, useRoles } from '../state/roles';
import { selectPerson, useSession } from '../state/session';
import { useUi } from '../state/ui';
import { LedgerButton } from '../components/ledger-button';
import { useDrafts } from '../state/drafts';
import { JumpToUnread, NewDivider, useFocusDivider, useNewSince } from '../components/unread-divider';

export function ConversationView({ id }: { id: number }) {
  const conversation = useConversations(selectConversation(id));
  const error = useConversations(selectConversationError(id));
  const gone = useConversations(selectConversationGone(id));
  const loadDetail = useConversations((s) => s.loadDetail);
  const stop = useConversations((s) => s.stop);
  const role = useRoles(selectRole(conversation?.roleId));
  const [confirmDelete, setConfirmDelete] = useState(false);

  useEffect(() => {
    void loadDetail(id);
  }, [id, loadDetail]);
  // Shown is read: the role's answers, and an agent that failed here.
  useMarkSeen(conversation && !gone ? { kind: 'conversation', id } : null);

  const active = conversation ? isActive(conversation.run) : false;
  // Esc stops the agent, wherever the focus is (dialogs take Esc for themselves).
  useEffect(() => {
    if (!active) return;
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (event.key !== 'Escape' || event.defaultPrevented || document.querySelector('dialog[open]')) return;
      event.preventDefault();
      void stop(id).catch((e: unknown) => useUi.getState().toast(messageOf(e), 'error'));
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [active, id, stop]);

  if (gone)
    return (
      <div className="view view-center">
        <EmptyState title="This conversation was deleted">
          Its agent conversations were closed; owners can still read them under From deleted chats in the sidebar.
        </EmptyState>
      </div>
    );
  if (!conversation)
    return (
      <div className="view view-center">
        {error ? <ErrorNote onRetry={() => void loadDetail(id)}>{error}</ErrorNote> : <Loading />}
      </div>
    );

  const roleName = conversation.roleName;
  return (
    <div className="view conversation-view">
      <header className="view-header">
        <Avatar name={roleName} size="lg" square />
        <div className="view-title">
          <h1>{roleName}</h1>
          <p className="muted">{role?.description || `Your conversation with ${roleName}`}</p>
        </div>
        <div className="view-actions">
          <LedgerButton root={{ kind: 'conversation', id }} />
          <RunStateBadge run={conversation.run} />
          {active && <StopButton onStop={() => stop(id)} disabled={conversation.run.state === 'stopping'} />}
          <button
            type="button"
            className="btn btn-ghost btn-icon"
            aria-label="Delete conversation"
            title="Delete conversation"
            onClick={() => setConfirmDelete(true)}
          >
            <TrashIcon />
          </button>
        </div>
      </header>
      <WithThreads
        listKey={`conversation:${id}`}
        mainLabel="Chat"
        main={<Chat id={id} roleName={roleName} run={conversation.run} />}
        threads={
          <ThreadList
            listKey={`conversation:${id}`}
            description={`What ${roleName} asked the roles of your connections for this conversation.`}
            empty={
              <EmptyState title="No agent conversations yet">
                When {roleName} asks a role of a connected installation for you, the exchange shows up here with every
                text and its state.
              </EmptyState>
            }
          />
        }
      />
      {confirmDelete && <DeleteConversation id={id} roleName={roleName} onClose={() => setConfirmDelete(false)} />}
    </div>
  );
}

function DeleteConversation({ id, roleName, onClose }: { id: number; roleName: string; onClose: () => void }) {
  const remove = useConversations((s) => s.remove);
  const navigate = useUi((s) => s.navigate);
  return (
    <ConfirmDialog
      title={`Delete your conversation with ${roleName}?`}
      body={
        <>
          <p>Its messages are deleted for good, and {roleName}&rsquo;s agent is stopped.</p>
          <p className="muted">
            Its agent conversations close; their history stays, readable by the installation&rsquo;s owners.
          </p>
        </>
      }
      confirm="Delete"
      onConfirm={async () => {
        await remove(id);
        navigate({ kind: 'home' });
      }}
      onClose={onClose}
    />
  );
}

function Chat({ id, roleName, run }: { id: number; roleName: string; run: RunSummary }) {
  const messages = useConversations(selectMessages(id));
  const error = useConversations(selectConversationError(id));
  const loadDetail = useConversations((s) => s.loadDetail);
  const stop = useConversations((s) => s.stop);
  const storedAsks = useConversations((s) => selectConversationDetail(id)(s)?.asks);
  const asks = useAskLinks(`conversation:${id}`, storedAsks, messages);
  const newSince = useNewSince(id, messages ? (messages.at(-1)?.id ?? 0) : undefined);
  const approvals = useApprovals(selectApprovals);
  // What waits for approval here and has no chat line to show it under: a peer's answer
  // held before the agent takes it, a tool request, a send no line names.
  const unlinked = useMemo(() => {
    const linked = new Set(
      [...asks.under.values(), ...asks.alone.map((row) => row.links)].flat().map((link) => link.textId),
    );
    return approvalsForRoot(approvals, { kind: 'conversation', id }).filter(
      (approval) => !(approval.text && linked.has(approval.text.id)),
    );
  }, [approvals, asks, id]);
  return (
    <section className="chat" aria-label="Messages">
      {messages ? (
        messages.length === 0 ? (
          <div className="chat-empty">
            <EmptyState title={`Say hello to ${roleName}`}>
              Ask a question or give it something to do. It can ask the roles of your connections for help — those
              exchanges appear under Agent conversations.
            </EmptyState>
          </div>
        ) : (
          <MessageList
            messages={messages}
            run={run}
            roleName={roleName}
            asks={asks}
            newSince={newSince}
            asking={unlinked.some((approval) => approval.kind === 'permission')}
          />
        )
      ) : (
        <div className="chat-empty">
          {error ? (
            <ErrorNote onRetry={() => void loadDetail(id)}>{error}</ErrorNote>
          ) : (
            <Loading label="Loading messages…" />
          )}
        </div>
      )}
      <WaitingForApproval approvals={unlinked} />
      <Composer conversationId={id} roleName={roleName} active={isActive(run)} onStop={() => stop(id)} />
    </section>
  );
}

type Row =
  { kind: 'message'; message: Message } | { kind: 'asks'; asks: LoneAsks } | { kind: 'working' } | { kind: 'new' };

/** The messages in order, with each lone turn's asks where its first was made. */
function chatRows(messages: readonly Message[], alone: readonly LoneAsks[]): Row[] {
  const rows: Row[] = [];
  const lone = [...alone].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.turnId - b.turnId));
  let next = 0;
  for (const message of messages) {
    while (next < lone.length && lone[next]!.at < message.createdAt) rows.push({ kind: 'asks', asks: lone[next++]! });
    rows.push({ kind: 'message', message });
  }
  while (next < lone.length) rows.push({ kind: 'asks', asks: lone[next++]! });
  return rows;
}

function MessageList({
  messages,
  run,
  roleName,
  asks,
  newSince,
  asking,
}: {
  messages: Message[];
  /** The first message that was new when the conversation was opened: the "New" line goes above it. */
  newSince: number | null;
  run: RunSummary;
  roleName: string;
  /** The asks under each line, and those of turns that posted none. */
  asks: AskPlaces;
  /** The agent waits for the person's word on a tool it asked to use. */
  asking: boolean;
}) {
  const me = useSession(selectPerson);
  const scrollRef = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  const rows = chatRows(messages, asks.alone);
  const newAt = newSince === null ? -1 : rows.findIndex((row) => row.kind === 'message' && row.message.id >= newSince);
  if (newAt >= 0) rows.splice(newAt, 0, { kind: 'new' });
  const focusDivider = useFocusDivider();
  if (run.state === 'running' || run.state === 'queued') rows.push({ kind: 'working' });
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => 76,
    getItemKey: (index) => {
      const row = rows[index];
      return row?.kind === 'message'
        ? row.message.id
        : row?.kind === 'asks'
          ? `asks-${row.asks.turnId}`
          : (row?.kind ?? index);
    },
    overscan: 8,
  });
  const lastKey = rows.length > 0 ? String(virtualizer.options.getItemKey(rows.length - 1)) : '';
  // New messages keep the view at the bottom, unless the person scrolled up to read.
  useLayoutEffect(() => {
    if (atBottom.current && rows.length > 0) virtualizer.scrollToIndex(rows.length - 1, { align: 'end' });
  }, [rows.length, lastKey, virtualizer]);
  // The "New" line above what is in view: a button takes the person there.
  const dividerRow = newAt >= 0 ? virtualizer.measurementsCache[newAt] : undefined;
  const dividerAbove = dividerRow !== undefined && dividerRow.end <= (virtualizer.scrollOffset ?? 0);
  const jump = () => {
    atBottom.current = false;
    virtualizer.scrollToIndex(newAt, { align: 'start' });
    focusDivider(scrollRef.current);
  };

  return (
    <>
      {dividerAbove && <JumpToUnread onJump={jump} />}
      <div
        ref={scrollRef}
        className="message-scroll"
        // Scrolled by keyboard too when no message holds a link or a button.
        tabIndex={0}
        onScroll={(event) => {
          const el = event.currentTarget;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 120;
        }}
      >
        <VirtualRows virtualizer={virtualizer} itemAt={(index) => rows[index]}>
          {(row) =>
            row.kind === 'new' ? (
              <NewDivider />
            ) : row.kind === 'message' ? (
              <MessageItem
                message={row.message}
                mine={row.message.author.kind === 'person' && row.message.author.id === me?.id}
                asks={asks.under.get(row.message.id)}
              />
            ) : row.kind === 'asks' ? (
              <LoneAskRow roleName={roleName} asks={row.asks} />
            ) : (
              <div className="message message-working" role="status">
                <Avatar name={roleName} size="sm" square />
                <span className="typing" aria-hidden="true">
                  <i />
                  <i />
                  <i />
                </span>
                <span className="muted">
                  {run.state === 'queued'
                    ? `${roleName} will start shortly`
                    : asking
                      ? `${roleName} is waiting for your approval`
                      : run.retrying
                        ? `${roleName} is working — ${run.retrying}`
                        : `${roleName} is working…`}
                </span>
              </div>
            )
          }
        </VirtualRows>
      </div>
    </>
  );
}

/** A turn's asks when it posted no line: the role asked, and each ask's state. */
function LoneAskRow({ roleName, asks }: { roleName: string; asks: LoneAsks }) {
  return (
    <div className="message message-role message-asks">
      <Avatar name={roleName} size="sm" square />
      <div className="message-content">
        <div className="message-meta">
          <strong>{roleName}</strong>
          <time dateTime={asks.at} title={fullTime(asks.at)}>
            {shortTime(asks.at)}
          </time>
        </div>
        {asks.links.map((link) => (
          <AskLine key={link.textId} link={link} asked />
        ))}
      </div>
    </div>
  );
}

const MessageItem = memo(function MessageItem({
  message,
  mine,
  asks,
}: {
  message: Message;
  mine: boolean;
  /** The asks this line made, each with its live state under it. */
  asks?: AskLink[];
}) {
  const time = (
    <time dateTime={message.createdAt} title={fullTime(message.createdAt)}>
      {shortTime(message.createdAt)}
    </time>
  );
  if (message.author.kind === 'system')
    return (
      <div className="message message-system">
        <AlertIcon size={14} />
        <span>
          <TextWithCode text={message.body} />
        </span>
        {time}
      </div>
    );
  if (message.author.kind === 'person')
    return (
      <div className={`message message-person${mine ? ' mine' : ''}`}>
        <div className="bubble">
          <div className="message-meta">
            <strong>{mine ? 'You' : message.author.name}</strong>
            {time}
          </div>
          <p className="message-text">{message.body}</p>
        </div>
      </div>
    );
  return (
    <div className="message message-role">
      <Avatar name={message.author.name} size="sm" square />
      <div className="message-content">
        <div className="message-meta">
          <strong>{message.author.name}</strong>
          {time}
        </div>
        <Markdown text={message.body} />
        {asks?.map((link) => (
          <AskLine key={link.textId} link={link} />
        ))}
      </div>
    </div>
  );
});

function Composer({
  conversationId,
  roleName,
  active,
  onStop,
}: {
  conversationId: number;
  roleName: string;
  active: boolean;
  onStop: () => Promise<unknown>;
}) {
  const send = useConversations((s) => s.send);
  // Drafts survive switching between conversations.
  const text = useDrafts((s) => s.drafts[conversationId] ?? '');
  const [, stopRun] = useAction();
  const inputRef = useRef<HTMLTextAreaElement>(null);

  const update = (value: string) => useDrafts.getState().setDraft(conversationId, value);
  const {
    submit,
    enterSends,
    busy: sending,
    error,
    setError,
  } = useSendText(
    text,
    (body) => send(conversationId, body),
    () => update(''),
  );

  useEffect(() => {
    setError(null);
    inputRef.current?.focus();
  }, [conversationId, setError]);

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (enterSends(event)) return;
    if (event.key === 'Escape' && active) {
      event.preventDefault();
      void stopRun(onStop);
    }
  };

  return (
    <form className="composer" onSubmit={submit}>
      <div className="composer-box">
        <textarea
          ref={inputRef}
          aria-label="Message"
          placeholder={`Message ${roleName}`}
          value={text}
          rows={1}
          onChange={(event) => update(event.target.value)}
          onKeyDown={onKeyDown}
        />
        <button type="submit" className="btn btn-primary" disabled={sending || text.trim() === ''}>
          <SendIcon size={16} />
          Send
        </button>
      </div>
      {error ? (
        <p className="composer-error" role="alert">
          <TextWithCode text={error} />
        </p>
      ) : (
        <p className="composer-hint">
          <kbd>Enter</kbd> sends · <kbd>Shift</kbd>+<kbd>Enter</kbd> new line · <kbd>Esc</kbd> stops the agent
        </p>
      )}
    </form>
  );
}
