// The standing text and the turn prompt, as tables: whom the agent can ask, which way
// it is told to act, and what a turn's prompt holds.
import { describe, expect, it } from 'vitest';
import type { Role } from '../../shared/domain';
import { describePeers, standingInstructions, turnPrompt } from './agent-prompt';
import type { PeerDirectoryEntry, TurnRequest } from './types';

const peers: PeerDirectoryEntry[] = [
  {
    peer: 'bob',
    state: 'online',
    roles: [
      { address: 'bob/researcher', description: 'Finds sources.' },
      { address: 'bob/writer', description: '' },
    ],
  },
  { peer: 'carol', state: 'paused', roles: [{ address: 'carol/analyst', description: 'Runs the numbers.' }] },
  { peer: 'dave', state: 'offline', roles: [] },
];

function request(overrides: Partial<TurnRequest> = {}): TurnRequest {
  const role: Role = {
    id: 1,
    name: 'assistant',
    description: '',
    agent: { adapter: 'claude-code', instructions: 'Answer in French.' },
    createdAt: '',
  };
  return {
    role,
    session: null,
    inputs: [{ kind: 'message', from: 'alice', body: 'hello', at: '' }],
    context: {
      kind: 'conversation',
      id: 1,
      role: { id: 1, name: 'assistant' },
      summary: 'You are assistant, in your conversation with alice.',
      root: { kind: 'conversation', id: 1, summary: 'your conversation with alice' },
      reporting: 'Your final output is your message to alice. `report` posts a message to alice right away.',
    },
    peers,
    trust: 'own',
    env: { PATH: '/data/bin:/usr/bin' },
    defaultCwd: '/data/work',
    privateDir: '/data/turns',
    paths: { node: 'node', scriptedAgent: 'scripted-agent.js' },
    ...overrides,
  };
}

describe('the standing text', () => {
  it('lists whom the agent can ask, with descriptions and each connection’s state', () => {
    expect(describePeers(peers)).toEqual([
      'Whom you can ask with `send` (the `peers` tool says this again, up to date):',
      '- bob/researcher — Finds sources. (online)',
      '- bob/writer (online)',
      '- carol/analyst — Runs the numbers. (paused: sends are refused)',
      '- dave (offline: a text waits until it is back) lets you address none of its roles',
    ]);
    expect(describePeers([])).toEqual(['You are not connected to any peer yet, so there is no one to `send` to.']);
    expect(standingInstructions(request(), { cliOnPath: false })).toContain(describePeers(peers).join('\n'));
  });

  it.each([
    { cliOnPath: false, mentionsCli: false },
    { cliOnPath: true, mentionsCli: true },
  ])('names the MCP tools, and the CLI only where the shell has it (cliOnPath: $cliOnPath)', (row) => {
    const text = standingInstructions(request(), { cliOnPath: row.cliOnPath });
    expect(text).toContain('You act in Parley through the tools of the MCP server "parley"; they need no approval:');
    for (const tool of ['context', 'peers', 'report {text}', 'send {to: "PEER/ROLE", text}', 'reply {text}'])
      expect(text).toContain(`- ${tool}`);
    expect(text.includes('`parley report TEXT`')).toBe(row.mentionsCli);
  });

  it.each([
    { withoutOwnerInstructions: false, has: true },
    { withoutOwnerInstructions: true, has: false },
  ])('holds the owner’s instructions unless told not to ($withoutOwnerInstructions)', (row) => {
    const text = standingInstructions(request(), { cliOnPath: false, ...row });
    expect(text.includes('Instructions from the role’s owner:\nAnswer in French.')).toBe(row.has);
  });
});

describe('the turn prompt', () => {
  const task = (body: string, inputBody: string) =>
    request({
      inputs: [{ kind: 'message', from: 'alice', body: inputBody, at: '' }],
      context: {
        ...request().context,
        kind: 'task',
        task: { id: 7, title: 'Numbers', body, status: 'open', parentId: null },
      },
    });

  it.each([
    { what: 'the first turn, whose brief carries the body', inputBody: 'New task: Numbers\n\nGet Q3.', times: 1 },
    { what: 'a later turn, given a comment', inputBody: 'and Q4 too', times: 1 },
  ])('shows a task’s body once: $what', ({ inputBody, times }) => {
    const prompt = turnPrompt(task('Get Q3.', inputBody));
    expect(prompt.split('Get Q3.').length - 1).toBe(times);
    expect(prompt).toContain('Task #7 "Numbers" (open).');
  });

  it('puts the owner’s instructions and a notice before the inputs', () => {
    const prompt = turnPrompt(request(), { instructions: 'Be brief.', notice: 'You were stopped.' });
    expect(prompt.indexOf('Be brief.')).toBeLessThan(prompt.indexOf('[notice] You were stopped.'));
    expect(prompt.trim().endsWith('alice: hello')).toBe(true);
  });
});
