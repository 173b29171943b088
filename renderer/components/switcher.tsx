// Ctrl/Cmd+K: a dialog that finds conversations, tasks, peers and roles by name, and
// what full-text search finds in messages, task logs and agent-conversation texts, and
// opens the one chosen. An ARIA combobox over a listbox: typing filters, the arrow keys
// (and Home/End) move through the options, Enter opens, Esc closes.
import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { SearchHit } from '../../shared/api-contract';
import { call, messageOf } from '../state/client';
import { selectConnections, useConnections } from '../state/connections';
import { selectConversations, useConversations } from '../state/conversations';
import { selectRoles, useRoles } from '../state/roles';
import { selectTasks, useTasks } from '../state/tasks';
import { useDrafts } from '../state/drafts';
import { useUi } from '../state/ui';
import {
  highlightPieces,
  moveActive,
  switcherOptions,
  type SwitcherOption,
  type SwitcherTarget,
} from '../switcher-items';
import './switcher.css';

/** Full-text search waits this long after the last key. */
const SEARCH_DELAY_MS = 150;
const SEARCH_LIMIT = 8;

/**
 * Focuses what `find` finds once the view shows it (within about two seconds), so the
 * keyboard lands where the switcher opened rather than back where it was opened from.
 */
function focusWhenShown(find: () => HTMLElement | null): void {
  const deadline = performance.now() + 2000;
  const attempt = () => {
    const element = find();
    if (element) {
      if (element.tabIndex < 0 && !element.hasAttribute('tabindex')) element.tabIndex = -1;
      element.focus();
      if (element instanceof HTMLTextAreaElement) element.setSelectionRange(element.value.length, element.value.length);
      return;
    }
    if (performance.now() < deadline) requestAnimationFrame(attempt);
  };
  requestAnimationFrame(attempt);
}

const composer = () => document.querySelector<HTMLTextAreaElement>('textarea[aria-label="Message"]');
const commentBox = () => document.querySelector<HTMLTextAreaElement>('textarea[aria-label="Comment"]');
const threadToggle = (id: number) => () =>
  document.querySelector<HTMLElement>(`[data-thread-id="${id}"] .thread-toggle`);
const connectionsHeading = () =>
  [...document.querySelectorAll<HTMLElement>('h2')].find((h) => h.textContent === 'Connections') ?? null;

/** The role to ask a peer's role with: the one of the conversation in view, else the most recent one's, else the first. */
function askingRole(): number | null {
  const view = useUi.getState().view;
  const conversations = useConversations.getState().list ?? [];
  const current = view.kind === 'conversation' ? conversations.find((c) => c.id === view.id) : undefined;
  const role = current?.roleId ?? conversations[0]?.roleId ?? useRoles.getState().list?.[0]?.id;
  return role ?? null;
}

/** Opens what an option names, and puts the focus there; resolves once the view shows it. */
export async function openTarget(target: SwitcherTarget): Promise<void> {
  const { navigate } = useUi.getState();
  switch (target.kind) {
    case 'conversation':
      navigate({ kind: 'conversation', id: target.id });
      return focusWhenShown(composer);
    case 'task':
      navigate({ kind: 'tasks', id: target.id });
      return focusWhenShown(commentBox);
    case 'peer':
      navigate({ kind: 'settings', tab: 'connections' });
      return focusWhenShown(connectionsHeading);
    case 'role': {
      const conversation = await useConversations.getState().open(target.id);
      navigate({ kind: 'conversation', id: conversation.id });
      return focusWhenShown(composer);
    }
    case 'ask': {
      const roleId = askingRole();
      if (roleId === null) throw new Error('there is no role here to ask with: make one in Settings first');
      const conversation = await useConversations.getState().open(roleId);
      const draft = useDrafts.getState().drafts[conversation.id] ?? '';
      if (!draft.trim()) useDrafts.getState().setDraft(conversation.id, `ask ${target.address}: `);
      navigate({ kind: 'conversation', id: conversation.id });
      return focusWhenShown(composer);
    }
    case 'hit':
      return openHit(target.hit);
  }
}

function openHit(hit: SearchHit): void {
  const ui = useUi.getState();
  if (hit.kind === 'conversation') {
    ui.navigate({ kind: 'conversation', id: hit.id });
    return focusWhenShown(composer);
  }
  if (hit.kind === 'task') {
    ui.navigate({ kind: 'tasks', id: hit.id });
    return focusWhenShown(commentBox);
  }
  focusWhenShown(threadToggle(hit.id));
  // An agent conversation opens where it lives, unfolded: under its conversation or
  // task, among those peers started (inside the one it was asked on behalf of), or orphaned.
  const root = hit.root;
  const expand = (id: number) => {
    if (!useUi.getState().expandedThreads.has(id)) useUi.getState().toggleThread(id);
  };
  expand(hit.id);
  if (!root || root.gone) return ui.navigate({ kind: 'orphaned' });
  if (root.kind === 'conversation') return ui.navigate({ kind: 'conversation', id: root.id });
  if (root.kind === 'task') return ui.navigate({ kind: 'tasks', id: root.id });
  if (root.id !== hit.id) expand(root.id);
  ui.navigate({ kind: 'peer' });
}

export function Switcher({ onClose }: { onClose: () => void }) {
  const dialogRef = useRef<HTMLDialogElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const handedOff = useRef(false);
  const listId = useId();
  const titleId = useId();
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState<SearchHit[]>([]);
  const [searching, setSearching] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [active, setActive] = useState(0);
  const conversations = useConversations(selectConversations);
  const tasks = useTasks(selectTasks);
  const connections = useConnections(selectConnections);
  const roles = useRoles(selectRoles);

  useEffect(() => {
    const dialog = dialogRef.current;
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (dialog && !dialog.open) dialog.showModal();
    inputRef.current?.focus();
    return () => {
      dialog?.close();
      if (opener?.isConnected && !handedOff.current) opener.focus();
    };
  }, []);

  // Full-text hits for what was typed; an answer to an older query is dropped.
  useEffect(() => {
    const typed = query.trim();
    if (!typed) {
      setHits([]);
      setSearching(false);
      setError(null);
      return;
    }
    let current = true;
    setSearching(true);
    const timer = setTimeout(() => {
      call('search', { query: typed, limit: SEARCH_LIMIT }).then(
        (result) => {
          if (!current) return;
          setHits(result.hits);
          setError(null);
          setSearching(false);
        },
        (caught: unknown) => {
          if (!current) return;
          setHits([]);
          setError(messageOf(caught));
          setSearching(false);
        },
      );
    }, SEARCH_DELAY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [query]);

  const options = useMemo(
    () =>
      switcherOptions(query, {
        conversations: conversations ?? [],
        tasks: tasks ?? [],
        connections: connections ?? [],
        roles: roles ?? [],
        hits,
      }),
    [query, conversations, tasks, connections, roles, hits],
  );
  const activeIndex = options.length === 0 ? -1 : Math.min(active, options.length - 1);
  const activeOption = activeIndex >= 0 ? options[activeIndex] : undefined;
  const optionId = (option: SwitcherOption) => `${listId}-${option.key}`;

  useEffect(() => {
    if (activeOption) document.getElementById(optionId(activeOption))?.scrollIntoView({ block: 'nearest' });
  }, [activeOption?.key]);

  const choose = (option: SwitcherOption | undefined) => {
    if (!option) return;
    // The focus goes where the option opens, not back to what opened the switcher.
    handedOff.current = true;
    onClose();
    openTarget(option.target).catch((caught: unknown) => useUi.getState().toast(messageOf(caught), 'error'));
  };

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      setActive(moveActive(activeIndex, options.length, event.key));
    } else if ((event.key === 'Home' || event.key === 'End') && event.ctrlKey) {
      event.preventDefault();
      setActive(moveActive(activeIndex, options.length, event.key));
    } else if (event.key === 'Enter') {
      event.preventDefault();
      choose(activeOption);
    }
  };

  const groups: Array<{ name: string; options: SwitcherOption[] }> = [];
  for (const option of options) {
    const last = groups[groups.length - 1];
    if (last?.name === option.group) last.options.push(option);
    else groups.push({ name: option.group, options: [option] });
  }

  const status = searching
    ? 'Searching…'
    : error
      ? `Search failed: ${error}`
      : query.trim() && options.length === 0
        ? 'Nothing found.'
        : `${options.length} ${options.length === 1 ? 'result' : 'results'}.`;

  return (
    <dialog
      ref={dialogRef}
      className="dialog switcher"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onClick={(event) => {
        if (event.target === dialogRef.current) onClose();
      }}
    >
      <div className="switcher-inner">
        <h2 id={titleId} className="visually-hidden">
          Go to
        </h2>
        <div className="switcher-field">
          <input
            ref={inputRef}
            className="switcher-input"
            type="text"
            role="combobox"
            aria-label="Find a conversation, task, peer or role, or search what was said"
            aria-expanded={options.length > 0}
            aria-controls={listId}
            aria-autocomplete="list"
            aria-activedescendant={activeOption ? optionId(activeOption) : undefined}
            placeholder="Find conversations, tasks, peers, roles and messages…"
            autoComplete="off"
            spellCheck={false}
            value={query}
            onChange={(event) => {
              setQuery(event.target.value);
              setActive(0);
            }}
            onKeyDown={onKeyDown}
          />
          <kbd aria-hidden="true">Esc</kbd>
        </div>
        <div id={listId} role="listbox" aria-label="Results" className="switcher-list" hidden={options.length === 0}>
          {groups.map((group) => (
            <div key={group.name} role="group" aria-label={group.name} className="switcher-group">
              <div className="switcher-group-name" aria-hidden="true">
                {group.name}
              </div>
              {group.options.map((option) => (
                <div
                  key={option.key}
                  id={optionId(option)}
                  role="option"
                  aria-selected={option === activeOption}
                  className={`switcher-option${option === activeOption ? ' is-active' : ''}`}
                  onMouseMove={() => {
                    const index = options.indexOf(option);
                    if (index !== activeIndex) setActive(index);
                  }}
                  onClick={() => choose(option)}
                >
                  <span className="switcher-label">{option.label}</span>
                  <span className="switcher-detail">
                    {highlightPieces(option.detail, option.highlights).map((piece, i) =>
                      piece.mark ? <mark key={i}>{piece.text}</mark> : <span key={i}>{piece.text}</span>,
                    )}
                  </span>
                </div>
              ))}
            </div>
          ))}
        </div>
        <p className="switcher-status" role="status">
          {status}
        </p>
        <p className="switcher-help" aria-hidden="true">
          <kbd>↑</kbd> <kbd>↓</kbd> to move · <kbd>Enter</kbd> to open · <kbd>Esc</kbd> to close
        </p>
      </div>
    </dialog>
  );
}
