// What the Ctrl/Cmd+K switcher lists: things found by name (conversations, tasks,
// peers, roles) from what the stores hold, then what full-text search found, as one
// ordered list of options with a stable key each. Pure, so tables test it.
import type { SearchHit } from '../shared/api-contract';
import type { ConnectionSummary, Conversation, RoleView, Task } from '../shared/domain';

export type SwitcherTarget =
  | { kind: 'conversation'; id: number }
  | { kind: 'task'; id: number }
  | { kind: 'peer'; id: number }
  | { kind: 'role'; id: number }
  /** A peer's role: a conversation with one of ours, its composer started with `ask PEER/ROLE: `. */
  | { kind: 'ask'; address: string }
  | { kind: 'hit'; hit: SearchHit };

export interface SwitcherOption {
  key: string;
  group: SwitcherGroup;
  label: string;
  /** A second line: what it is, or the text around a match. */
  detail: string;
  /** Ranges of `detail` that matched (full-text hits only). */
  highlights?: Array<[number, number]>;
  target: SwitcherTarget;
}

export type SwitcherGroup = 'Conversations' | 'Tasks' | 'Peers' | 'Peers’ roles' | 'Roles' | 'In messages and texts';

/** How well `name` answers `query` (lower is better), or null when it does not. */
export function nameScore(query: string, name: string): number | null {
  const q = query.trim().toLocaleLowerCase();
  if (!q) return 3;
  const n = name.toLocaleLowerCase();
  if (n === q) return 0;
  if (n.startsWith(q)) return 1;
  if (n.split(/[\s/_-]+/).some((word) => word.startsWith(q))) return 2;
  if (n.includes(q)) return 3;
  return null;
}

/** At most this many options per group found by name. */
export const PER_GROUP = 5;

function byName<T>(query: string, items: T[], name: (item: T) => string): T[] {
  const scored: Array<{ item: T; score: number }> = [];
  for (const item of items) {
    const score = nameScore(query, name(item));
    if (score !== null) scored.push({ item, score });
  }
  // A stable sort: equal scores keep the stores' order (most recent first).
  return scored
    .sort((a, b) => a.score - b.score)
    .slice(0, PER_GROUP)
    .map((s) => s.item);
}

export interface SwitcherSources {
  conversations: Conversation[];
  tasks: Task[];
  connections: ConnectionSummary[];
  roles: RoleView[];
  hits: SearchHit[];
}

const hitKind: Record<SearchHit['kind'], string> = {
  conversation: 'Conversation',
  task: 'Task',
  thread: 'Agent conversation',
};

export function switcherOptions(query: string, sources: SwitcherSources): SwitcherOption[] {
  const options: SwitcherOption[] = [];
  const trimmed = query.trim();
  for (const c of byName(trimmed, sources.conversations, (c) => c.roleName))
    options.push({
      key: `conversation-${c.id}`,
      group: 'Conversations',
      label: c.roleName,
      detail: 'Your conversation',
      target: { kind: 'conversation', id: c.id },
    });
  for (const t of byName(trimmed, sources.tasks, (t) => t.title))
    options.push({
      key: `task-${t.id}`,
      group: 'Tasks',
      label: t.title,
      detail: `Task for ${t.roleName}${t.status === 'finished' ? ' · finished' : ''}`,
      target: { kind: 'task', id: t.id },
    });
  // Without a query the list offers where one was lately: conversations and tasks.
  if (trimmed) {
    for (const c of byName(trimmed, sources.connections, (c) => c.name))
      options.push({
        key: `peer-${c.id}`,
        group: 'Peers',
        label: c.name,
        detail: `Connection · ${c.status === 'active' ? (c.online ? 'online' : 'offline') : c.status}`,
        target: { kind: 'peer', id: c.id },
      });
    // A peer's role, found by its role name or by PEER/ROLE, on a connection it can be asked on.
    const peerRoles = sources.connections
      .filter((c) => c.status === 'active')
      .flatMap((c) => c.peerRoles.map((role) => ({ address: `${c.name}/${role.name}`, role, connection: c })));
    for (const p of byName(trimmed, peerRoles, (p) =>
      nameScore(trimmed, p.role.name) !== null ? p.role.name : p.address,
    ))
      options.push({
        key: `ask-${p.address}`,
        group: 'Peers’ roles',
        label: `Ask ${p.address}…`,
        detail: `${p.role.description ? `${p.role.description} · ` : ''}${p.connection.online ? 'online' : 'offline: it waits until the peer is back'}`,
        target: { kind: 'ask', address: p.address },
      });
    for (const r of byName(trimmed, sources.roles, (r) => r.name))
      options.push({
        key: `role-${r.id}`,
        group: 'Roles',
        label: r.name,
        detail: r.description ? `Role · ${r.description}` : 'Role · talk with it',
        target: { kind: 'role', id: r.id },
      });
  }
  // A conversation or task already found by name is not offered twice: it opens the same place.
  const listed = new Set(options.map((o) => o.key));
  for (const hit of sources.hits) {
    if (hit.kind !== 'thread' && listed.has(`${hit.kind}-${hit.id}`)) continue;
    options.push({
      key: `hit-${hit.kind}-${hit.id}`,
      group: 'In messages and texts',
      label: `${hitKind[hit.kind]} · ${hit.title}`,
      detail: hit.snippet,
      highlights: hit.highlights,
      target: { kind: 'hit', hit },
    });
  }
  return options;
}

/** The next active option for an arrow key, wrapping around. */
export function moveActive(current: number, count: number, key: 'ArrowDown' | 'ArrowUp' | 'Home' | 'End'): number {
  if (count === 0) return -1;
  switch (key) {
    case 'ArrowDown':
      return current < 0 ? 0 : (current + 1) % count;
    case 'ArrowUp':
      return current < 0 ? count - 1 : (current - 1 + count) % count;
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
  }
}

/** `text` cut into plain and highlighted pieces. */
export function highlightPieces(
  text: string,
  highlights: Array<[number, number]> = [],
): Array<{ text: string; mark: boolean }> {
  const pieces: Array<{ text: string; mark: boolean }> = [];
  let at = 0;
  for (const [start, end] of [...highlights].sort((a, b) => a[0] - b[0])) {
    if (start < at || end > text.length || end <= start) continue;
    if (start > at) pieces.push({ text: text.slice(at, start), mark: false });
    pieces.push({ text: text.slice(start, end), mark: true });
    at = end;
  }
  if (at < text.length) pieces.push({ text: text.slice(at), mark: false });
  return pieces;
}
