// Whether the sidebar offers the agent conversations whose conversation or task was
// deleted: to owners, and only while there is one (or while it is the view).
import { useEffect } from 'react';
import { selectThreadList, useThreads } from '../state/threads';

export const DELETED_ROOTS_LABEL = 'From deleted chats';

export function useHasDeletedRoots(isOwner: boolean, inView: boolean): boolean {
  const total = useThreads(selectThreadList('orphaned'))?.total ?? 0;
  useEffect(() => {
    if (isOwner && !useThreads.getState().lists.orphaned?.ids) void useThreads.getState().loadList('orphaned');
  }, [isOwner]);
  return isOwner && (total > 0 || inView);
}
