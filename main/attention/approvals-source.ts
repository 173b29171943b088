// What waits for a person's decision (DESIGN §11.9) as items of the attention list: one
// item per pending approval the viewer may read. The approvals' own query asks the access
// rules who reads each one, so this source adds no rule of its own.
import { sectionOf, type AttentionItem, type AttentionKind, type AttentionObject } from '../../shared/attention';
import type { ApprovalKind, ApprovalView } from '../../shared/domain';
import { pendingApprovalsFor } from '../access/pending-approvals';
import type { Db } from '../store/database';
import { getThread } from '../store/queries/threads';
import type { AttentionSource } from './attention';

const itemKind: Record<ApprovalKind, AttentionKind> = {
  outgoing: 'held',
  incoming: 'held_in',
  permission: 'permission',
};

/**
 * The item of one pending approval. It opens where the decision is shown: the agent
 * conversation of a held text or of a request made in one, else the conversation or task
 * whose agent asks. `rootGone`: that agent conversation's root was deleted.
 */
export function approvalItem(view: ApprovalView, rootGone: boolean): AttentionItem {
  const kind = itemKind[view.kind];
  const object: AttentionObject = view.thread
    ? { kind: 'thread', id: view.thread.id }
    : { kind: view.context.kind, id: view.context.id };
  // PEER/ROLE: a connection's name never holds a slash.
  const slash = view.thread ? view.thread.peer.indexOf('/') : -1;
  const peer = view.thread ? (slash < 0 ? view.thread.peer : view.thread.peer.slice(0, slash)) : null;
  const peerRole = view.thread && slash >= 0 ? view.thread.peer.slice(slash + 1) : null;
  return {
    // One decision each: two held texts of one agent conversation are two items.
    key: `${kind}:approval:${view.id}`,
    kind,
    section: sectionOf[kind],
    object,
    count: 1,
    stamp: `a${view.id}`,
    at: view.createdAt,
    peer,
    peerRole,
    role: view.role || null,
    root: view.thread ? { kind: view.root.kind, id: view.root.id, gone: rootGone } : null,
    title: view.kind === 'permission' ? view.title : (view.thread?.peer ?? ''),
    reason: null,
    approvalId: view.id,
  };
}

export function approvalsSource(db: Db): AttentionSource {
  return {
    items: (viewer) =>
      pendingApprovalsFor(db, viewer).map((view) =>
        approvalItem(view, view.thread ? getThread(db, view.thread.id)?.root_gone === 1 : false),
      ),
  };
}
