// Small building blocks shared by the views.
import {
  useCallback,
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
  useSyncExternalStore,
  type CSSProperties,
  type FormEvent,
  type KeyboardEvent,
  type ReactNode,
} from 'react';
import type { RunSummary } from '../../shared/domain';
import { formatCount, hueOf, initials, runStateLabel } from '../format';
import type { TextLabel } from '../thread-facts';
import { messageOf } from '../state/client';
import { useUi } from '../state/ui';
import { CheckIcon, CopyIcon, StopIcon } from './icons';
import { TextWithCode } from './text-with-code';

export function Avatar({ name, size = 'md', square }: { name: string; size?: 'sm' | 'md' | 'lg'; square?: boolean }) {
  const style = { '--hue': hueOf(name) } as CSSProperties;
  return (
    <span className={`avatar avatar-${size}${square ? ' avatar-square' : ''}`} style={style} aria-hidden="true">
      {initials(name)}
    </span>
  );
}

export type Tone = 'neutral' | 'accent' | 'good' | 'warn' | 'bad' | 'info';

export function Badge({ tone = 'neutral', children, title }: { tone?: Tone; children: ReactNode; title?: string }) {
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

/** A text's state badge, in the words `textLabel` chose (thread-facts.ts). */
/** How much is new in something: a count people see, read out as "3 unread". */
export function UnreadBadge({ count }: { count: number }) {
  if (count <= 0) return null;
  return (
    <span className="unread-badge" title={`${formatCount(count)} unread`}>
      {count > 99 ? '99+' : formatCount(count)}
      <span className="visually-hidden"> unread</span>
    </span>
  );
}

export function TextStateBadge({ label, reason }: { label: TextLabel; reason?: string | null }) {
  return (
    <Badge tone={label.tone} title={label.help}>
      {label.label}
      {label.label === 'Failed' && reason ? <span className="badge-reason"> · {reason}</span> : null}
    </Badge>
  );
}

/** The run's state as a pill; "Working" pulses. */
export function RunStateBadge({ run, hideIdle }: { run: RunSummary; hideIdle?: boolean }) {
  if (hideIdle && run.state === 'idle') return null;
  const tone: Tone = run.state === 'running' ? 'accent' : run.state === 'idle' ? 'neutral' : 'warn';
  return (
    <span className={`run-state run-${run.state} badge badge-${tone}`} title={`Agent: ${runStateLabel[run.state]}`}>
      <span className="dot" aria-hidden="true" />
      {runStateLabel[run.state]}
      {run.state === 'queued' && run.pending > 1 ? ` (${run.pending})` : null}
    </span>
  );
}

export const isActive = (run: RunSummary) => run.state !== 'idle';

export function StopButton({
  onStop,
  disabled,
  size = 'md',
}: {
  onStop: () => Promise<unknown>;
  disabled?: boolean;
  size?: 'sm' | 'md';
}) {
  const [busy, run] = useAction();
  return (
    <button
      type="button"
      className={`btn btn-stop btn-${size}`}
      disabled={disabled || busy}
      onClick={() => void run(onStop)}
      title="Stop the agent (Esc)"
    >
      <StopIcon size={size === 'sm' ? 12 : 14} />
      Stop
    </button>
  );
}

/** A dialog's Cancel and submit buttons; the submit button sends the form `formId`. */
export function DialogButtons({
  formId,
  busy,
  submitLabel,
  onCancel,
  cancelWhileBusy = true,
}: {
  formId: string;
  busy: boolean;
  submitLabel: ReactNode;
  onCancel: () => void;
  /** False: Cancel waits too while the action runs (it could not be undone halfway). */
  cancelWhileBusy?: boolean;
}) {
  return (
    <>
      <button type="button" className="btn btn-ghost" onClick={onCancel} disabled={busy && !cancelWhileBusy}>
        Cancel
      </button>
      <button type="submit" form={formId} className="btn btn-primary" disabled={busy}>
        {submitLabel}
      </button>
    </>
  );
}

/**
 * A text box that sends its trimmed text: `submit` for the form, `enterSends` for the
 * box (Enter sends, Shift+Enter breaks the line); `onSent` empties it; a failure shows
 * in `error` rather than a toast, next to what the person typed.
 */
export function useSendText(text: string, send: (body: string) => Promise<unknown>, onSent: () => void) {
  const [error, setError] = useState<string | null>(null);
  const [busy, run] = useAction();
  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    const body = text.trim();
    if (!body || busy) return;
    setError(null);
    void run(async () => {
      try {
        await send(body);
        onSent();
      } catch (caught) {
        setError(messageOf(caught));
      }
    });
  };
  /** True when the key was Enter and the text went. */
  const enterSends = (event: KeyboardEvent<HTMLTextAreaElement>): boolean => {
    if (event.key !== 'Enter' || event.shiftKey || event.nativeEvent.isComposing) return false;
    event.preventDefault();
    submit();
    return true;
  };
  return { submit, enterSends, busy, error, setError };
}

/** Runs an action with a busy flag; failures become an error toast. */
export function useAction(): [boolean, (action: () => Promise<unknown>) => Promise<boolean>] {
  const [busy, setBusy] = useState(false);
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await action();
      return true;
    } catch (error) {
      useUi.getState().toast(messageOf(error), 'error');
      return false;
    } finally {
      if (mounted.current) setBusy(false);
    }
  }, []);
  return [busy, run];
}

export function useMediaQuery(query: string): boolean {
  return useSyncExternalStore(
    (notify) => {
      const list = window.matchMedia(query);
      list.addEventListener('change', notify);
      return () => list.removeEventListener('change', notify);
    },
    () => window.matchMedia(query).matches,
  );
}

/** Wide enough for a side panel next to the main column. */
export const useWide = () => useMediaQuery('(min-width: 1100px)');

/** A modal dialog (native <dialog>): focus stays inside, Esc closes it. */
export function Dialog({
  title,
  description,
  onClose,
  children,
  footer,
  size = 'md',
}: {
  title: string;
  description?: ReactNode;
  onClose: () => void;
  children?: ReactNode;
  footer?: ReactNode;
  size?: 'sm' | 'md' | 'lg';
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const descriptionId = useId();
  // Focus goes back to what opened the dialog (a button, usually) when it closes: read
  // at the first render, before anything inside the dialog can take the focus.
  const [opener] = useState(() => (document.activeElement instanceof HTMLElement ? document.activeElement : null));
  useLayoutEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => {
      dialog?.close();
      if (opener?.isConnected) opener.focus();
    };
  }, [opener]);
  return (
    <dialog
      ref={ref}
      className={`dialog dialog-${size}`}
      aria-labelledby={titleId}
      aria-describedby={description ? descriptionId : undefined}
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
      onClick={(event) => {
        if (event.target === ref.current) onClose(); // a click on the backdrop
      }}
    >
      <div className="dialog-inner">
        <header className="dialog-header">
          <h2 id={titleId}>{title}</h2>
          {description && (
            <div id={descriptionId} className="muted">
              {description}
            </div>
          )}
        </header>
        <div className="dialog-body">{children}</div>
        {footer && <footer className="dialog-footer">{footer}</footer>}
      </div>
    </dialog>
  );
}

export function ConfirmDialog({
  title,
  body,
  confirm,
  tone = 'danger',
  onConfirm,
  onClose,
}: {
  title: string;
  body: ReactNode;
  confirm: string;
  tone?: 'danger' | 'primary';
  onConfirm: () => Promise<unknown>;
  onClose: () => void;
}) {
  const [busy, run] = useAction();
  return (
    <Dialog
      title={title}
      onClose={onClose}
      size="sm"
      footer={
        <>
          <button type="button" className="btn btn-ghost" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          <button
            type="button"
            className={`btn ${tone === 'danger' ? 'btn-danger' : 'btn-primary'}`}
            disabled={busy}
            onClick={() =>
              void run(onConfirm).then((ok) => {
                if (ok) onClose();
              })
            }
          >
            {confirm}
          </button>
        </>
      }
    >
      <div className="confirm-body">{body}</div>
    </Dialog>
  );
}

async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch {
    // No clipboard permission (or not a secure context): the old way.
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'offscreen';
  document.body.append(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  if (!ok) throw new Error('Copying is not allowed here; select the text and copy it by hand.');
}

export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 1800);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <button
      type="button"
      className="btn btn-secondary btn-sm"
      onClick={() =>
        void copyText(text).then(
          () => setCopied(true),
          (error: unknown) => useUi.getState().toast(messageOf(error), 'error'),
        )
      }
    >
      {copied ? <CheckIcon size={14} /> : <CopyIcon size={14} />}
      {copied ? 'Copied' : label}
    </button>
  );
}

/** A read-only value (a code, a link, a token) with a copy button. */
export function CopyField({
  label,
  value,
  copyLabel,
  multiline,
}: {
  label: string;
  value: string;
  copyLabel: string;
  multiline?: boolean;
}) {
  const id = useId();
  return (
    <div className="copy-field">
      <div className="copy-field-head">
        <label htmlFor={id}>{label}</label>
        <CopyButton text={value} label={copyLabel} />
      </div>
      {multiline ? (
        <textarea
          id={id}
          readOnly
          value={value}
          rows={3}
          spellCheck={false}
          onFocus={(e) => e.currentTarget.select()}
        />
      ) : (
        <input id={id} readOnly value={value} spellCheck={false} onFocus={(e) => e.currentTarget.select()} />
      )}
    </div>
  );
}

export function EmptyState({ icon, title, children }: { icon?: ReactNode; title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      {icon && <div className="empty-icon">{icon}</div>}
      <p className="empty-title">{title}</p>
      {children && <div className="empty-text">{children}</div>}
    </div>
  );
}

export function ErrorNote({ children, onRetry }: { children: ReactNode; onRetry?: () => void }) {
  return (
    <div className="error-note" role="alert">
      <span>{typeof children === 'string' ? <TextWithCode text={children} /> : children}</span>
      {onRetry && (
        <button type="button" className="btn btn-ghost btn-sm" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="loading" role="status">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}
