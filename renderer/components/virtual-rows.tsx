// The rows of a virtualized list whose rows measure themselves: only the rows in view
// (and a few either side) are in the DOM, each placed where the virtualizer says.
import { measureElement as measureByLayout, type VirtualItem, type Virtualizer } from '@tanstack/react-virtual';
import type { Key, ReactNode } from 'react';

/**
 * Sizes rows from the ResizeObserver's entries only. Measuring a row as it mounts forces a
 * layout per row, and each size that differs from the estimate recomputes every row after
 * it: on a list of 100,000 that is a long frame per page of rows. The observer reports all
 * the rows mounted in a frame in one batch, before it paints.
 */
export function measureOnResize(
  element: Element,
  entry: ResizeObserverEntry | undefined,
  virtualizer: Virtualizer<HTMLDivElement, Element>,
): number {
  if (entry) return measureByLayout(element, entry, virtualizer);
  const index = virtualizer.indexFromElement(element);
  return (
    virtualizer.itemSizeCache.get(virtualizer.options.getItemKey(index)) ?? virtualizer.options.estimateSize(index)
  );
}

export function VirtualRows<T>({
  virtualizer,
  itemAt,
  rowKey = (row) => row.key,
  children,
}: {
  virtualizer: Virtualizer<HTMLDivElement, Element>;
  /** The item of a row: a list long enough to be read in pages is not one array. */
  itemAt: (index: number) => T | undefined;
  /** The DOM's key of a row, when rows may share the virtualizer's key (its size cache's). */
  rowKey?: (row: VirtualItem) => Key;
  /** Renders the row of one item. */
  children: (item: T) => ReactNode;
}) {
  return (
    <div className="virtual-space" style={{ height: virtualizer.getTotalSize() }}>
      {virtualizer.getVirtualItems().map((row) => {
        const item = itemAt(row.index);
        return item === undefined ? null : (
          <div
            key={rowKey(row)}
            ref={virtualizer.measureElement}
            data-index={row.index}
            className="virtual-row"
            style={{ transform: `translateY(${row.start}px)` }}
          >
            {children(item)}
          </div>
        );
      })}
    </div>
  );
}
