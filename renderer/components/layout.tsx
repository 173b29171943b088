// A view's main column with its agent conversations beside it (wide windows) or behind
// a tab (narrow ones). The tab says when the connections they travel on are paused,
// offline or revoked.
import { useEffect, useId, useMemo, useState, type ReactNode } from 'react';
import type { ConnectionSummary, ThreadSummary } from '../../shared/domain';
import { selectConnections, useConnections } from '../state/connections';
import { selectThreadList, useThreads, type ThreadListKey } from '../state/threads';
import { connectionStateLabel, connectionStateTone, listConnectionStates } from '../connection-facts';
import { useTabs } from './tabs';
import { Badge, useWide } from './ui';

const panes = ['main', 'threads'] as const;
type Pane = (typeof panes)[number];

/** Lists longer than this are not read through for the tab's mark (the cards still show it). */
const MARK_SCAN_LIMIT = 2000;

function useListConnectionStates(listKey: ThreadListKey, enabled: boolean) {
  const ids = useThreads(selectThreadList(listKey))?.ids;
  const version = useThreads((s) => s.version);
  const connections = useConnections(selectConnections);
  return useMemo(() => {
    if (!enabled || !ids || !connections) return [];
    const { summaries } = useThreads.getState();
    const threads: ThreadSummary[] = [];
    for (const id of ids.slice(0, MARK_SCAN_LIMIT)) {
      const thread = summaries.get(id);
      if (thread) threads.push(thread);
    }
    return listConnectionStates(threads, new Map<number, ConnectionSummary>(connections.map((c) => [c.id, c])));
    // `version` is a dependency: it says a summary changed in place.
  }, [enabled, ids, connections, version]);
}

export function WithThreads({
  listKey,
  mainLabel,
  main,
  threads,
}: {
  listKey: ThreadListKey;
  mainLabel: string;
  main: ReactNode;
  threads: ReactNode;
}) {
  const wide = useWide();
  const [pane, setPane] = useState<Pane>('main');
  const tabProps = useTabs(panes, pane, setPane);
  const id = useId();
  const count = useThreads(selectThreadList(listKey))?.total;
  // Only the narrow layout's tab shows them.
  const states = useListConnectionStates(listKey, !wide);
  // Narrow windows show the list behind a tab; load it anyway for the tab's count.
  useEffect(() => {
    if (!wide && !useThreads.getState().lists[listKey]?.ids) void useThreads.getState().loadList(listKey);
  }, [wide, listKey]);
  if (wide) {
    return (
      <div className="with-threads">
        <div className="main-column">{main}</div>
        <aside className="side-panel">{threads}</aside>
      </div>
    );
  }
  const mark = states[0];
  return (
    <div className="with-threads is-narrow">
      <div className="segmented" role="tablist" aria-label="Show">
        <button type="button" {...tabProps('main')} id={`${id}-main`} aria-controls={`${id}-panel`}>
          {mainLabel}
        </button>
        <button type="button" {...tabProps('threads')} id={`${id}-threads`} aria-controls={`${id}-panel`}>
          Agent conversations{count ? <span className="count">{count.toLocaleString()}</span> : null}
          {mark && (
            <span title={states.map((s) => `${connectionStateLabel[s.state]}: ${s.peers.join(', ')}`).join(' · ')}>
              <Badge tone={connectionStateTone[mark.state]}>
                {mark.peers.length === 1 ? `${mark.peers[0]} ` : ''}
                {connectionStateLabel[mark.state].toLowerCase()}
              </Badge>
            </span>
          )}
        </button>
      </div>
      <div className="main-column" role="tabpanel" id={`${id}-panel`} aria-labelledby={`${id}-${pane}`}>
        {pane === 'main' ? main : threads}
      </div>
    </div>
  );
}
