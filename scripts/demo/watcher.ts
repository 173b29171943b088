// The demo's live transcript of one installation: what its owner would see change.
import type { AppEvent } from '../../shared/api-contract';
import type { Conversation, Person } from '../../shared/domain';
import type { ApiClient } from '../../test-support/api-client';
import { line, quote, short, stateOf, who } from './transcript';

interface SeenThread {
  label: string;
  texts: Map<number, string>;
  turns: Map<number, { index: number; status: string }>;
  outputs: Set<number>;
  status: string;
}

/**
 * Prints what changes in one installation, as its owner sees it through the app API:
 * messages in conversations, agent conversations opening and closing, their texts and
 * the texts' states, their agents' turns and outputs, connections.
 */
export class Watcher {
  private readonly threads = new Map<number, SeenThread>();
  private readonly wireIds = new Map<number, string>();
  private readonly conversations = new Map<number, { label: string; messages: Set<number>; deleted: boolean }>();
  private readonly connections = new Map<number, string>();
  private readonly waiting = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  private off: (() => void) | null = null;

  constructor(
    private readonly name: string,
    private readonly client: ApiClient,
    private readonly owner: Person,
  ) {}

  start(): void {
    this.off = this.client.onEvent((event: AppEvent) => {
      if (event.type === 'changed') this.schedule(event.kind, event.id);
    });
  }

  stop(): void {
    this.off?.();
  }

  /** Refreshes everything known, after whatever is queued. */
  async settle(): Promise<void> {
    for (const id of this.threads.keys()) this.schedule('thread', id);
    for (const id of this.conversations.keys()) this.schedule('conversation', id);
    this.schedule('connection', 0);
    await this.queue;
  }

  private schedule(kind: string, id: number): void {
    if (kind !== 'thread' && kind !== 'conversation' && kind !== 'connection') return;
    const key = kind === 'connection' ? kind : `${kind}:${id}`;
    if (this.waiting.has(key)) return;
    this.waiting.add(key);
    this.queue = this.queue.then(async () => {
      this.waiting.delete(key);
      try {
        if (kind === 'thread') await this.refreshThread(id);
        else if (kind === 'conversation') await this.refreshConversation(id);
        else await this.refreshConnections();
      } catch (error) {
        if ((error as { code?: string }).code !== 'not_found' && !String(error).includes('socket closed'))
          this.print('watch', `could not read ${kind} ${id}: ${(error as Error).message}`);
      }
    });
  }

  private print(where: string, what: string): void {
    line(`${who(this.name)}    ${where} | ${what}`);
  }

  threadLabel(threadRowId: number): string {
    const wire = this.wireIds.get(threadRowId);
    return wire ? `thread ${short(wire)}` : `thread #${threadRowId}`;
  }

  private async refreshThread(id: number): Promise<void> {
    const detail = await this.client.call('threads.get', { id });
    const t = detail.thread;
    this.wireIds.set(t.id, t.threadId);
    let seen = this.threads.get(id);
    if (!seen) {
      seen = {
        label: `thread ${short(t.threadId)} ${t.localRole} <-> ${t.connection.name}/${t.peerRole}`,
        texts: new Map(),
        turns: new Map(),
        outputs: new Set(),
        status: 'open',
      };
      this.threads.set(id, seen);
      const root =
        t.startedBy === 'peer'
          ? `started by ${t.connection.name} (its own root)`
          : `started here, root: ${t.root.kind === 'thread' ? this.threadLabel(t.root.id) : `${t.root.kind} #${t.root.id}`}`;
      this.print(seen.label, `opened: ${root}`);
    }
    const label = seen.label;
    for (const text of detail.texts) {
      const state = stateOf(text);
      const before = seen.texts.get(text.id);
      if (before === undefined) this.print(label, `${text.direction} #${text.seq} ${quote(text.body)} [${state}]`);
      else if (before !== state) this.print(label, `${text.direction} #${text.seq} now ${state}`);
      seen.texts.set(text.id, state);
    }
    // Each turn, then what it printed as its final output (one line per output line).
    const outputs = new Map(detail.runLog.map((entry) => [entry.turnId, entry.output]));
    const printOutput = (turnId: number) => {
      const output = outputs.get(turnId);
      if (output === undefined || seen.outputs.has(turnId)) return;
      seen.outputs.add(turnId);
      for (const text of output.split('\n')) this.print(label, `${t.localRole}'s output: ${text}`);
    };
    for (const turn of [...detail.turns].sort((a, b) => a.id - b.id)) {
      const status = turn.reason && turn.status !== 'done' ? `${turn.status} (${turn.reason})` : turn.status;
      const before = seen.turns.get(turn.id);
      const index = before?.index ?? seen.turns.size + 1;
      if (before?.status !== status) this.print(label, `${t.localRole}'s turn ${index} ${status}`);
      seen.turns.set(turn.id, { index, status });
      printOutput(turn.id);
    }
    for (const turnId of outputs.keys()) printOutput(turnId);
    const status =
      t.status === 'closed'
        ? `closed (${t.closeReason ?? 'no reason'})${t.root.gone ? ', its root is gone' : ''}`
        : 'open';
    if (status !== seen.status) this.print(label, status);
    seen.status = status;
  }

  private async refreshConversation(id: number): Promise<void> {
    const known = this.conversations.get(id);
    if (known?.deleted) return;
    let detail;
    try {
      detail = await this.client.call('conversations.get', { id });
    } catch (error) {
      if (known && (error as { code?: string }).code === 'not_found') {
        known.deleted = true;
        this.print(known.label, 'deleted');
        return;
      }
      throw error;
    }
    const conversation: Conversation = detail.conversation;
    let seen = known;
    if (!seen) {
      seen = {
        label: `conversation #${id} ${this.owner.name} <-> ${conversation.roleName}`,
        messages: new Set(),
        deleted: false,
      };
      this.conversations.set(id, seen);
      this.print(seen.label, 'opened');
    }
    for (const message of detail.messages) {
      if (seen.messages.has(message.id)) continue;
      seen.messages.add(message.id);
      const author = message.author.kind === 'person' ? `${message.author.name} (person)` : message.author.name;
      this.print(seen.label, `${author}: ${quote(message.body)}`);
    }
  }

  private async refreshConnections(): Promise<void> {
    for (const c of await this.client.call('connections.list', {})) {
      const state = `${c.status}, ${c.online ? `online (${c.path ?? 'no path'})` : 'offline'}; ${this.name} may address [${c.peerRoles.map((r) => r.name).join(', ')}], exposes [${c.exposedRoles.join(', ')}]`;
      if (this.connections.get(c.id) !== state) this.print(`connection ${c.name}`, state);
      this.connections.set(c.id, state);
    }
  }
}
