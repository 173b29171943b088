// The access rules as tables (DESIGN §7, §11.2, §11.3): for every object, who reads it,
// who may do what to it, who hears of its changes, what `parley history` lists from where.
import { describe, expect, it } from 'vitest';
import type { PersonKind } from '../../shared/domain';
import {
  actions,
  approvalDeciders,
  audienceOf,
  covers,
  decide,
  decideThreadList,
  eventAudience,
  historyIncludes,
  inAudience,
  taskTreeBlockers,
  type ActionOn,
  type ApprovalFacts,
  type Audience,
  type Decision,
  type Target,
  type ThreadFacts,
  type ThreadList,
  type Viewer,
} from './rules';

const owner: Viewer = { id: 1, kind: 'owner' };
/** The member whose conversation and task these are. */
const mia: Viewer = { id: 2, kind: 'member' };
/** Another member. */
const max: Viewer = { id: 3, kind: 'member' };
const viewers = { owner, mia, max };
type Who = keyof typeof viewers;
const kindOf = (id: number): PersonKind | undefined => Object.values(viewers).find((v) => v.id === id)?.kind;

type Outcome = 'allowed' | 'not_found' | 'forbidden';
const outcome = (d: Decision): Outcome => (d.allowed ? 'allowed' : d.code);
const all = (o: Outcome): Record<Who, Outcome> => ({ owner: o, mia: o, max: o });
const miaOnly: Record<Who, Outcome> = { owner: 'not_found', mia: 'allowed', max: 'not_found' };
const ownersOnly: Record<Who, Outcome> = { owner: 'allowed', mia: 'not_found', max: 'not_found' };
const creatorOrOwner: Record<Who, Outcome> = { owner: 'allowed', mia: 'allowed', max: 'forbidden' };
const ownersAct: Record<Who, Outcome> = { owner: 'allowed', mia: 'forbidden', max: 'forbidden' };

const thread = (patch: Partial<ThreadFacts>): ThreadFacts => ({
  id: 20,
  root_kind: 'conversation',
  root_id: 5,
  root_gone: 0,
  started_by: 'local',
  ...patch,
});
const peerStarted = thread({ id: 22, root_kind: 'thread', root_id: 22, started_by: 'peer' });

const targets = {
  'Mia’s conversation': { kind: 'conversation', conversation: { person_id: mia.id } },
  'Mia’s task': { kind: 'task', task: { id: 10, created_by: mia.id } },
  'a task whose creator was removed': { kind: 'task', task: { id: 11, created_by: null } },
  'an agent conversation rooted in Mia’s conversation': {
    kind: 'thread',
    thread: thread({}),
    root: { kind: 'conversation', conversation: { person_id: mia.id } },
  },
  'an agent conversation rooted in a task': {
    kind: 'thread',
    thread: thread({ root_kind: 'task', root_id: 10 }),
    root: { kind: 'task', task: { id: 10, created_by: mia.id } },
  },
  'an agent conversation the peer started': {
    kind: 'thread',
    thread: peerStarted,
    root: { kind: 'thread', thread: peerStarted },
  },
  'an agent conversation rooted in one the peer started (a relay)': {
    kind: 'thread',
    thread: thread({ id: 23, root_kind: 'thread', root_id: 22 }),
    root: { kind: 'thread', thread: peerStarted },
  },
  'an agent conversation whose root was deleted': {
    kind: 'thread',
    thread: thread({ root_gone: 1 }),
    root: { kind: 'conversation', conversation: undefined },
  },
  'an agent conversation whose conversation is missing, not yet marked gone': {
    kind: 'thread',
    thread: thread({}),
    root: { kind: 'conversation', conversation: undefined },
  },
  'an agent conversation rooted in a task that is missing': {
    kind: 'thread',
    thread: thread({ root_kind: 'task', root_id: 10 }),
    root: { kind: 'task', task: undefined },
  },
  'an agent conversation rooted in one we started (never made by design)': {
    kind: 'thread',
    thread: thread({ id: 24, root_kind: 'thread', root_id: 20 }),
    root: { kind: 'thread', thread: thread({}) },
  },
  'an agent conversation we started that claims to be its own root': {
    kind: 'thread',
    thread: thread({ id: 25, root_kind: 'thread', root_id: 25 }),
    root: { kind: 'thread', thread: thread({ id: 25, root_kind: 'thread', root_id: 25 }) },
  },
  'the installation: people, roles, connections, invitations': { kind: 'installation' },
} satisfies Record<string, Target>;
type TargetName = keyof typeof targets;

/** [object, action, outcome per viewer]: every action on every object. */
const table: Array<[TargetName, string, Record<Who, Outcome>]> = [
  ['Mia’s conversation', 'read', miaOnly],
  ['Mia’s conversation', 'send', miaOnly],
  ['Mia’s conversation', 'stop', miaOnly],
  ['Mia’s conversation', 'delete', miaOnly],

  ['Mia’s task', 'read', all('allowed')],
  ['Mia’s task', 'comment', all('allowed')],
  ['Mia’s task', 'subtask', all('allowed')],
  ['Mia’s task', 'stop', all('allowed')],
  ['Mia’s task', 'finish', creatorOrOwner],
  ['Mia’s task', 'delete', creatorOrOwner],
  ['a task whose creator was removed', 'finish', ownersAct],
  ['a task whose creator was removed', 'delete', ownersAct],

  ['an agent conversation rooted in Mia’s conversation', 'read', miaOnly],
  ['an agent conversation rooted in Mia’s conversation', 'stop', miaOnly],
  ['an agent conversation rooted in Mia’s conversation', 'withdraw', miaOnly],
  ['an agent conversation rooted in a task', 'read', all('allowed')],
  ['an agent conversation rooted in a task', 'stop', all('allowed')],
  ['an agent conversation rooted in a task', 'withdraw', all('allowed')],
  ['an agent conversation the peer started', 'read', all('allowed')],
  ['an agent conversation the peer started', 'stop', all('allowed')],
  ['an agent conversation the peer started', 'withdraw', all('allowed')],
  ['an agent conversation rooted in one the peer started (a relay)', 'read', all('allowed')],
  ['an agent conversation rooted in one the peer started (a relay)', 'stop', all('allowed')],
  ['an agent conversation rooted in one the peer started (a relay)', 'withdraw', all('allowed')],
  ['an agent conversation whose root was deleted', 'read', ownersOnly],
  ['an agent conversation whose root was deleted', 'stop', ownersOnly],
  ['an agent conversation whose root was deleted', 'withdraw', ownersOnly],
  ['an agent conversation whose conversation is missing, not yet marked gone', 'read', ownersOnly],
  ['an agent conversation rooted in a task that is missing', 'read', ownersOnly],
  ['an agent conversation rooted in one we started (never made by design)', 'read', ownersOnly],
  ['an agent conversation we started that claims to be its own root', 'read', ownersOnly],

  ['the installation: people, roles, connections, invitations', 'read', all('allowed')],
  ['the installation: people, roles, connections, invitations', 'manage', ownersAct],
];

describe('who may read and act (DESIGN §7)', () => {
  it('has a row for every action on each kind of object §7 names', () => {
    const complete: TargetName[] = [
      'Mia’s conversation',
      'Mia’s task',
      'an agent conversation rooted in Mia’s conversation',
      'an agent conversation rooted in a task',
      'an agent conversation the peer started',
      'an agent conversation rooted in one the peer started (a relay)',
      'an agent conversation whose root was deleted',
      'the installation: people, roles, connections, invitations',
    ];
    for (const name of complete) {
      const covered = table.filter(([n]) => n === name).map(([, action]) => action);
      expect(covered.sort(), name).toEqual([...actions[targets[name].kind]].sort());
    }
  });

  for (const [name, action, expected] of table) {
    it(`${action} ${name}: ${JSON.stringify(expected)}`, () => {
      const target = targets[name];
      for (const [who, viewer] of Object.entries(viewers) as [Who, Viewer][]) {
        const decision = decide(viewer, target, action as ActionOn<typeof target.kind>);
        expect(outcome(decision), who).toBe(expected[who]);
      }
    });
  }

  it('tells why acting is refused: whose it is to do', () => {
    expect(decide(max, targets['Mia’s task'], 'delete')).toEqual({
      allowed: false,
      code: 'forbidden',
      needs: "the task's creator or an owner",
    });
    expect(decide(mia, targets['the installation: people, roles, connections, invitations'], 'manage')).toEqual({
      allowed: false,
      code: 'forbidden',
      needs: 'an owner',
    });
  });

  it('refuses to answer for an action the object does not have', () => {
    expect(() => decide(owner, targets['Mia’s conversation'], 'comment' as never)).toThrow(/no action "comment"/);
  });
});

describe('who hears of a change', () => {
  it('is who may read the object, for every object', () => {
    const hears: Record<TargetName, Audience> = {
      'Mia’s conversation': { personId: mia.id },
      'Mia’s task': 'everyone',
      'a task whose creator was removed': 'everyone',
      'an agent conversation rooted in Mia’s conversation': { personId: mia.id },
      'an agent conversation rooted in a task': 'everyone',
      'an agent conversation the peer started': 'everyone',
      'an agent conversation rooted in one the peer started (a relay)': 'everyone',
      'an agent conversation whose root was deleted': 'owners',
      'an agent conversation whose conversation is missing, not yet marked gone': 'owners',
      'an agent conversation rooted in a task that is missing': 'owners',
      'an agent conversation rooted in one we started (never made by design)': 'owners',
      'an agent conversation we started that claims to be its own root': 'owners',
      'the installation: people, roles, connections, invitations': 'everyone',
    };
    for (const [name, target] of Object.entries(targets) as [TargetName, Target][]) {
      expect(audienceOf(target), name).toEqual(hears[name]);
      for (const viewer of Object.values(viewers))
        expect(inAudience(viewer, audienceOf(target)), name).toBe(decide(viewer, target, 'read').allowed);
    }
  });
});

describe('who decides what waits for a person (DESIGN §11.9)', () => {
  type Place = Extract<Target, { kind: 'approval' }>['place'];
  const places: Record<string, Place> = {
    'Mia’s conversation': targets['Mia’s conversation'],
    'a task': targets['Mia’s task'],
    'an agent conversation rooted in Mia’s conversation': targets['an agent conversation rooted in Mia’s conversation'],
    'an agent conversation rooted in a task': targets['an agent conversation rooted in a task'],
    'an agent conversation the peer started': targets['an agent conversation the peer started'],
    'a relay for one the peer started': targets['an agent conversation rooted in one the peer started (a relay)'],
    'an agent conversation whose root was deleted': targets['an agent conversation whose root was deleted'],
    'a place that is gone': undefined,
  };
  const readAndDecide = (read: Record<Who, Outcome>, decideIt: Record<Who, Outcome>) => ({ read, decide: decideIt });
  /** [what waits, where, who reads it, who decides it]. */
  const rows: Array<[ApprovalFacts['kind'], string, { read: Record<Who, Outcome>; decide: Record<Who, Outcome> }]> = [
    ['outgoing', 'an agent conversation rooted in Mia’s conversation', readAndDecide(miaOnly, miaOnly)],
    ['outgoing', 'an agent conversation rooted in a task', readAndDecide(all('allowed'), all('allowed'))],
    ['outgoing', 'an agent conversation the peer started', readAndDecide(all('allowed'), ownersAct)],
    ['outgoing', 'a relay for one the peer started', readAndDecide(all('allowed'), ownersAct)],
    ['outgoing', 'an agent conversation whose root was deleted', readAndDecide(ownersOnly, ownersOnly)],
    ['incoming', 'an agent conversation rooted in Mia’s conversation', readAndDecide(miaOnly, miaOnly)],
    ['incoming', 'an agent conversation rooted in a task', readAndDecide(all('allowed'), all('allowed'))],
    ['incoming', 'an agent conversation the peer started', readAndDecide(all('allowed'), all('allowed'))],
    ['incoming', 'a relay for one the peer started', readAndDecide(all('allowed'), all('allowed'))],
    ['incoming', 'an agent conversation whose root was deleted', readAndDecide(ownersOnly, ownersOnly)],
    ['permission', 'Mia’s conversation', readAndDecide(miaOnly, miaOnly)],
    ['permission', 'a task', readAndDecide(all('allowed'), all('allowed'))],
    ['permission', 'an agent conversation rooted in Mia’s conversation', readAndDecide(miaOnly, miaOnly)],
    ['permission', 'an agent conversation rooted in a task', readAndDecide(all('allowed'), all('allowed'))],
    ['permission', 'an agent conversation the peer started', readAndDecide(all('allowed'), ownersAct)],
    ['permission', 'a relay for one the peer started', readAndDecide(all('allowed'), ownersAct)],
    ['permission', 'an agent conversation whose root was deleted', readAndDecide(ownersOnly, ownersOnly)],
    ['permission', 'a place that is gone', readAndDecide(ownersOnly, ownersOnly)],
  ];
  for (const [kind, where, expected] of rows) {
    it(`${kind} in ${where}: read ${JSON.stringify(expected.read)}, decide ${JSON.stringify(expected.decide)}`, () => {
      const target: Target = { kind: 'approval', approval: { kind }, place: places[where] };
      for (const [who, viewer] of Object.entries(viewers) as [Who, Viewer][]) {
        expect(outcome(decide(viewer, target, 'read')), `${who} reads`).toBe(expected.read[who]);
        expect(outcome(decide(viewer, target, 'decide')), `${who} decides`).toBe(expected.decide[who]);
      }
      // Who hears of it is who reads it; those who decide are among them.
      for (const viewer of Object.values(viewers))
        expect(inAudience(viewer, audienceOf(target))).toBe(decide(viewer, target, 'read').allowed);
      expect(covers(audienceOf(target), approvalDeciders(target), kindOf)).toBe(true);
    });
  }
  it('tells a member who may decide what a role sends to a peer that asked', () => {
    const target: Target = {
      kind: 'approval',
      approval: { kind: 'outgoing' },
      place: places['an agent conversation the peer started'],
    };
    expect(decide(mia, target, 'decide')).toEqual({ allowed: false, code: 'forbidden', needs: 'an owner' });
  });
});

describe('a peer’s pause or revoke', () => {
  it('is news for exactly those who may act on connections: the owners', () => {
    const installation: Target = { kind: 'installation' };
    for (const [who, viewer] of Object.entries(viewers))
      expect(inAudience(viewer, eventAudience.connectionNotice()), who).toBe(
        decide(viewer, installation, 'manage').allowed,
      );
    expect(inAudience(mia, eventAudience.connectionNotice())).toBe(false);
  });
});

describe('lists of agent conversations', () => {
  const lists: Array<[string, ThreadList, Record<Who, Outcome>]> = [
    ['under Mia’s conversation', { kind: 'root', root: targets['Mia’s conversation'] }, miaOnly],
    ['under a task', { kind: 'root', root: targets['Mia’s task'] }, all('allowed')],
    [
      'under one the peer started',
      { kind: 'root', root: targets['an agent conversation the peer started'] },
      all('allowed'),
    ],
    ['under a root that does not exist', { kind: 'root', root: undefined }, all('not_found')],
    ['the ones peers started', { kind: 'peerStarted' }, all('allowed')],
    ['the ones whose root is gone', { kind: 'orphaned' }, ownersAct],
  ];
  for (const [name, list, expected] of lists) {
    it(`${name}: ${JSON.stringify(expected)}`, () => {
      for (const [who, viewer] of Object.entries(viewers) as [Who, Viewer][])
        expect(outcome(decideThreadList(viewer, list)), who).toBe(expected[who]);
    });
  }
});

describe('deleting a task with its subtasks', () => {
  const tree = [
    { id: 10, created_by: mia.id },
    { id: 11, created_by: max.id },
    { id: 12, created_by: mia.id },
    { id: 13, created_by: null },
  ];
  it('needs the right to delete each one: the owner may; a member is stopped by every task not theirs', () => {
    expect(taskTreeBlockers(owner, tree)).toEqual([]);
    expect(taskTreeBlockers(mia, tree).map((t) => t.id)).toEqual([11, 13]);
    expect(taskTreeBlockers(max, tree).map((t) => t.id)).toEqual([10, 12, 13]);
    expect(taskTreeBlockers(mia, [tree[0]!, tree[2]!])).toEqual([]);
  });
});

describe('what `parley history` lists (DESIGN §11.3)', () => {
  const audiences: Record<string, Audience> = {
    'Mia’s conversation': { personId: mia.id },
    'Max’s conversation': { personId: max.id },
    'the owner’s conversation': { personId: owner.id },
    'a task, or one the peer started': 'everyone',
    'one whose root is gone': 'owners',
  };
  /** [the run's root, the agent conversations it lists]. */
  const rows: Array<[string, string[]]> = [
    ['Mia’s conversation', ['Mia’s conversation', 'a task, or one the peer started']],
    ['Max’s conversation', ['Max’s conversation', 'a task, or one the peer started']],
    [
      'the owner’s conversation',
      ['the owner’s conversation', 'a task, or one the peer started', 'one whose root is gone'],
    ],
    ['a task, or one the peer started', ['a task, or one the peer started']],
    ['one whose root is gone', ['a task, or one the peer started', 'one whose root is gone']],
  ];
  for (const [root, lists] of rows) {
    it(`from a run answering for ${root}: ${lists.join('; ')}`, () => {
      const caller = { kind: 'run' as const, rootAudience: audiences[root]! };
      const listed = Object.keys(audiences).filter((name) => historyIncludes(caller, audiences[name]!, kindOf));
      expect(listed).toEqual(lists);
    });
  }
  it('with a role token: everything', () => {
    for (const audience of Object.values(audiences))
      expect(historyIncludes({ kind: 'role' }, audience, kindOf)).toBe(true);
  });
  it('covers only what holds whoever joins later', () => {
    expect(covers('owners', 'everyone', kindOf)).toBe(false);
    expect(covers({ personId: mia.id }, 'everyone', kindOf)).toBe(false);
    expect(covers('owners', { personId: max.id }, kindOf)).toBe(false);
    expect(covers('owners', { personId: owner.id }, kindOf)).toBe(true);
    expect(covers('everyone', 'owners', kindOf)).toBe(true);
  });
});
