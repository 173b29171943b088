import { useLayoutEffect, useRef, type ReactNode } from 'react';

/**
 * The task's brief, subtasks and log scroll; the comment box stays below them, always
 * on screen. Once the person comments, or has scrolled to the end, new entries (the
 * answer) keep the end in view.
 */
export function TaskPane({
  log,
  composer,
  children,
}: {
  log: number;
  composer: (follow: () => void) => ReactNode;
  children: ReactNode;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const follow = useRef(false);
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (el && follow.current) el.scrollTop = el.scrollHeight;
  }, [log]);
  return (
    <div className="task-pane">
      <div
        ref={scrollRef}
        className="task-body"
        onScroll={(event) => {
          const el = event.currentTarget;
          follow.current = el.scrollHeight - el.scrollTop - el.clientHeight < 120;
        }}
      >
        {children}
      </div>
      {composer(() => {
        follow.current = true;
      })}
    </div>
  );
}
