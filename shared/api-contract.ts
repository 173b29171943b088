// The app API: every method the renderer (or a headless client) may call, declared
// once with its params schema and result type. Main's handler table, the preload
// bridge and the renderer's client are all typed from this object.
import { z } from 'zod';
import {
  attentionKinds,
  type AttentionKind,
  type AttentionList,
  type AttentionObject,
  type NotificationPrefs,
} from './attention';
import {
  agentSettingsSchema,
  agentSettingsUpdateSchema,
  type AdapterName,
  displayName,
  multiLine,
  oneLine,
  type ApprovalView,
  type ConnectionSummary,
  type RelaySummary,
  type ContextKind,
  type AskRef,
  type TextView,
  type ThreadSummary,
  type Conversation,
  type Message,
  type Person,
  type RoleView,
  type Task,
  type TaskLogEntry,
  type TurnSummary,
  TRUST_LEVELS,
  REMEMBER_SCOPES,
  type AllowRuleView,
} from './domain';
import type { Ledger } from './ledger';
import { MAX_ROLE_NAME_CHARS, ROLE_NAME_MESSAGE, ROLE_NAME_PATTERN } from './role-name';

interface MethodSpec<P extends z.ZodType, R> {
  params: P;
  doc: string;
  /** Phantom: carries the result type, never set at run time. */
  result?: R;
}

function method<R>() {
  return <P extends z.ZodType>(params: P, doc: string): MethodSpec<P, R> => ({ params, doc });
}

const id = z.number().int().positive();
const name = displayName(
  z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(80, 'must be at most 80 characters')
    .regex(/^[^/]+$/, 'must not contain "/"'),
);
const roleName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(MAX_ROLE_NAME_CHARS, `must be at most ${MAX_ROLE_NAME_CHARS} characters`)
  .regex(ROLE_NAME_PATTERN, ROLE_NAME_MESSAGE);
/** Texts people and agents write keep tab and line breaks, and no other control characters. */
const text = multiLine(z.string().trim().min(1, 'must not be empty').max(100_000, 'is too long'));
const description = multiLine(z.string().max(2000));
const none = z.strictObject({});
const byId = z.strictObject({ id });
const page = {
  offset: z.number().int().min(0).max(10_000_000).optional(),
  limit: z.number().int().min(1).max(500).optional(),
};

export interface ConversationDetail {
  conversation: Conversation;
  messages: Message[];
  turns: TurnSummary[];
  /** The asks its turns made since the first of `messages` (each line names its turn: `postedByTurnId`). */
  asks: AskRef[];
}
export interface TaskDetail {
  task: Task;
  log: TaskLogEntry[];
  subtasks: Task[];
  turns: TurnSummary[];
  /** The asks its turns made (each log line names its turn: `postedByTurnId`). */
  asks: AskRef[];
}
export interface ThreadDetail {
  thread: ThreadSummary;
  texts: TextView[];
  turns: TurnSummary[];
  /** The last lines the agent printed in its current turn. */
  live: string[];
  /** The agent's final outputs, kept in the thread's run log and never sent by themselves. */
  runLog: Array<{ turnId: number; output: string; at: string }>;
}
export interface Invitation {
  /** Pasteable code. */
  code: string;
  /** The same as a parley:// link. */
  link: string;
  /** The address (host:port) the invitation tells the peer to dial; null when it carries only the DHT key. */
  address: string | null;
  /** The DHT key (hex) the invitation carries, by which the peer finds this installation from anywhere. */
  dht: string | null;
  expiresAt: string;
}

/** Where peers reach this installation, and whether they can. */
export interface PeerNetworkStatus {
  /**
   * Who sets it: `settings` — an owner, here (the desktop app; remembered in the
   * database); `command line` — `parley serve`'s flags; `none` — it does not listen.
   */
  configuredBy: 'settings' | 'command line' | 'none';
  /** The interface it listens on: 127.0.0.1 (this computer only), 0.0.0.0 or :: (every network), or one address. */
  listenHost: string;
  /** The port asked for; the desktop app remembers the one it picked. */
  port: number;
  /** The address set for invitations (`HOST` or `HOST:PORT`), or null: the listen address and port. */
  advertise: string | null;
  /** host:port the listener is bound to, or null when it is not listening. */
  listening: string | null;
  /** What invitations carry and peers dial, or null when no invitation can be made. */
  invitationAddress: string | null;
  /** True when only programs on this computer can dial the invitation address (a loopback address). */
  thisComputerOnly: boolean;
  /** Why peers cannot reach this installation, in a sentence; null when nothing is known to be wrong. */
  problem: string | null;
  /** The last check that dialled the invitation address from here, or null before the first. */
  check: { address: string; reachable: boolean; message: string; at: string } | null;
  /**
   * The DHT carrier, by which peers reach this installation from anywhere with no address:
   * `on` with our key, `off` as configured, or `failed` with why.
   */
  dht: {
    state: 'on' | 'off' | 'failed';
    key: string | null;
    bootstrap: string;
    problem: string | null;
    /** The key this installation's own blind relay listens under (`parley serve --relay`), or null. */
    relay: string | null;
  };
}
/** One search result: the conversation, task or agent conversation a match is in, with its best match. */
export interface SearchHit {
  kind: ContextKind;
  /** The conversation's, task's or agent conversation's id. */
  id: number;
  /** The conversation's role, the task's title, or PEER/ROLE for an agent conversation. */
  title: string;
  /** Plain text around the best match. */
  snippet: string;
  /** [start, end) offsets into `snippet` (UTF-16 code units) of the words that matched. */
  highlights: Array<[number, number]>;
  /** When the matching text was written. */
  at: string;
  /** For an agent conversation: the topic it belongs to, where clients show it. */
  root?: { kind: ContextKind; id: number; gone: boolean };
}

/** An invitation made here that no peer has used yet and that has not expired. */
export interface PendingInvitation {
  id: number;
  /** The local roles the new peer will be able to address. */
  roles: string[];
  /** Who made it, or null when that person has left. */
  createdBy: { id: number; name: string } | null;
  createdAt: string;
  expiresAt: string;
}

/** The home page's first-run checklist, worked out from what the installation holds. */
export interface FirstRunState {
  /**
   * The installation offers the checklist: it was set up by this version's first run,
   * which made its default role. One from before, or set up without a default role, does not.
   */
  offered: boolean;
  /** The person hid the checklist. */
  dismissed: boolean;
  /** The role it sets up: the one first run made while it exists, else the first role; null when there is none. */
  role: RoleView | null;
  /** What first run found when it chose that role's agent; null when the role was not made by first run. */
  detected: { adapter: AdapterName; found: string } | null;
  steps: {
    /** The role's agent has answered at least once. */
    agent: boolean;
    /** There is a connection that is not revoked. */
    connect: boolean;
    /** A role asked a peer's role from one of the person's conversations or a task. */
    ask: boolean;
  };
}

export interface StopResult {
  /** False when there was nothing to stop. */
  stopped: boolean;
}

export const methods = {
  /** Sign in with a person's token (headless transport only; Electron is signed in as the owner). */
  'session.signIn': method<{ person: Person }>()(
    z.strictObject({ token: oneLine(z.string().min(1).max(200)) }),
    'Sign in',
  ),
  /** The signed-in person and the installation they are in. */
  'session.whoami': method<{ person: Person; installation: { id: string; name: string } }>()(none, 'Who am I'),

  /** Everyone in this installation. */
  'people.list': method<Person[]>()(none, 'List people'),
  /** Owner: add a person; the token is shown once and stored only as a hash. */
  'people.add': method<{ person: Person; token: string }>()(
    z.strictObject({ name, kind: z.enum(['owner', 'member']) }),
    'Add a person',
  ),
  /** Owner: remove a person with their conversations and sign-in tokens; their sessions end at once. */
  'people.remove': method<{ removed: true }>()(byId, 'Remove a person'),
  /**
   * Owner: replace a person's sign-in tokens with a new one, shown once; every session
   * signed in with the old ones ends at once (the caller's own too, after this answer).
   */
  'people.reissueToken': method<{ token: string }>()(byId, 'Reissue a sign-in token'),

  /** Every role of the installation, without its secrets: each `env` name as `{set: true}`, `hasApiKey`. */
  'roles.list': method<RoleView[]>()(none, 'List roles'),
  /** Owner: make a role with its agent settings. */
  'roles.create': method<RoleView>()(
    z.strictObject({ name: roleName, description: description.optional(), agent: agentSettingsSchema }),
    'Create a role',
  ),
  /**
   * Owner: change a role's name, description or agent settings. A secret left out, or an
   * `env` value sent back as `{set: true}`, keeps the stored one while it would still go
   * to the same program (or, for the API key, the same origin).
   */
  'roles.update': method<RoleView>()(
    z.strictObject({
      id,
      name: roleName.optional(),
      description: description.optional(),
      agent: agentSettingsUpdateSchema.optional(),
    }),
    'Update a role',
  ),
  /** Owner: remove a role; its running turns are stopped and its conversations and tasks go with it. */
  'roles.remove': method<{ removed: true }>()(byId, 'Remove a role'),
  /** Owner: a role token for scripts; it reads through the role API and never sends. */
  'roles.token': method<{ token: string }>()(byId, 'Make a role token'),

  /** The signed-in person's conversations, one per role at most. */
  'conversations.list': method<Conversation[]>()(none, 'List my conversations'),
  /** Open (or find) the signed-in person's conversation with a role. */
  'conversations.open': method<Conversation>()(z.strictObject({ roleId: id }), 'Open a conversation'),
  /** A conversation with its messages and recent turns. */
  'conversations.get': method<ConversationDetail>()(
    z.strictObject({ id, limit: z.number().int().min(1).max(1000).optional(), before: id.optional() }),
    'Get a conversation',
  ),
  /** Send a message to the role; it is committed before this returns. */
  'conversations.send': method<Message>()(z.strictObject({ id, text }), 'Send a message'),
  /** Stop the role's agent in this conversation; resolves once its process tree is gone. */
  'conversations.stop': method<StopResult>()(byId, 'Stop the agent'),
  /** Delete the conversation and its history. */
  'conversations.delete': method<{ deleted: true }>()(byId, 'Delete a conversation'),

  /** Every task, for every member of the installation. */
  'tasks.list': method<Task[]>()(none, 'List tasks'),
  /** Give a role a task (or a subtask of one). */
  'tasks.create': method<Task>()(
    z.strictObject({
      roleId: id,
      title: oneLine(z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters')),
      body: multiLine(z.string().max(100_000)).optional(),
      parentId: id.optional(),
    }),
    'Create a task',
  ),
  /** A task with its log, subtasks and recent turns. */
  'tasks.get': method<TaskDetail>()(byId, 'Get a task'),
  /** Comment on a task; the role's agent takes the comment in its next turn. */
  'tasks.comment': method<TaskLogEntry>()(z.strictObject({ id, text }), 'Comment on a task'),
  /** Creator or owner: mark a task finished. */
  'tasks.finish': method<Task>()(byId, 'Finish a task'),
  /** Stop the role's agent on this task. */
  'tasks.stop': method<StopResult>()(byId, 'Stop the agent'),
  /** Creator or owner: delete a task with its subtasks. */
  'tasks.delete': method<{ deleted: true }>()(byId, 'Delete a task'),

  /** Agent conversations under a root the caller can read, the ones peers started, or (owners) those whose root is gone. */
  'threads.list': method<ThreadSummary[]>()(
    z.union([
      z.strictObject({ root: z.strictObject({ kind: z.enum(['conversation', 'task', 'thread']), id }) }),
      z.strictObject({ peerStarted: z.literal(true) }),
      z.strictObject({ orphaned: z.literal(true) }),
    ]),
    'List agent conversations',
  ),
  /** The same lists a page at a time: working first, then open, then closed, latest activity first. */
  'threads.page': method<{ total: number; threads: ThreadSummary[] }>()(
    z.union([
      z.strictObject({ root: z.strictObject({ kind: z.enum(['conversation', 'task', 'thread']), id }), ...page }),
      z.strictObject({ peerStarted: z.literal(true), ...page }),
      z.strictObject({ orphaned: z.literal(true), ...page }),
    ]),
    'Page through agent conversations',
  ),
  /** One agent conversation with its texts (the latest `textsLimit`, before `textsBefore`), turns and run log. */
  'threads.get': method<ThreadDetail>()(
    z.strictObject({
      id,
      textsLimit: z.number().int().min(0).max(1000).optional(),
      textsBefore: id.optional(),
    }),
    'Get an agent conversation',
  ),
  /** Stop the agent of an agent conversation; what it was given counts as handled. */
  'threads.stop': method<StopResult>()(byId, 'Stop the agent'),
  /** Take back the asks of an agent conversation started here, while no answer has come: the peer stops, down its chain. */
  'threads.withdraw': method<{ withdrawn: true }>()(byId, 'Withdraw the ask'),

  /** Every connection with its state. */
  'connections.list': method<ConnectionSummary[]>()(none, 'List connections'),
  /** Owner: make a one-time invitation; `roles` are the local roles the new peer may address. */
  'connections.invite': method<Invitation>()(
    z.strictObject({
      roles: z.array(roleName).max(100).optional(),
      expiresInMinutes: z
        .number()
        .int()
        .min(1)
        .max(7 * 24 * 60)
        .optional(),
    }),
    'Invite a peer',
  ),
  /** Owner: accept an invitation (code or parley:// link); resolves once the peers are connected. */
  'connections.accept': method<ConnectionSummary>()(
    z.strictObject({ code: z.string().trim().min(10).max(4000), roles: z.array(roleName).max(100).optional() }),
    'Accept an invitation',
  ),
  /** Owner: pause a connection here: its agents stop, nothing is sent or taken in until unpaused. */
  'connections.pause': method<ConnectionSummary>()(byId, 'Pause a connection'),
  /** Owner: unpause a connection; nothing restarts by itself. */
  'connections.unpause': method<ConnectionSummary>()(byId, 'Unpause a connection'),
  /** Owner: revoke a connection for good; the peer's certificate is refused from then on. */
  'connections.revoke': method<ConnectionSummary>()(byId, 'Revoke a connection'),
  /** Owner: set which local roles the peer may address. */
  'connections.expose': method<ConnectionSummary>()(
    z.strictObject({ id, roles: z.array(roleName).max(100) }),
    'Expose roles',
  ),
  /** Owner: set how many outgoing texts may wait on this connection. */
  'connections.setQueueLimit': method<ConnectionSummary>()(
    z.strictObject({ id, limit: z.number().int().min(1).max(100_000) }),
    'Set the queue limit',
  ),

  /** Everyone: the invitations made here that are still waiting to be used (no codes: those are shown once). */
  'invitations.list': method<PendingInvitation[]>()(none, 'List pending invitations'),
  /** Owner: cancel a pending invitation; a peer presenting it from then on is refused. */
  'invitations.cancel': method<{ cancelled: true }>()(byId, 'Cancel an invitation'),
  /** Owner: take a revoked connection off the list; its agent conversations stay, and the peer stays refused. */
  'connections.remove': method<{ removed: true }>()(byId, 'Remove a revoked connection'),

  /**
   * Full-text search over what the caller may read: their conversations' messages, every
   * task (title, brief, log) and the texts of the agent conversations they read. Words
   * are matched as typed prefixes, "quoted words" as a phrase, all of them required; one
   * hit per conversation, task or agent conversation, best match first, newer first among equals.
   */
  search: method<{ hits: SearchHit[] }>()(
    z.strictObject({
      query: z.string().trim().min(1, 'must not be empty').max(500, 'must be at most 500 characters'),
      limit: z.number().int().min(1).max(100).optional(),
    }),
    'Search',
  ),

  /**
   * What the roles of a conversation or a task said to other installations and heard from
   * them, on its people's behalf (DESIGN §12.8): every agent conversation rooted there, each
   * text with its state, who approved or declined it, and how the turn that took it ended.
   * `format: 'markdown'` also returns it as a Markdown document to keep.
   */
  'ledger.get': method<{ ledger: Ledger; markdown: string | null }>()(
    z.strictObject({
      root: z.strictObject({ kind: z.enum(['conversation', 'task']), id }),
      format: z.enum(['json', 'markdown']).optional(),
    }),
    'Read what agents said on your behalf',
  ),

  /** The first-run checklist for the home page: which steps are done, and whether the person hid it. */
  'firstRun.get': method<FirstRunState>()(none, 'Get the first-run checklist'),
  /** Hide the first-run checklist for the signed-in person. */
  'firstRun.dismiss': method<FirstRunState>()(none, 'Hide the first-run checklist'),
  /**
   * Owner: whether an agent's sends on this connection wait for a person (`ask`) or go
   * out at once (`send`), and whether texts from its peer wait for a person (`ask`) before
   * the agent takes them (`run`). Texts already held stay held until decided.
   */
  'connections.setPolicy': method<ConnectionSummary>()(
    z
      .strictObject({ id, outgoing: z.enum(['send', 'ask']).optional(), incoming: z.enum(['run', 'ask']).optional() })
      .refine((p) => p.outgoing !== undefined || p.incoming !== undefined, 'give outgoing or incoming'),
    'Set what waits for approval',
  ),

  /**
   * Owner: how far runs working for this peer may reach (DESIGN §12.3): `answer` reads the
   * role's folder and reaches only the model, every tool request denied; `work` writes in
   * the role's folder, tool requests wait for a person; `full` runs as the role's own
   * settings say. A run takes the new level at its next turn.
   */
  'connections.setTrust': method<ConnectionSummary>()(
    z.strictObject({ id, level: z.enum(TRUST_LEVELS) }),
    'Set how far a peer is trusted',
  ),
  /**
   * Owner: whether runs working for this connection's peer start only inside the agents'
   * OS sandbox (`required`, the default), or also on a computer where it cannot start.
   */
  'connections.setSandbox': method<{ id: number; required: boolean }>()(
    z.strictObject({ id, required: z.boolean() }),
    'Choose whether runs for this peer need the sandbox',
  ),
  /** Whether agents start inside the OS sandbox on this computer, and if not, why. */
  'sandbox.get': method<{ available: boolean; reason: string | null }>()(none, 'Whether agents start in a sandbox'),

  /** What waits for the caller's approval, or that they may read: held texts and tool requests, oldest first. */
  'approvals.list': method<ApprovalView[]>()(none, 'List what waits for approval'),
  /**
   * Approve or deny what waits: a held text (outgoing, it goes out as usual; incoming, the
   * agent takes it) or an agent's request to use a tool. Whoever reads its topic decides,
   * but what an agent does for a peer that asked is an owner's to allow.
   */
  'approvals.decide': method<ApprovalView>()(
    z
      .strictObject({
        id,
        approve: z.boolean(),
        /**
         * With an approval, always allow the same from this peer role: within this root
         * (`root`), or everywhere (`peer-role`, owners). Later texts and tool requests that
         * match go through without asking (see allowRules.list).
         */
        remember: z.enum(REMEMBER_SCOPES).optional(),
      })
      .refine((p) => p.remember === undefined || p.approve, 'remember goes only with an approval'),
    'Approve or deny',
  ),
  /** The "always allow" rules the caller may see, of one connection or all: what is let through without asking. */
  'allowRules.list': method<AllowRuleView[]>()(
    z.strictObject({ connectionId: id.optional() }),
    'List what is always allowed',
  ),
  /** Stop always allowing: owners, or the person who made the rule. What matches waits for a person again. */
  'allowRules.remove': method<{ removed: true }>()(byId, 'Stop always allowing'),
  /** The caller's own notification preferences: per kind of what waits on them, and per connection. */
  'notifications.get': method<NotificationPrefs>()(none, 'Get notification preferences'),
  /** Turn notifications of a kind, or about a connection, off or on again, for the caller only. */
  'notifications.set': method<NotificationPrefs>()(
    z
      .strictObject({
        kinds: z
          .array(
            z.strictObject({
              kind: z.enum(attentionKinds as [AttentionKind, ...AttentionKind[]]),
              notify: z.boolean(),
            }),
          )
          .max(50)
          .optional(),
        connections: z
          .array(z.strictObject({ id, notify: z.boolean() }))
          .max(1000)
          .optional(),
      })
      .refine((p) => p.kinds !== undefined || p.connections !== undefined, 'give kinds or connections'),
    'Set notification preferences',
  ),

  /**
   * What waits on me (DESIGN §11.10), in what I may read: held texts and permission
   * requests, what was not delivered and agents that failed, a peer's pause or revoke
   * (owners); apart from them, answers in my conversations and news on tasks and from
   * peers. With the unread count of each conversation, task and agent conversation.
   */
  'attention.list': method<AttentionList>()(
    z.strictObject({ limit: z.number().int().min(1).max(500).optional() }),
    'What waits on me',
  ),
  /**
   * I have read it, as it is now: a conversation, task or agent conversation (what the
   * page shows when it is opened), a connection's news (owners), every agent conversation
   * peers started, or everything. A decision (a held text) still waits until it is made.
   */
  'attention.markRead': method<{ marked: true }>()(
    z.union([
      z.strictObject({ kind: z.enum(['conversation', 'task', 'thread', 'connection']), id }),
      z.strictObject({ kind: z.enum(['peerStarted', 'all']) }),
    ]),
    'Mark as read',
  ),

  /** Where peers reach this installation: the listen address and port, what invitations carry, and whether it works. */
  'network.get': method<PeerNetworkStatus>()(none, 'Get the peer address'),
  /**
   * Owner, desktop app: change where peers reach this installation. It listens on the
   * new address before anything is saved; a port that cannot be had is refused and the
   * old one kept. Peers that can be dialled learn the new address at once.
   */
  'network.update': method<PeerNetworkStatus>()(
    z
      .strictObject({
        listenHost: z.string().trim().min(1).max(100).optional(),
        port: z.number().int().min(0).max(65535).optional(),
        advertise: z.string().trim().min(1).max(300).nullable().optional(),
        /** Whether to be on the DHT as well (the desktop app's switch). */
        dht: z.boolean().optional(),
      })
      .refine((p) => Object.keys(p).length > 0, 'give listenHost, port or advertise (or dht, the DHT switch)'),
    'Change the peer address',
  ),
  /** Owner: dial the invitation address from here now, and say whether this installation answered. */
  'network.check': method<PeerNetworkStatus>()(none, 'Check the peer address'),

  /**
   * The blind relays people here chose (DESIGN §12.1), each asked just now whether it
   * answers. Only these, and the ones a peer named, are ever used, and only once
   * holepunching fails; invitations and peers learn their keys.
   */
  'relays.list': method<RelaySummary[]>()(none, 'List the relays'),
  /** Owner: trust a blind relay, by its key (what `parley serve --relay` says in serve.json), with where it runs. */
  'relays.add': method<RelaySummary>()(
    z.strictObject({
      key: z
        .string()
        .trim()
        .toLowerCase()
        .regex(/^[0-9a-f]{64}$/, 'a relay key is 64 hexadecimal characters (serve.json says it as `relay`)'),
      address: z.string().trim().min(1).max(300).nullable().optional(),
    }),
    'Add a relay',
  ),
  /** Owner: stop using a relay; peers hear of it at once. */
  'relays.remove': method<{ removed: true }>()(z.strictObject({ id }), 'Remove a relay'),
} as const;

export type Methods = typeof methods;
export type MethodName = keyof Methods;
export type ParamsOf<M extends MethodName> = z.input<Methods[M]['params']>;
export type ParsedParamsOf<M extends MethodName> = z.output<Methods[M]['params']>;
export type ResultOf<M extends MethodName> = NonNullable<Methods[M]['result']>;

export function isMethodName(value: string): value is MethodName {
  return Object.hasOwn(methods, value);
}

export { ApiError, errorCodes, SESSION_ENDED_CLOSE_CODE, type ApiErrorShape, type ErrorCode } from './api-errors';

/** A parley:// invitation link the desktop app received: the UI opens Accept with it. */
export interface InvitationLinkEvent {
  type: 'invitation';
  link: string;
}

export type ChangedKind =
  | 'person'
  | 'role'
  | 'conversation'
  | 'task'
  | 'run'
  | 'thread'
  | 'connection'
  /** An invitation was made (id 0) or cancelled (invitations.list); a used one changes a connection. */
  | 'invitation'
  /** Something that waits for a person's approval (a held text, a permission request), or its decision. */
  | 'approval'
  /** Where peers reach this installation (network.get); the id is always 0. */
  | 'network'
  /** The relays people here chose (relays.list); the id is the relay's. */
  | 'relays'
  /** What waits on the person may have changed (attention.list); the id is always 0. */
  | 'attention';

/** Pushed to signed-in clients; they refetch what they show. */
export interface ChangedEvent {
  type: 'changed';
  kind: ChangedKind;
  id: number;
}
/** The desktop app asks the page to open what a clicked notification was about. */
export interface OpenEvent {
  type: 'open';
  object: AttentionObject;
}

/** The desktop menu asks the page to show a view (Settings…). */
export interface ShowEvent {
  type: 'show';
  view: 'settings';
}

/**
 * The browser transport's own, never sent by the server: the server closed this tab's
 * socket with SESSION_ENDED_CLOSE_CODE, and the token it used will not work again.
 */
export interface SessionEndedEvent {
  type: 'sessionEnded';
  reason: string;
}
export type AppEvent = ChangedEvent | InvitationLinkEvent | OpenEvent | ShowEvent | SessionEndedEvent;

/** What the preload exposes as `window.parley`, and what the browser client implements. */
export interface ParleyBridge {
  invoke<M extends MethodName>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
  onEvent(listener: (event: AppEvent) => void): () => void;
}

/** Turns a zod error into one readable sentence naming the fields. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      // A key that is not a plain name (it may hold the very character refused) is shown quoted.
      const where =
        issue.path.length > 0
          ? issue.path
              .map((key) => (typeof key === 'string' && !/^[\w-]+$/.test(key) ? JSON.stringify(key) : String(key)))
              .join('.')
          : 'params';
      return `${where}: ${issue.message}`;
    })
    .join('; ');
}
