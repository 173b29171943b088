// "Always allow…" beside Approve and Deny (DESIGN §12.10 `remember`): a menu button with
// the two choices the person may make — this peer role in this conversation or task, or
// this peer role everywhere (owners). Choosing one approves what waits and remembers it.
import { useEffect, useId, useRef, useState, type CSSProperties, type KeyboardEvent } from 'react';
import type { ApprovalView, RememberScope } from '../../shared/domain';
import { useApprovals } from '../state/approvals';
import { createPortal } from 'react-dom';
import './always-allow.css';

const rootWords: Record<ApprovalView['root']['kind'], string> = {
  conversation: 'in this conversation',
  task: 'on this task',
  thread: 'in this agent conversation',
};

/** What a choice says, for this approval. */
export function rememberWords(approval: ApprovalView, scope: RememberScope): string {
  const peer = approval.thread?.peer ?? 'this peer role';
  // A tool is remembered by its kind when the agent named one (main/access/allow-rule-lookup.ts).
  const toolKind = (approval.detail as { toolKind?: unknown } | null)?.toolKind;
  const tool = typeof toolKind === 'string' && toolKind !== '' ? toolKind : approval.title;
  const what =
    approval.kind === 'permission'
      ? `${tool} for ${peer}`
      : approval.kind === 'outgoing'
        ? `texts to ${peer}`
        : `texts from ${peer}`;
  return scope === 'root' ? `Always allow ${what} ${rootWords[approval.root.kind]}` : `Always allow ${what} everywhere`;
}

/** Below its button, or above it when the window has too little room below; inside the window either way. */
function menuPlace(rect: DOMRect): CSSProperties {
  const room = 160;
  const width = Math.min(384, window.innerWidth - 16);
  const left = Math.max(8, Math.min(rect.left, window.innerWidth - width - 8));
  return rect.bottom + room > window.innerHeight
    ? { left, bottom: window.innerHeight - rect.top + 4 }
    : { left, top: rect.bottom + 4 };
}

export function AlwaysAllowMenu({
  approval,
  busy,
  run,
}: {
  approval: ApprovalView;
  busy: boolean;
  run: (action: () => Promise<unknown>) => Promise<boolean>;
}) {
  const decide = useApprovals((s) => s.decide);
  const [open, setOpen] = useState(false);
  // Fixed to the window, not inside the list that scrolls, so no scroll box clips it.
  const [place, setPlace] = useState<CSSProperties>({});
  const menuId = useId();
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);
  const scopes = approval.canRemember ?? [];
  useEffect(() => {
    if (open) menu.current?.querySelector<HTMLButtonElement>('[role="menuitem"]')?.focus();
  }, [open]);
  useEffect(() => {
    if (!open) return;
    // A click anywhere else closes it, as a menu does.
    const away = (event: MouseEvent) => {
      const target = event.target as Node;
      if (!menu.current?.contains(target) && !button.current?.contains(target)) setOpen(false);
    };
    // It follows its button when what holds the button scrolls, or the window resizes.
    const follow = () => {
      if (button.current) setPlace(menuPlace(button.current.getBoundingClientRect()));
    };
    document.addEventListener('mousedown', away);
    window.addEventListener('resize', follow);
    document.addEventListener('scroll', follow, true);
    return () => {
      document.removeEventListener('mousedown', away);
      window.removeEventListener('resize', follow);
      document.removeEventListener('scroll', follow, true);
    };
  }, [open]);
  if (scopes.length === 0) return null;
  const close = () => {
    setOpen(false);
    button.current?.focus();
  };
  const onKey = (event: KeyboardEvent) => {
    const items = [...(menu.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]') ?? [])];
    const at = items.indexOf(document.activeElement as HTMLButtonElement);
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      close();
    } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      items[(at + step + items.length) % items.length]?.focus();
    } else if (event.key === 'Tab') setOpen(false);
  };
  return (
    <span className="always-allow">
      <button
        ref={button}
        type="button"
        className="btn btn-ghost btn-sm"
        disabled={busy}
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        onClick={() => {
          if (!open && button.current) setPlace(menuPlace(button.current.getBoundingClientRect()));
          setOpen(!open);
        }}
      >
        Always allow…
      </button>
      {open &&
        // In the page's main landmark, outside the list that scrolls (its rows moved by transforms would clip it).
        createPortal(
          <div
            ref={menu}
            id={menuId}
            role="menu"
            className="always-allow-menu"
            aria-label="Always allow"
            style={place}
            onKeyDown={onKey}
          >
            {scopes.map((scope) => (
              <button
                key={scope}
                type="button"
                role="menuitem"
                className="always-allow-item"
                onClick={() => {
                  setOpen(false);
                  void run(() => decide(approval.id, true, scope));
                }}
              >
                {rememberWords(approval, scope)}
              </button>
            ))}
          </div>,
          document.querySelector('main') ?? document.body,
        )}
    </span>
  );
}
