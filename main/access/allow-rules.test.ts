// "Always allow" as tables: which ask a remembered rule lets through, which rule a choice
// makes, and who may remember, see and remove one.
import { describe, expect, it } from 'vitest';
import {
  allowingRule,
  decideRemember,
  decideRemoveRule,
  mayReadRule,
  ruleFor,
  threadAsk,
  type AllowRuleFacts,
  type AskFacts,
} from './allow-rules';
import type { Audience, Decision, Viewer } from './rules';

const owner: Viewer = { id: 1, kind: 'owner' };
const mia: Viewer = { id: 2, kind: 'member' };
const max: Viewer = { id: 3, kind: 'member' };

const rule = (patch: Partial<AllowRuleFacts>): AllowRuleFacts => ({
  connection_id: 7,
  peer_role: 'researcher',
  kind: 'incoming',
  tool: null,
  root_kind: null,
  root_id: null,
  created_by: mia.id,
  ...patch,
});
const ask = (patch: Partial<AskFacts>): AskFacts => ({
  kind: 'incoming',
  connectionId: 7,
  peerRole: 'researcher',
  tool: null,
  root: { kind: 'conversation', id: 5 },
  ...patch,
});

describe('which ask a rule lets through', () => {
  it.each<[string, AllowRuleFacts, AskFacts, boolean]>([
    ['everywhere: any root', rule({}), ask({ root: { kind: 'task', id: 9 } }), true],
    ['in its root', rule({ root_kind: 'conversation', root_id: 5 }), ask({}), true],
    [
      'not in another root',
      rule({ root_kind: 'conversation', root_id: 5 }),
      ask({ root: { kind: 'conversation', id: 6 } }),
      false,
    ],
    ['not in a root of another kind with the same id', rule({ root_kind: 'task', root_id: 5 }), ask({}), false],
    ['not another peer role', rule({}), ask({ peerRole: 'writer' }), false],
    ['not the same role name on another connection', rule({}), ask({ connectionId: 8 }), false],
    ['incoming only lets texts in, never sends out', rule({}), ask({ kind: 'outgoing' }), false],
    ['outgoing only sends out', rule({ kind: 'outgoing' }), ask({ kind: 'incoming' }), false],
    [
      'a tool rule: that tool',
      rule({ kind: 'permission', tool: 'execute' }),
      ask({ kind: 'permission', tool: 'execute' }),
      true,
    ],
    [
      'a tool rule: no other tool',
      rule({ kind: 'permission', tool: 'execute' }),
      ask({ kind: 'permission', tool: 'edit' }),
      false,
    ],
    [
      'a tool rule lets no text through',
      rule({ kind: 'permission', tool: 'execute' }),
      ask({ kind: 'incoming' }),
      false,
    ],
    ['a text rule lets no tool through', rule({}), ask({ kind: 'permission', tool: 'execute' }), false],
    [
      'a peer-started agent conversation is its own root',
      rule({ root_kind: 'thread', root_id: 22 }),
      ask({ root: { kind: 'thread', id: 22 } }),
      true,
    ],
  ])('%s', (_what, stored, asked, lets) => {
    expect(allowingRule([stored], asked) !== undefined).toBe(lets);
  });

  it('finds the one that applies among several, and none in an empty list', () => {
    const inRoot = rule({ root_kind: 'conversation', root_id: 5 });
    expect(allowingRule([rule({ peer_role: 'writer' }), inRoot], ask({}))).toBe(inRoot);
    expect(allowingRule([], ask({}))).toBeUndefined();
  });
});

describe('the rule a choice makes', () => {
  const thread = { connection_id: 7, peer_role: 'researcher', root_kind: 'task' as const, root_id: 4 };
  it.each<[string, AskFacts, 'root' | 'peer-role', Partial<AllowRuleFacts>]>([
    [
      'a held text, in its root',
      threadAsk('outgoing', thread),
      'root',
      { kind: 'outgoing', tool: null, root_kind: 'task', root_id: 4 },
    ],
    [
      'a held text, everywhere',
      threadAsk('incoming', thread),
      'peer-role',
      { kind: 'incoming', root_kind: null, root_id: null },
    ],
    [
      'a tool request keeps its tool',
      threadAsk('permission', thread, 'execute'),
      'peer-role',
      { kind: 'permission', tool: 'execute' },
    ],
    ['a text keeps no tool, whatever it was given', threadAsk('incoming', thread, 'execute'), 'root', { tool: null }],
  ])('%s', (_what, asked, scope, made) => {
    const made_ = ruleFor(asked, scope);
    expect(made_).toMatchObject({ connection_id: 7, peer_role: 'researcher', ...made });
    // What it makes lets the same ask through.
    expect(allowingRule([{ ...made_, created_by: 1 }], asked)).toBeDefined();
  });
});

const outcome = (d: Decision) => (d.allowed ? 'allowed' : d.code);

describe('who may remember, see and remove', () => {
  it.each<[string, Viewer, Audience, 'root' | 'peer-role', string]>([
    ['an owner who decides, in the root', owner, 'everyone', 'root', 'allowed'],
    ['an owner who decides, everywhere', owner, 'everyone', 'peer-role', 'allowed'],
    ['a member who decides, in the root', mia, 'everyone', 'root', 'allowed'],
    [
      'a member who decides, everywhere: rules in roots others read are owners’',
      mia,
      'everyone',
      'peer-role',
      'forbidden',
    ],
    ['a member in their own conversation, in the root', mia, { personId: mia.id }, 'root', 'allowed'],
    ['a member who does not decide it (an owner’s to allow)', mia, 'owners', 'root', 'forbidden'],
  ])('remember: %s', (_what, viewer, deciders, scope, expected) => {
    expect(outcome(decideRemember(viewer, deciders, scope))).toBe(expected);
  });

  const everywhere = rule({});
  const inMias = rule({ root_kind: 'conversation', root_id: 5 });
  it.each<[string, Viewer, AllowRuleFacts, Audience | undefined, boolean, string]>([
    ['a rule everywhere: read by all, removed by an owner', owner, everywhere, undefined, true, 'allowed'],
    ['a rule everywhere: removed by who made it', mia, everywhere, undefined, true, 'allowed'],
    ['a rule everywhere: not by another member', max, everywhere, undefined, true, 'forbidden'],
    ['in Mia’s conversation: Mia', mia, inMias, { personId: mia.id }, true, 'allowed'],
    ['in Mia’s conversation: hidden from an owner', owner, inMias, { personId: mia.id }, false, 'not_found'],
    ['in Mia’s conversation: hidden from Max', max, inMias, { personId: mia.id }, false, 'not_found'],
    ['in a root that is gone: owners', owner, inMias, undefined, true, 'allowed'],
    ['in a root that is gone: not its maker', mia, inMias, undefined, false, 'not_found'],
    [
      'in a task, by another member who reads it',
      max,
      rule({ root_kind: 'task', root_id: 3 }),
      'everyone',
      true,
      'forbidden',
    ],
  ])('%s', (_what, viewer, stored, readers, reads, removes) => {
    expect(mayReadRule(viewer, stored, readers)).toBe(reads);
    expect(outcome(decideRemoveRule(viewer, stored, readers))).toBe(removes);
  });
});
