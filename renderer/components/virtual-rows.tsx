// The rows of a virtualized list whose rows measure themselves: only the rows in view
// (and a few either side) are in the DOM, each placed where the virtualizer says.
import type { Virtualizer } from '@tanstack/react-virtual';
import type { ReactNode } from 'react';

export function VirtualRows<T>({
  virtualizer,
  items,
  children,
}: {
  virtualizer: Virtualizer<HTMLDivElement, Element>;
  items: readonly T[];
  /** Renders the row of one item. */
  children: (item: T) => ReactNode;
}) {
  return (
    <div className="virtual-space" style={{ height: virtualizer.getTotalSize() }}>
      {virtualizer.getVirtualItems().map((row) => (
        <div
          key={row.key}
          ref={virtualizer.measureElement}
          data-index={row.index}
          className="virtual-row"
          style={{ transform: `translateY(${row.start}px)` }}
        >
          {children(items[row.index]!)}
        </div>
      ))}
    </div>
  );
}
