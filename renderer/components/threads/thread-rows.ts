// The rows of an agent-conversation list as its virtualizer sees them: a flat list's
// rows (a thread, or a place for one not read yet), or its threads grouped under the
// title of their root.
import type { ThreadSummary } from '../../../shared/domain';
import { useThreads } from '../../state/threads';
import { orphanedGroupTitle } from '../../thread-facts';

/**
 * The virtualizer's key of every row not read yet: one key, so one size in its cache for
 * all of them. It lays out every row after each page read; a row with a cached size costs
 * it a lookup, one without a call to estimateSize, and nearly all of 100,000 rows are
 * rows not read yet. (Thread ids start at 1; the DOM's rows get keys of their own.)
 */
export const PENDING_KEY = 0;

export type Item =
  | { kind: 'header'; key: string; label: string; since: string }
  | { kind: 'thread'; key: string; id: number }
  /** A row not read yet: read when it comes into view. */
  | { kind: 'pending'; key: string };

/**
 * The rows of a list for the virtualizer. `keys` changes whenever a row's key or size may
 * have: a page read (its rows' placeholders become cards), a thread added, moved or gone.
 * The virtualizer lays the list out again then, once.
 */
export interface RowSource {
  count: number;
  at: (index: number) => Item | undefined;
  /** The row's key, without building its item: the virtualizer asks for every row's. */
  key: (index: number) => string | number;
  /** A thread row's id; 0 for a row not read yet, -1 for a group's header. */
  threadId: (index: number) => number;
  keys: unknown;
}

/**
 * The rows of `ids` grouped by root, or else of `rows` (a flat list's, 0 for a row not
 * read yet); none while the list is not read.
 */
export function rowSource(
  ids: readonly number[] | null | undefined,
  rows: readonly number[] | null | undefined,
  groupByRoot: boolean,
  /** Changes whenever `rows` did (they change in place as pages are read). */
  revision = 0,
): RowSource {
  if (!ids || !rows) return { count: 0, at: () => undefined, key: (index) => index, threadId: () => 0, keys: 0 };
  if (!groupByRoot) {
    const at = (index: number): Item | undefined => {
      if (index >= rows.length) return undefined;
      const id = rows[index];
      return !id ? { kind: 'pending', key: `p${index}` } : { kind: 'thread', key: `t${id}`, id };
    };
    return {
      count: rows.length,
      at,
      key: (index) => rows[index] || PENDING_KEY,
      threadId: (index) => rows[index] ?? 0,
      // A page read gives its rows keys and sizes: one recompute of the list, not one per row
      // measured. The rows change in place: a new value per revision (and per rows, when filtered).
      keys: [rows, revision],
    };
  }
  const { summaries } = useThreads.getState();
  const groups = new Map<string, ThreadSummary[]>();
  for (const id of ids) {
    const thread = summaries.get(id);
    if (!thread) continue;
    const key = `${thread.root.kind}:${thread.root.id}`;
    const group = groups.get(key) ?? [];
    group.push(thread);
    groups.set(key, group);
  }
  const items: Item[] = [];
  for (const [key, group] of groups) {
    const { title, since } = orphanedGroupTitle(group);
    items.push({ kind: 'header', key: `h${key}`, label: title, since });
    for (const thread of group) items.push({ kind: 'thread', key: `t${thread.id}`, id: thread.id });
  }
  return {
    count: items.length,
    at: (index) => items[index],
    key: (index) => items[index]?.key ?? index,
    threadId: (index) => {
      const item = items[index];
      return item?.kind === 'thread' ? item.id : item?.kind === 'header' ? -1 : 0;
    },
    keys: items,
  };
}
