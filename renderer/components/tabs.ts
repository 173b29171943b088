// The ARIA tabs pattern for a row of tabs: one tab stop (the selected tab), arrow keys
// move and select (wrapping), Home and End go to the first and the last.
import { useCallback, useRef, type KeyboardEvent } from 'react';

export interface TabProps {
  role: 'tab';
  'aria-selected': boolean;
  tabIndex: 0 | -1;
  ref: (element: HTMLElement | null) => void;
  onKeyDown: (event: KeyboardEvent<HTMLElement>) => void;
  onClick: () => void;
}

/** The props of each tab of `ids`; `select` changes the selected one. */
export function useTabs<T extends string>(
  ids: readonly T[],
  selected: T,
  select: (id: T) => void,
  orientation: 'horizontal' | 'vertical' = 'horizontal',
): (id: T) => TabProps {
  const elements = useRef(new Map<T, HTMLElement>());
  const onKeyDown = useCallback(
    (event: KeyboardEvent<HTMLElement>) => {
      const index = ids.indexOf(selected);
      const [back, forward] = orientation === 'horizontal' ? ['ArrowLeft', 'ArrowRight'] : ['ArrowUp', 'ArrowDown'];
      let next: number;
      if (event.key === forward) next = (index + 1) % ids.length;
      else if (event.key === back) next = (index - 1 + ids.length) % ids.length;
      else if (event.key === 'Home') next = 0;
      else if (event.key === 'End') next = ids.length - 1;
      else return;
      event.preventDefault();
      const id = ids[next]!;
      select(id);
      elements.current.get(id)?.focus();
    },
    [ids, selected, select, orientation],
  );
  return (id: T) => ({
    role: 'tab',
    'aria-selected': id === selected,
    tabIndex: id === selected ? 0 : -1,
    ref: (element) => {
      if (element) elements.current.set(id, element);
      else elements.current.delete(id);
    },
    onKeyDown,
    onClick: () => select(id),
  });
}
