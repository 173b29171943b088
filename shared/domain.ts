// Domain types shared by main, preload and renderer. Plain data only: these cross
// process boundaries as JSON.
import { z } from 'zod';

export type PersonKind = 'owner' | 'member';

export interface Person {
  id: number;
  name: string;
  kind: PersonKind;
  createdAt: string;
}

// Control characters in what people type. A NUL cannot pass through a command line,
// an environment or a file name at all (starting the agent fails), and the others have
// no place in a name, a program or a path, where they only hide what the value is.
// Text that may span lines (instructions, texts, descriptions, environment values such
// as a PEM key, a command's arguments such as a script for `sh -c`) keeps tab and line
// breaks; everything else is refused with a message that names the character.

// Matching control characters is the point of these two.
/** C0 controls (NUL, tab, line breaks, ESC…), DEL and the C1 controls. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
/** The same, less tab, line feed and carriage return. */
// eslint-disable-next-line no-control-regex
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/u;
/** Bidirectional embedding, override and isolate marks: they make a name display as another. */
const BIDI_CONTROL = /[\u202a-\u202e\u2066-\u2069]/u;

function found(value: string, pattern: RegExp): string | null {
  const match = pattern.exec(value);
  if (!match) return null;
  const code = match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
  return `U+${code} at character ${match.index + 1}`;
}

/** Why `value` may not be a one-line value (a name, a program, a path), or null when it may. */
export function oneLineProblem(value: string): string | null {
  const where = found(value, CONTROL);
  return where ? `must not contain control characters (found ${where})` : null;
}

/** Why `value` may not be multi-line text, or null when it may. */
export function textProblem(value: string): string | null {
  const where = found(value, CONTROL_IN_TEXT);
  return where ? `must not contain control characters other than tab and line breaks (found ${where})` : null;
}

/** Why `value` may not be a name shown to people, or null when it may. */
export function nameProblem(value: string): string | null {
  const where = found(value, BIDI_CONTROL);
  return oneLineProblem(value) ?? (where ? `must not contain bidirectional text controls (found ${where})` : null);
}

const refuse = (problem: (value: string) => string | null) => (value: string, ctx: z.RefinementCtx) => {
  const message = problem(value);
  if (message) ctx.addIssue({ code: 'custom', message });
};

/** A string schema that refuses control characters: names, programs, paths, keys. */
export const oneLine = (schema: z.ZodString = z.string()) => schema.superRefine(refuse(oneLineProblem));
/** A string schema for text that may span lines. */
export const multiLine = (schema: z.ZodString = z.string()) => schema.superRefine(refuse(textProblem));
/** A string schema for a name people read (a person, an installation). */
export const displayName = (schema: z.ZodString = z.string()) => schema.superRefine(refuse(nameProblem));

const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'not a valid environment variable name');
const envKeyError = (issue: { code: string }) =>
  issue.code === 'invalid_key'
    ? 'not a valid environment variable name (letters, digits and "_", not starting with a digit)'
    : undefined;

/**
 * The agent settings' schema. Checked, its text refuses control characters (what people
 * send); unchecked, it reads settings already stored as they are, so a value an older
 * Parley kept still shows, and a turn that cannot start with it fails and says why.
 */
function agentSettings(checked: boolean) {
  const line = (schema: z.ZodString) => (checked ? oneLine(schema) : schema);
  const text = (schema: z.ZodString) => (checked ? multiLine(schema) : schema);

  /** Settings every adapter accepts. */
  const agentCommon = {
    /** Extra instructions given to the agent on every turn. */
    instructions: text(z.string().max(20_000)).optional(),
    /** A turn that works longer than this is stopped as if a person had pressed Stop. */
    turnTimeoutSec: z
      .number()
      .int()
      .min(1)
      .max(24 * 3600)
      .optional(),
  };

  /** Environment values may be multi-line (a PEM key); nothing else of the controls. */
  const envValues = z.record(envName, text(z.string().max(32_768)), { error: envKeyError });

  const absolutePath = line(z.string().max(4096)).refine(
    (p) => p.startsWith('/') || /^[A-Za-z]:[\\/]/.test(p),
    'must be an absolute path',
  );

  /** A program to run: a one-line name or path. */
  const program = line(z.string().min(1).max(4096));

  /** Program and arguments: the program on one line; an argument may span lines (`sh -c SCRIPT`). */
  const commandLine = z
    .array(text(z.string().min(1).max(4096)))
    .min(1)
    .max(256)
    .superRefine((argv, ctx) => {
      const problem = !checked || argv[0] === undefined ? null : oneLineProblem(argv[0]);
      if (problem) ctx.addIssue({ code: 'custom', path: [0], message: `the program ${problem}` });
    });

  const model = line(z.string().min(1).max(200));

  /** How long the agent may go without reaching its model (retrying, or waiting on a silent server) before its turn fails; default 60 s. */
  const modelTimeoutSec = z.number().int().min(5).max(3600).optional();

  return z.discriminatedUnion('adapter', [
    z.strictObject({
      adapter: z.literal('scripted'),
      ...agentCommon,
    }),
    z.strictObject({
      adapter: z.literal('command'),
      /** Program and arguments, run without a shell. */
      command: commandLine,
      /** Working folder; an absolute path. */
      cwd: absolutePath.optional(),
      env: envValues.optional(),
      /** What the command reads on stdin: the inputs as plain text, or the whole turn as JSON. */
      input: z.enum(['text', 'json']).optional(),
      ...agentCommon,
    }),
    z.strictObject({
      adapter: z.literal('claude-code'),
      /** The `claude` executable; found on PATH when omitted. */
      command: program.optional(),
      model: model.optional(),
      /** How Claude Code asks before acting: its --permission-mode. */
      permissionMode: z.enum(['default', 'acceptEdits', 'bypassPermissions', 'plan']).optional(),
      cwd: absolutePath.optional(),
      env: envValues.optional(),
      modelTimeoutSec,
      ...agentCommon,
    }),
    z.strictObject({
      adapter: z.literal('codex'),
      /** The `codex` executable; found on PATH when omitted. */
      command: program.optional(),
      model: model.optional(),
      sandbox: z.enum(['read-only', 'workspace-write', 'danger-full-access']).optional(),
      cwd: absolutePath.optional(),
      env: envValues.optional(),
      modelTimeoutSec,
      ...agentCommon,
    }),
    z.strictObject({
      adapter: z.literal('openai-compatible'),
      /** e.g. http://localhost:11434/v1 (Ollama), https://api.openai.com/v1. One line: URL parsing would drop a line break silently. */
      baseUrl: line(z.string()).pipe(z.url({ protocol: /^https?$/ })),
      model,
      /** Sent as a bearer token, so one line (a line break would end the header); never logged, never shown again once saved. */
      apiKey: line(z.string().min(1).max(1000)).optional(),
      temperature: z.number().min(0).max(2).optional(),
      /** Tool-call rounds per turn before the turn ends. */
      maxSteps: z.number().int().min(1).max(100).optional(),
      /** How long the server may take to start answering a request (default 300 s: a model may be loading). */
      requestTimeoutSec: z.number().int().min(1).max(3600).optional(),
      /** How long a streamed answer may pause before the turn fails (default 120 s). */
      idleTimeoutSec: z.number().int().min(1).max(3600).optional(),
      ...agentCommon,
    }),
    z.strictObject({
      adapter: z.literal('acp'),
      /**
       * The agent's program and arguments, run without a shell; it speaks the Agent Client
       * Protocol on stdin/stdout: `claude-agent-acp`, `codex-acp`, `gemini --experimental-acp`, `goose acp`.
       */
      command: commandLine,
      /** The model, for agents that offer a choice of models (their `model` session option). */
      model: model.optional(),
      /** How the agent's requests to use a tool are answered: allowed once, rejected (the default), or asked of a person. */
      permissions: z.enum(['allow', 'reject', 'ask']).optional(),
      /** The session mode for the role's own runs and peers trusted `full`, e.g. `acceptEdits` (the agent's `session/set_mode`). */
      mode: line(z.string().min(1).max(100)).optional(),
      /** codex-acp's sandbox for the role's own runs and peers trusted `full` (its `sandbox_mode`). */
      sandbox: z.enum(['read-only', 'workspace-write', 'danger-full-access']).optional(),
      cwd: absolutePath.optional(),
      env: envValues.optional(),
      modelTimeoutSec,
      ...agentCommon,
    }),
  ]);
}

/** Which agent runs behind a role, and how. Validated on every create and update. */
export const agentSettingsSchema = agentSettings(true);
/** Settings as stored, read back without the character checks (see agentSettings). */
export const storedAgentSettingsSchema = agentSettings(false);
export type AgentSettings = z.infer<typeof agentSettingsSchema>;
export type AdapterName = AgentSettings['adapter'];

/**
 * A stored secret as the app API shows it: that it is set, never its value. Sent back in
 * `roles.update`, it keeps the value stored under that name.
 */
export const storedSecretSchema = z.strictObject({ set: z.literal(true) });
export type StoredSecret = z.infer<typeof storedSecretSchema>;

/** What `roles.update` takes: the same settings, but an `env` value may be `{set: true}`. */
export const agentSettingsUpdateSchema = (() => {
  const [scripted, command, claudeCode, codex, openaiCompatible, acp] = agentSettingsSchema.options;
  const env = z
    .record(envName, z.union([multiLine(z.string().max(32_768)), storedSecretSchema]), { error: envKeyError })
    .optional();
  return z.discriminatedUnion('adapter', [
    scripted,
    command.extend({ env }),
    claudeCode.extend({ env }),
    codex.extend({ env }),
    openaiCompatible,
    acp.extend({ env }),
  ]);
})();
export type AgentSettingsUpdate = z.infer<typeof agentSettingsUpdateSchema>;

/** A role as stored, secrets and all: main's own, never sent through the app API. */
export interface Role {
  id: number;
  name: string;
  description: string;
  agent: AgentSettings;
  createdAt: string;
}

type EnvShownAsSet<T> = T extends unknown
  ? 'env' extends keyof T
    ? Omit<T, 'env'> & { env?: Record<string, StoredSecret> }
    : T
  : never;
type WithoutApiKey<T> = T extends unknown ? ('apiKey' extends keyof T ? Omit<T, 'apiKey'> : T) : never;
/** Agent settings as the app API shows them: `env` names as `{set: true}`, no API key. */
export type AgentSettingsView = WithoutApiKey<EnvShownAsSet<AgentSettings>>;

/** A role as the app API shows it, to owners and members alike: its secrets are write-only. */
export interface RoleView {
  id: number;
  name: string;
  description: string;
  agent: AgentSettingsView;
  /** openai-compatible roles: whether an API key is stored. */
  hasApiKey?: boolean;
  createdAt: string;
  /** Set when this computer cannot start the agents' sandbox: why (its own runs start without one). */
  unsandboxed?: string;
  /** Where the role worked before agents were kept out of the data folder; its files stay there. */
  movedFrom?: string;
}

export type RunState = 'idle' | 'queued' | 'running' | 'stopping';
export type TurnStatus = 'running' | 'done' | 'failed' | 'stopped' | 'interrupted';

export interface TurnSummary {
  id: number;
  status: TurnStatus;
  /** 0 for a normal turn, 1 for the one re-run after the app was cut off mid-turn. */
  attempt: number;
  startedAt: string;
  endedAt: string | null;
  /** Why it ended other than done: who stopped it, the time limit, the error. */
  reason: string | null;
}

export interface RunSummary {
  id: number | null;
  state: RunState;
  /** Inputs waiting for the next turn. */
  pending: number;
  /** The adapter's session reference, kept across turns and stops. */
  session: string | null;
  lastTurn: TurnSummary | null;
  /** While the running turn's agent retries its model: "retrying: the model server does not answer (3rd try)". */
  retrying?: string;
}

export type ContextKind = 'conversation' | 'task' | 'thread';
export interface ContextRef {
  kind: ContextKind;
  id: number;
}

export type AuthorKind = 'person' | 'role' | 'system';
export interface Author {
  kind: AuthorKind;
  id: number | null;
  name: string;
}

export interface Message {
  id: number;
  conversationId: number;
  author: Author;
  body: string;
  /** The turn here (a `TurnSummary.id`) whose agent posted the line; null for any other line. */
  postedByTurnId: number | null;
  createdAt: string;
}

export interface Conversation {
  id: number;
  personId: number;
  roleId: number;
  roleName: string;
  createdAt: string;
  lastMessage: Message | null;
  run: RunSummary;
}

export type TaskStatus = 'open' | 'finished';

export interface Task {
  id: number;
  roleId: number;
  roleName: string;
  parentId: number | null;
  title: string;
  body: string;
  status: TaskStatus;
  createdBy: number | null;
  createdAt: string;
  finishedAt: string | null;
  run: RunSummary;
}

export type TaskLogKind = 'comment' | 'output' | 'report' | 'notice' | 'status';
export interface TaskLogEntry {
  id: number;
  taskId: number;
  kind: TaskLogKind;
  author: Author;
  body: string;
  /** The turn here (a `TurnSummary.id`) whose agent posted the entry; null for any other entry. */
  postedByTurnId: number | null;
  createdAt: string;
}

/** `held`: waiting for a person's approval (either way; DESIGN §11.9). */
export type TextState = 'held' | 'queued' | 'sent' | 'acked' | 'failed' | 'received' | 'handled';

/** One text of an agent conversation, as people see it. */
export interface TextView {
  id: number;
  direction: 'out' | 'in';
  seq: number;
  body: string;
  state: TextState;
  /**
   * Why it failed (outgoing): thread, roles, role, paused, queue, revoke, closed, denied;
   * why a held incoming text was never given to the agent: denied, closed, revoke.
   */
  reason: string | null;
  /**
   * Which side made it fail: `us` (a pause, revoke or delete here) or the peer (its
   * refusal, its revoke); null when it did not fail, or failed before this was kept.
   */
  failedBy: 'us' | 'peer' | null;
  /**
   * Outgoing: the turn here (a `TurnSummary.id`, never a wire id) whose agent sent it;
   * null for a text no turn sent, or one sent before this was kept.
   */
  sentByTurnId: number | null;
  /** Incoming: the turn here (a `TurnSummary.id`) that was given it; null until one is. */
  takenByTurnId: number | null;
  /**
   * Who here denied it, for a text a person denied (`reason` denied). On an agent
   * conversation's texts (`threads.get`); a summary's last text leaves it out.
   */
  deniedBy?: string | null;
  /**
   * Who here let it through, for a text that waited for approval or would have: `always`
   * when that person's always-allow rule did, not a decision on this text. On an agent
   * conversation's texts, like `deniedBy`.
   */
  approvedBy?: { name: string; always: boolean } | null;
  createdAt: string;
}

/**
 * An ask made from a conversation: an outgoing text that a turn here sent in an agent
 * conversation rooted there. Row ids (`threadId` is `ThreadSummary.id`, not the wire ID).
 */
export interface AskRef {
  threadId: number;
  textId: number;
  sentByTurnId: number;
  createdAt: string;
}

/**
 * What the peer's installation said about the turn that took our texts of an agent
 * conversation we started, up to `seq`: working on them, stopped there by a person (or
 * its time limit), failed, or ended without an answer. Only the state crosses the wire.
 */
export interface PeerTurn {
  /** `relayed`: the peer's turn ended while it waits on asks of its own (`waitingOn`); its end or answer comes later. */
  state: 'working' | 'stopped' | 'failed' | 'ended' | 'relayed';
  /** The last of our texts (by seq) that turn took. */
  seq: number;
  /** When we heard it. */
  at: string;
  /** With `relayed`: whom the peer's agent waits on, PEER/ROLE as the peer names them. */
  waitingOn?: string[];
}

/** An agent conversation: one topic between a local role and a peer role. */
export interface ThreadSummary {
  id: number;
  /** The opaque thread ID both installations use on the wire. */
  threadId: string;
  /** The connection's name, always beside the peer's certificate fingerprint: a name is only what the peer said. */
  connection: { id: number; name: string; fingerprint: string };
  localRole: string;
  peerRole: string;
  /**
   * The topic it answers for; `gone` once that conversation or task was deleted, and
   * then `title`, what it was called (kept when it was deleted; null before that, and
   * for roots deleted before titles were kept).
   */
  root: { kind: ContextKind; id: number; gone: boolean; title: string | null };
  startedBy: 'local' | 'peer';
  status: 'open' | 'closed';
  closeReason: string | null;
  run: RunSummary;
  counts: Record<TextState, number>;
  lastText: TextView | null;
  /** In one started here: the peer's word on the turn that took our texts; null until it says any. */
  peerTurn: PeerTurn | null;
  /**
   * Its asks taken back up to `seq` (texts after it continue the agent conversation):
   * `by` a person here, or the peer's name when the peer withdrew; `told` false while
   * the peer has yet to note our withdrawal.
   */
  withdrawn?: { seq: number; by: string; at: string; told: boolean } | null;
  createdAt: string;
}

export type ConnectionStatus = 'active' | 'paused' | 'revoked';

/** Whether an agent's send goes out at once or waits for a person. */
export type OutgoingPolicy = 'send' | 'ask';
/** Whether a peer's text goes to the agent at once or waits for a person. */
export type IncomingPolicy = 'run' | 'ask';
export interface ConnectionPolicy {
  outgoing: OutgoingPolicy;
  incoming: IncomingPolicy;
}

/**
 * How far the owner trusts a peer with the agents that work for it (DESIGN §12.3):
 * `answer` reads only the role's folder and reaches only the model, `work` may write in
 * the role's folder with permission requests going to a person, `full` runs as the
 * role's own settings say.
 */
export const TRUST_LEVELS = ['answer', 'work', 'full'] as const;
export type TrustLevel = (typeof TRUST_LEVELS)[number];
/** The trust a turn runs under: `own` for a run for the installation's own people, else its peer's level. */
export type TurnTrust = 'own' | TrustLevel;

/**
 * What waits for a person (DESIGN §11.9): `outgoing`, an agent's text held before it
 * goes to the peer; `incoming`, a peer's text held before the agent takes it;
 * `permission`, an agent asking to use a tool.
 */
export type ApprovalKind = 'outgoing' | 'incoming' | 'permission';
export type ApprovalState = 'pending' | 'approved' | 'denied' | 'cancelled';

/** "Always allow" (DESIGN §12.10): for this peer role in this root, or for this peer role everywhere. */
export type RememberScope = 'root' | 'peer-role';
export const REMEMBER_SCOPES = ['root', 'peer-role'] as const satisfies readonly RememberScope[];

/** A remembered "always allow", as a connection's settings list it. */
export interface AllowRuleView {
  id: number;
  connectionId: number;
  /** PEER/ROLE. */
  peer: string;
  kind: ApprovalKind;
  /** A tool request's tool; null for texts. */
  tool: string | null;
  /** Where it holds, with its title; null: everywhere. */
  root: { kind: ContextKind; id: number; title: string } | null;
  createdBy: string;
  createdAt: string;
  /** Whether the person asking may remove it. */
  canRemove: boolean;
}

export interface ApprovalView {
  id: number;
  kind: ApprovalKind;
  state: ApprovalState;
  /** Where it waits: the agent conversation of a held text, or the context of the run that asks. */
  context: ContextRef;
  /** The topic it is for (an agent conversation's root; a permission request's own context, or its root). */
  root: ContextRef;
  /** The local role whose agent sent the text, takes it, or asks. */
  role: string;
  /** The agent conversation, for a held text or a request made in one. */
  thread: { id: number; peer: string; localRole: string } | null;
  /** A held text: its seq in its direction and the start of its body. */
  text: { id: number; seq: number; preview: string } | null;
  /** A permission request: the tool as the agent named it, and what it asked. */
  title: string;
  detail: unknown;
  /** Whether the person asking may approve or deny it. */
  canDecide: boolean;
  /** Which "always allow" choices the person may make with an approval (none: the menu is not offered). */
  canRemember?: RememberScope[];
  /** Why it was cancelled. */
  reason: string | null;
  decidedBy: string | null;
  createdAt: string;
  decidedAt: string | null;
}

export interface ConnectionSummary {
  id: number;
  /** The peer's installation name: PEER in PEER/ROLE. */
  name: string;
  fingerprint: string;
  /** Where this installation dials the peer. */
  address: string | null;
  /** Where that address came from: the invitation accepted here, or what the peer announced. */
  addressFrom: 'invitation' | 'peer' | null;
  /** The next dial while offline: how many tries so far, and when (ISO time). */
  redial: { attempt: number; at: string } | null;
  status: ConnectionStatus;
  /** What waits for a person on this connection, each way. */
  policy: ConnectionPolicy;
  /** How far runs working for this peer may reach (DESIGN §12.3). */
  trust: TrustLevel;
  /** Whether runs working for this peer start only inside the agents' sandbox (false: an owner allowed them without). */
  sandboxRequired: boolean;
  online: boolean;
  /** Outgoing texts waiting to be sent or acknowledged, against the limit. */
  queue: { used: number; limit: number };
  /** Local roles this peer may address. */
  exposedRoles: string[];
  /** Roles the peer lets us address. */
  peerRoles: Array<{ name: string; description: string }>;
  lastError: string | null;
  /** Since when the peer has paused the connection (it told us); null or absent: it has not. */
  peerPausedAt?: string | null;
  /** Who paused it here and when (who is null when not known); null while not paused here. */
  pausedBy?: { name: string | null; at: string | null } | null;
  /** Who revoked it (a person here, or the peer by its name) and when; null while not revoked. */
  revokedBy?: { name: string | null; side: 'us' | 'peer'; at: string | null } | null;
  createdAt: string;
  /** The peer's DHT key (hex), when it is reached by the DHT as well. */
  dhtKey: string | null;
  /** How the open link travels: its own TCP connection, holepunched over the DHT, or relayed; null while offline. */
  path: 'direct' | 'holepunched' | 'relayed' | null;
  /** With `relayed`: the blind relay the link goes through (its key, and the address it was added with, if ours). */
  relay: { key: string; address: string | null } | null;
  /** The relays the peer named (their keys): tried, after ours, when holepunching to it fails. */
  peerRelays: string[];
}

/** A blind relay someone here chose (Settings → Relays): dialled through only when holepunching fails. */
export interface RelaySummary {
  id: number;
  /** Its DHT public key, hex. */
  key: string;
  /** The address it was added with, for people to recognise it; null when added by key alone. */
  address: string | null;
  addedAt: string;
  /** Whether it answered just now; null when this installation is off the DHT and could not ask. */
  answers: boolean | null;
}
