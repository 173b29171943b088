// A view's main column with its agent conversations beside it (wide windows) or behind
// a tab (narrow ones).
import { useEffect, useState, type ReactNode } from 'react';
import { selectThreadList, useThreads, type ThreadListKey } from '../store/threads';
import { useWide } from './ui';

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
  const [tab, setTab] = useState<'main' | 'threads'>('main');
  const count = useThreads(selectThreadList(listKey))?.ids?.length;
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
  return (
    <div className="with-threads is-narrow">
      <div className="segmented" role="tablist" aria-label="Show">
        <button type="button" role="tab" aria-selected={tab === 'main'} onClick={() => setTab('main')}>
          {mainLabel}
        </button>
        <button type="button" role="tab" aria-selected={tab === 'threads'} onClick={() => setTab('threads')}>
          Agent conversations{count ? <span className="count">{count.toLocaleString()}</span> : null}
        </button>
      </div>
      <div className="main-column" role="tabpanel">
        {tab === 'main' ? main : threads}
      </div>
    </div>
  );
}
