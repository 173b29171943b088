// Who may read and act on what in an installation (DESIGN §7), decided here and
// nowhere else: pure functions over plain rows. The app API's handlers, the audience
// of every change event, the thread lists and the role API's history all ask these
// functions, so a rule changes in one place and every door follows it.
//
// Reading comes first: an object a person may not read does not exist for them (its
// refusal is `not_found`, so not even its id leaks), and its changes never reach them.
// Acting is then allowed to all who read it, or narrowed (finishing and deleting a task,
// managing the installation).
import type { ContextKind, PersonKind } from '../../shared/domain';

/** A person asking. */
export interface Viewer {
  id: number;
  kind: PersonKind;
}

/** Who may read an object and hear of its changes: one person, every person of the installation, or its owners. */
export type Audience = { personId: number } | 'everyone' | 'owners';

export function inAudience(viewer: Viewer, audience: Audience): boolean {
  if (audience === 'everyone') return true;
  if (audience === 'owners') return viewer.kind === 'owner';
  return audience.personId === viewer.id;
}

/**
 * Whether everyone who is, or will ever be, in `inner` is in `outer`: what `outer` may
 * read can then be shown to `inner`. Membership of "everyone" and "owners" changes as
 * people come and go, so only what holds whoever joins counts: everyone covers all,
 * owners cover owners and one owner, a person covers themself.
 */
export function covers(
  outer: Audience,
  inner: Audience,
  kindOf: (personId: number) => PersonKind | undefined,
): boolean {
  if (outer === 'everyone') return true;
  if (outer === 'owners')
    return inner === 'owners' || (typeof inner === 'object' && kindOf(inner.personId) === 'owner');
  return typeof inner === 'object' && inner.personId === outer.personId;
}

// ---- the objects, as the rows that decide ----------------------------------------

export interface ConversationFacts {
  person_id: number;
}

export interface TaskFacts {
  id: number;
  created_by: number | null;
}

export interface ThreadFacts {
  id: number;
  root_kind: ContextKind;
  root_id: number;
  root_gone: number;
  started_by: 'local' | 'peer';
}

/** A thread's root as it is now: the row, or undefined when it no longer exists. */
export type RootFacts =
  | { kind: 'conversation'; conversation: ConversationFacts | undefined }
  | { kind: 'task'; task: TaskFacts | undefined }
  | { kind: 'thread'; thread: ThreadFacts | undefined };

/**
 * What waits for a person (DESIGN §11.9): an agent's text held before it goes out, a
 * peer's text held before the agent takes it, or an agent's request to use a tool.
 */
export interface ApprovalFacts {
  kind: 'outgoing' | 'incoming' | 'permission';
}

/** The agent conversation of a held text, or the context of the run that asks; undefined once it is gone. */
export type ApprovalPlace =
  | { kind: 'conversation'; conversation: ConversationFacts }
  | { kind: 'task'; task: TaskFacts }
  | { kind: 'thread'; thread: ThreadFacts; root: RootFacts }
  | undefined;

export type Target =
  | { kind: 'conversation'; conversation: ConversationFacts }
  | { kind: 'task'; task: TaskFacts }
  | { kind: 'thread'; thread: ThreadFacts; root: RootFacts }
  | { kind: 'approval'; approval: ApprovalFacts; place: ApprovalPlace }
  /** The installation's directory and settings: people, roles, connections, invitations, role tokens. */
  | { kind: 'installation' };

/** What can be done to each kind of object. */
export const actions = {
  conversation: ['read', 'send', 'stop', 'delete'],
  task: ['read', 'comment', 'subtask', 'stop', 'finish', 'delete'],
  thread: ['read', 'stop', 'withdraw'],
  approval: ['read', 'decide'],
  installation: ['read', 'manage'],
} as const;
export type ActionOn<K extends Target['kind']> = (typeof actions)[K][number];

// ---- reading ----------------------------------------------------------------------

/** Who reads an object (DESIGN §7). */
export function audienceOf(target: Target): Audience {
  switch (target.kind) {
    case 'conversation':
      return { personId: target.conversation.person_id };
    case 'task':
    case 'installation':
      return 'everyone';
    case 'thread':
      return threadAudience(target.thread, target.root);
    case 'approval':
      return target.place ? audienceOf(target.place) : 'owners';
  }
}

/**
 * Who decides what waits (DESIGN §11.9): whoever reads where it waits — except that what
 * an agent does for a peer (a text it sends, a tool it uses, in an agent conversation a
 * peer started or in a relay for one) is an owner's to allow. A peer's text is let in by
 * whoever reads its agent conversation. Once the place is gone, owners.
 */
export function approvalDeciders(target: Extract<Target, { kind: 'approval' }>): Audience {
  const { approval, place } = target;
  const readers = audienceOf(target);
  if (approval.kind === 'incoming' || place?.kind !== 'thread') return readers;
  return place.thread.root_kind === 'thread' ? 'owners' : readers;
}

/**
 * An agent conversation is read by whoever reads its root (ADR 0035): the person of a
 * conversation; everyone for a task, and for one the peer started, which is its own root
 * or the root of the relays it asked for. One whose root is gone is read by owners; so
 * is one whose root cannot be what the design allows, rather than by anyone.
 */
function threadAudience(thread: ThreadFacts, root: RootFacts): Audience {
  if (thread.root_gone || root.kind !== thread.root_kind) return 'owners';
  switch (root.kind) {
    case 'conversation':
      return root.conversation ? { personId: root.conversation.person_id } : 'owners';
    case 'task':
      return root.task ? 'everyone' : 'owners';
    case 'thread': {
      if (thread.root_id === thread.id) return thread.started_by === 'peer' ? 'everyone' : 'owners';
      const rootThread = root.thread;
      return rootThread &&
        rootThread.started_by === 'peer' &&
        rootThread.root_id === rootThread.id &&
        !rootThread.root_gone
        ? 'everyone'
        : 'owners';
    }
  }
}

/** Who hears of a change, by the object that changed. */
export const eventAudience = {
  conversation: (conversation: ConversationFacts): Audience => audienceOf({ kind: 'conversation', conversation }),
  task: (task: TaskFacts): Audience => audienceOf({ kind: 'task', task }),
  /** A person, a role or a connection changed. */
  installation: (): Audience => audienceOf({ kind: 'installation' }),
  /**
   * A peer paused or revoked a connection: news for those who may act on it (unpause,
   * revoke, remove), the owners. Everyone still reads the connection itself.
   */
  connectionNotice: (): Audience => 'owners',
};

// ---- acting -----------------------------------------------------------------------

/** Allowed, or why not: unreadable (not found), or readable but not theirs to do. */
export type Decision =
  | { allowed: true }
  | { allowed: false; code: 'not_found' }
  | { allowed: false; code: 'forbidden'; needs: 'an owner' | "the task's creator or an owner" };

const allowed: Decision = { allowed: true };
const hidden: Decision = { allowed: false, code: 'not_found' };

export function decide<T extends Target>(viewer: Viewer, target: T, action: ActionOn<T['kind']>): Decision {
  if (!(actions[target.kind] as readonly string[]).includes(action))
    throw new Error(`no action "${action}" on a ${target.kind}`);
  if (!inAudience(viewer, audienceOf(target))) return hidden;
  switch (target.kind) {
    case 'conversation':
    case 'thread':
      // Whoever reads a conversation or an agent conversation does all it allows.
      return allowed;
    case 'approval':
      return action === 'read' || inAudience(viewer, approvalDeciders(target))
        ? allowed
        : { allowed: false, code: 'forbidden', needs: 'an owner' };
    case 'task':
      if (action !== 'finish' && action !== 'delete') return allowed;
      return viewer.kind === 'owner' || target.task.created_by === viewer.id
        ? allowed
        : { allowed: false, code: 'forbidden', needs: "the task's creator or an owner" };
    case 'installation':
      return action === 'read' || viewer.kind === 'owner'
        ? allowed
        : { allowed: false, code: 'forbidden', needs: 'an owner' };
  }
}

/**
 * Deleting a task deletes its subtasks, however deep: allowed only when the viewer may
 * delete each one. Returns those that stand in the way (none: allowed).
 */
export function taskTreeBlockers<T extends TaskFacts>(viewer: Viewer, tree: readonly T[]): T[] {
  return tree.filter((task) => !decide(viewer, { kind: 'task', task }, 'delete').allowed);
}

/** A list of agent conversations: under a root, the ones peers started, or those whose root is gone. */
export type ThreadList = { kind: 'root'; root: Target | undefined } | { kind: 'peerStarted' } | { kind: 'orphaned' };

/**
 * Who may ask for a list: whoever reads its root (everyone for the ones peers started);
 * owners for those whose root is gone, which a member is told plainly they cannot see.
 */
export function decideThreadList(viewer: Viewer, list: ThreadList): Decision {
  switch (list.kind) {
    case 'root':
      return list.root ? decide(viewer, list.root, 'read') : hidden;
    case 'peerStarted':
      return allowed;
    case 'orphaned':
      return viewer.kind === 'owner' ? allowed : { allowed: false, code: 'forbidden', needs: 'an owner' };
  }
}

// ---- the role API -----------------------------------------------------------------

/** Who calls the role API: an agent in a run, answering for its root's audience, or a role token (an owner's script). */
export type RoleCaller = { kind: 'run'; rootAudience: Audience } | { kind: 'role' };

/**
 * Whether `parley history` lists one of the role's agent conversations (DESIGN §11.3):
 * from a run, only one that everyone who reads the run's root may read, since what the
 * run learns can end up there; a role token reads all its role's.
 */
export function historyIncludes(
  caller: RoleCaller,
  threadAudience: Audience,
  kindOf: (personId: number) => PersonKind | undefined,
): boolean {
  return caller.kind === 'role' || covers(threadAudience, caller.rootAudience, kindOf);
}
