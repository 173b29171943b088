// The switcher's choices by table: how names match, what each source lists, how the
// arrow keys move, how a snippet is cut for highlighting.
import { describe, expect, it } from 'vitest';
import type { SearchHit } from '../shared/api-contract';
import type { ConnectionSummary, Conversation, RoleView, RunSummary, Task } from '../shared/domain';
import { highlightPieces, moveActive, nameScore, PER_GROUP, switcherOptions } from './switcher-items';

const idle: RunSummary = { id: null, state: 'idle', pending: 0, session: null, lastTurn: null };
const conversation = (id: number, roleName: string) =>
  ({ id, roleName, personId: 1, roleId: id, createdAt: '', lastMessage: null, run: idle }) as Conversation;
const task = (id: number, title: string) => ({ id, title, roleName: 'writer', status: 'open' }) as Task;
const peer = (id: number, name: string, peerRoles: Array<{ name: string; description: string }> = []) =>
  ({ id, name, status: 'active', online: true, peerRoles }) as ConnectionSummary;
const role = (id: number, name: string, description = '') => ({ id, name, description }) as RoleView;

describe('nameScore', () => {
  it.each([
    ['writer', 'writer', 0],
    ['WRI', 'writer', 1],
    ['rev', 'quarterly review', 2],
    ['search', 'bob/research-lead', 3],
    ['bob', 'bob/research-lead', 1],
    ['lead', 'bob/research-lead', 2],
    ['iter', 'writer', 3],
    ['xyz', 'writer', null],
    ['', 'anything', 3],
  ])('%j in %j → %j', (query, name, score) => {
    expect(nameScore(query, name)).toBe(score);
  });
});

describe('switcherOptions', () => {
  const sources = {
    conversations: [conversation(1, 'assistant'), conversation(2, 'writer')],
    tasks: [task(7, 'Write the launch post'), task(8, 'Review the budget')],
    connections: [peer(3, 'bob', [{ name: 'wrangler', description: 'Herds data' }]), peer(4, 'wren')],
    roles: [role(5, 'writer', 'Drafts text'), role(6, 'assistant')],
    hits: [] as SearchHit[],
  };

  it('finds by name in every source, best match first', () => {
    expect(switcherOptions('wr', sources).map((o) => `${o.group}: ${o.label}`)).toEqual([
      'Conversations: writer',
      'Tasks: Write the launch post',
      'Peers: wren',
      'Peers’ roles: Ask bob/wrangler…',
      'Roles: writer',
    ]);
  });

  it('offers a peer’s role by its name or by PEER/ROLE, to ask it from a conversation', () => {
    const [byRole] = switcherOptions('wrangler', sources).filter((o) => o.group === 'Peers’ roles');
    expect(byRole).toMatchObject({
      label: 'Ask bob/wrangler…',
      detail: 'Herds data · online',
      target: { kind: 'ask', address: 'bob/wrangler' },
    });
    expect(switcherOptions('bob/wr', sources).some((o) => o.key === 'ask-bob/wrangler')).toBe(true);
    // Not on a paused connection: nothing can be asked there.
    const paused = { ...sources, connections: [{ ...sources.connections[0]!, status: 'paused' as const }] };
    expect(switcherOptions('wrangler', paused).some((o) => o.group === 'Peers’ roles')).toBe(false);
  });

  it('offers conversations and tasks, not peers and roles, before anything is typed', () => {
    expect(switcherOptions('  ', sources).map((o) => o.key)).toEqual([
      'conversation-1',
      'conversation-2',
      'task-7',
      'task-8',
    ]);
  });

  it('adds full-text hits after the names, with what matched', () => {
    const hit: SearchHit = {
      kind: 'thread',
      id: 9,
      title: 'bob/researcher',
      snippet: 'the budget rose',
      highlights: [[4, 10]],
      at: '',
    };
    const options = switcherOptions('budget', { ...sources, hits: [hit] });
    expect(options.map((o) => o.key)).toEqual(['task-8', 'hit-thread-9']);
    expect(options[1]).toMatchObject({
      label: 'Agent conversation · bob/researcher',
      detail: 'the budget rose',
      highlights: [[4, 10]],
      target: { kind: 'hit', hit },
    });
  });

  it('offers a conversation or task found by name once, not again among the hits', () => {
    const hit = (kind: SearchHit['kind'], id: number, title: string): SearchHit => ({
      kind,
      id,
      title,
      snippet: `the ${title}`,
      highlights: [],
      at: '',
    });
    const hits = [hit('task', 7, 'Write the launch post'), hit('conversation', 2, 'writer'), hit('task', 8, 'budget')];
    expect(switcherOptions('launch', { ...sources, hits }).map((o) => o.key)).toEqual([
      'task-7',
      'hit-conversation-2',
      'hit-task-8',
    ]);
  });

  it(`keeps to ${PER_GROUP} per group`, () => {
    const many = Array.from({ length: 12 }, (_, i) => task(i + 1, `task ${i + 1}`));
    expect(switcherOptions('task', { ...sources, tasks: many })).toHaveLength(PER_GROUP);
  });
});

describe('moveActive', () => {
  it.each([
    [-1, 3, 'ArrowDown', 0],
    [0, 3, 'ArrowDown', 1],
    [2, 3, 'ArrowDown', 0],
    [-1, 3, 'ArrowUp', 2],
    [0, 3, 'ArrowUp', 2],
    [1, 3, 'Home', 0],
    [1, 3, 'End', 2],
    [0, 0, 'ArrowDown', -1],
  ] as const)('from %j of %j, %s → %j', (current, count, key, next) => {
    expect(moveActive(current, count, key)).toBe(next);
  });
});

describe('highlightPieces', () => {
  it.each([
    [
      'the budget rose',
      [[4, 10]],
      [
        ['the ', false],
        ['budget', true],
        [' rose', false],
      ],
    ],
    ['abc', [], [['abc', false]]],
    ['abc', [[0, 3]], [['abc', true]]],
    // Overlapping or out-of-range ranges are skipped rather than garbling the text.
    [
      'abcdef',
      [
        [0, 2],
        [1, 3],
        [4, 99],
      ],
      [
        ['ab', true],
        ['cdef', false],
      ],
    ],
  ] as const)('%j', (text, highlights, pieces) => {
    expect(highlightPieces(text, highlights as unknown as Array<[number, number]>)).toEqual(
      pieces.map(([t, mark]) => ({ text: t, mark })),
    );
  });
});
