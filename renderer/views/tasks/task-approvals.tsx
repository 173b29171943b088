import { useMemo } from 'react';
import { WaitingForApproval } from '../../components/approvals';
import type { AskPlaces } from '../../components/ask-state';
import { approvalsForRoot, selectApprovals, useApprovals } from '../../state/approvals';

/**
 * What waits for approval for this task and has no log line to show it under: its agent's
 * tool requests, a peer's answer held before the agent takes it, a send no line names.
 */
export function TaskApprovals({ id, asks }: { id: number; asks: AskPlaces }) {
  const approvals = useApprovals(selectApprovals);
  const here = useMemo(() => {
    const linked = new Set(
      [...asks.under.values(), ...asks.alone.map((row) => row.links)].flat().map((link) => link.textId),
    );
    return approvalsForRoot(approvals, { kind: 'task', id }).filter(
      (approval) => !(approval.text && linked.has(approval.text.id)),
    );
  }, [approvals, asks, id]);
  return <WaitingForApproval approvals={here} />;
}
