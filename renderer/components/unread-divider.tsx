// The "New" line in a conversation: above the first answer the person had not read when
// they opened it, and a button that jumps there while it is out of view above. Where it
// sits is decided when the conversation is opened (or while the page is hidden), not as
// answers arrive under the person's eyes: those are read as they come.
import { useEffect, useRef } from 'react';
import { selectFirstUnread, useAttention } from '../state/attention';
import { ArrowUpIcon } from './icons';
import { usePageVisible } from './seen';
import './unread-divider.css';

/**
 * The id of the first message that was new when the conversation was opened; null when
 * nothing was. `newestShown` is the newest message id the page holds (undefined until
 * the messages are read).
 */
export function useNewSince(conversationId: number, newestShown: number | undefined): number | null {
  const first = useAttention(selectFirstUnread({ kind: 'conversation', id: conversationId }));
  const visible = usePageVisible();
  const opened = useRef<{ id: number; upTo: number | undefined; first: number | null } | null>(null);
  if (opened.current?.id !== conversationId) opened.current = { id: conversationId, upTo: undefined, first: null };
  const here = opened.current;
  // What the page held when it first showed the messages: the unread mark may arrive a
  // moment after them, and it counts for those. Answers that arrive later, while the
  // person reads, are read as they come, unless the page is hidden.
  here.upTo ??= newestShown;
  if (here.first === null && first !== undefined && (!visible || (here.upTo !== undefined && first <= here.upTo)))
    here.first = first;
  return here.first;
}

export function NewDivider() {
  return (
    <div className="new-divider" tabIndex={-1} data-new-divider="">
      <span>
        New<span className="visually-hidden"> since you last read</span>
      </span>
    </div>
  );
}

/** Shown while the "New" line is above what is in view. */
export function JumpToUnread({ onJump }: { onJump: () => void }) {
  return (
    <button type="button" className="jump-unread" onClick={onJump}>
      <ArrowUpIcon size={14} />
      Jump to the first unread
    </button>
  );
}

/** Focuses the "New" line once it is rendered (it is a virtual row: it may take a frame). */
export function useFocusDivider(): (scope: HTMLElement | null) => void {
  const frame = useRef(0);
  useEffect(() => () => cancelAnimationFrame(frame.current), []);
  return (scope) => {
    let tries = 30;
    const attempt = () => {
      const divider = scope?.querySelector<HTMLElement>('[data-new-divider]');
      if (divider) divider.focus({ preventScroll: true });
      else if (tries-- > 0) frame.current = requestAnimationFrame(attempt);
    };
    frame.current = requestAnimationFrame(attempt);
  };
}
