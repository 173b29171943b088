// Agent conversations: the region that lists them under a root (virtualized: a root may
// have thousands), one card per agent conversation, and its detail when opened — the
// texts with their states, the agent's run, its live output and its notes. The parts are
// in threads/: the rows (thread-rows.ts), their scroll box (virtual-threads.tsx), a card
// (thread-card.tsx) and its detail (thread-detail.tsx).
import { useCallback, useEffect, useId, useLayoutEffect, useMemo, type ReactNode } from 'react';
import type { ThreadSummary } from '../../shared/domain';
import { selectThreadList, useThreads, type ThreadListKey } from '../state/threads';
import { selectFilter, useThreadFilters } from '../state/thread-filters';
import { selectExpandedThreads, useUi } from '../state/ui';
import { isFiltered, matchesFilter } from '../thread-filters';
import { BannerConnections, PeerBanners, ThreadFilters, usePeerBanners, useWaitingOnYou } from './thread-panel-bar';
import { rowSource } from './threads/thread-rows';
import { VirtualThreads } from './threads/virtual-threads';
import { Badge, ErrorNote, Loading } from './ui';

/**
 * The region "Agent conversations" of one list. It owns its scroll box, so thousands of
 * threads render as the few rows on screen.
 */
export function ThreadList({
  listKey,
  description,
  empty,
  groupByRoot = false,
  fill = true,
  headingLevel = 2,
}: {
  listKey: ThreadListKey;
  description?: ReactNode;
  empty: ReactNode;
  groupByRoot?: boolean;
  /** Fill the parent's height (a side panel, a page) rather than sizing to the content. */
  fill?: boolean;
  headingLevel?: 2 | 3;
}) {
  const headingId = useId();
  const list = useThreads(selectThreadList(listKey));
  const loadList = useThreads((s) => s.loadList);
  const version = useThreads((s) => s.version);
  const expanded = useUi(selectExpandedThreads);
  const toggle = useUi((s) => s.toggleThread);

  // Asked for as the view commits, not after its first paint (when effects run): the
  // request is on its way while the view paints, and the rows paint a frame sooner.
  useLayoutEffect(() => {
    // Groups need every row; a long flat list reads its pages as they come into view.
    if (!useThreads.getState().lists[listKey]?.ids) void loadList(listKey, { whole: groupByRoot });
  }, [listKey, loadList, groupByRoot]);

  const filter = useThreadFilters(selectFilter(listKey));
  const filtering = isFiltered(filter);
  const waitingOnYou = useWaitingOnYou();
  // What the page holds of the list, for the banners, the peer filter and the filters.
  const held = useMemo(() => {
    const { summaries } = useThreads.getState();
    const threads: ThreadSummary[] = [];
    for (const id of list?.ids ?? []) {
      const thread = summaries.get(id);
      if (thread) threads.push(thread);
    }
    return threads;
    // `version` says a summary changed in place.
  }, [list?.ids, version]);
  const banners = usePeerBanners(held);
  const bannerConnections = useMemo(() => new Set(banners.map((b) => b.connectionId)), [banners]);
  const filteredIds = useMemo(
    () => (filtering ? held.filter((t) => matchesFilter(t, filter, waitingOnYou)).map((t) => t.id) : null),
    [filtering, held, filter, waitingOnYou],
  );
  useEffect(() => {
    // A filter looks at every row: a list read a page at a time is read whole.
    if (filtering && !useThreads.getState().lists[listKey]?.whole) void loadList(listKey, { whole: true });
  }, [filtering, listKey, loadList]);

  const ids = filteredIds ?? list?.ids;
  const rows = filteredIds ?? list?.rows;
  // Group labels come from the summaries: only grouped lists follow every summary change.
  const groupVersion = groupByRoot ? version : 0;
  // `groupVersion`: a summary changed, and with it perhaps the title of its group.
  // A list's rows change in place as pages are read: `revision` says they did.
  const revision = filteredIds ? 0 : (list?.revision ?? 0);
  const source = useMemo(
    () => rowSource(ids, rows, groupByRoot, revision),
    [ids, rows, groupByRoot, groupVersion, revision],
  );
  const loadRange = useThreads((s) => s.loadRange);
  const onRange = useCallback(
    (start: number, end: number) => void loadRange(listKey, start, end),
    [loadRange, listKey],
  );

  const Heading = headingLevel === 2 ? 'h2' : 'h3';
  const count = list?.total ?? 0;
  const running = list?.ids ? countWorking(list.ids) : 0;

  return (
    <section className={`threads${fill ? ' threads-fill' : ''}`} aria-labelledby={headingId}>
      <header className="threads-header">
        <div className="threads-title">
          <Heading id={headingId}>Agent conversations</Heading>
          {ids && <span className="count">{count.toLocaleString()}</span>}
          {running > 0 && <Badge tone="accent">{running} working</Badge>}
        </div>
        {description && <p className="threads-description">{description}</p>}
        {count > 0 && <ThreadFilters listKey={listKey} threads={held} shown={filteredIds?.length ?? 0} />}
        <PeerBanners banners={banners} />
      </header>
      {list?.error && !ids && <ErrorNote onRetry={() => void loadList(listKey)}>{list.error}</ErrorNote>}
      {!ids && !list?.error && <Loading label="Loading agent conversations…" />}
      {ids && count === 0 && <div className="threads-empty">{empty}</div>}
      {ids && count > 0 && filteredIds?.length === 0 && (
        <p className="threads-empty muted">No agent conversation here matches these filters.</p>
      )}
      {ids && count > 0 && (
        <BannerConnections.Provider value={bannerConnections}>
          <VirtualThreads source={source} expanded={expanded} onToggle={toggle} fill={fill} onRange={onRange} />
        </BannerConnections.Provider>
      )}
    </section>
  );
}

function countWorking(ids: number[]): number {
  // Cheap enough per render for 10,000 ids (a Map lookup each).
  const { summaries } = useThreads.getState();
  let n = 0;
  for (const id of ids) if (summaries.get(id)?.run.state === 'running') n++;
  return n;
}
