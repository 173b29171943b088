// The standing text and the turn prompt, as tables: whom the agent can ask, which way
// it is told to act, and what a turn's prompt holds.
import { describe, expect, it } from 'vitest';
import type { Role } from '../../shared/domain';
import { describePeers, standingInstructions, turnPrompt } from './agent-prompt';
import { fenceClose, fenceOpen, type Fence } from './peer-words';
import type { PeerDirectoryEntry, TurnRequest } from './types';

const fence: Fence = { tag: 'peer-text-00ff00ff00ff00ff00ff00ff' };

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
    paths: { node: 'node', scriptedAgent: 'scripted-agent.cjs' },
    ...overrides,
  };
}

describe('the standing text', () => {
  it('lists whom the agent can ask, with descriptions and each connection’s state, fenced after the instructions', () => {
    expect(describePeers(peers)).toEqual([
      '- bob/researcher — Finds sources. (online)',
      '- bob/writer (online)',
      '- carol/analyst — Runs the numbers. (paused: sends are refused)',
      '- dave (offline: a text waits until it is back) lets you address none of its roles',
    ]);
    const text = standingInstructions(request(), { cliOnPath: false, fence });
    const open = text.indexOf(fenceOpen(fence, 'peer directory'));
    expect(text.slice(open)).toBe(
      `${fenceOpen(fence, 'peer directory')}\n${describePeers(peers).join('\n')}\n${fenceClose(fence)}`,
    );
    // Every instruction, the owner's too, comes before the directory.
    expect(text.indexOf('Answer in French.')).toBeLessThan(open);
    expect(standingInstructions(request({ peers: [] }), { cliOnPath: false, fence })).toContain(
      'You are not connected to any peer yet',
    );
  });

  it.each([
    { cliOnPath: false, mentionsCli: false },
    { cliOnPath: true, mentionsCli: true },
  ])('names the MCP tools, and the CLI only where the shell has it (cliOnPath: $cliOnPath)', (row) => {
    const text = standingInstructions(request(), { cliOnPath: row.cliOnPath, fence });
    expect(text).toContain('You act in Parley through the tools of the MCP server "parley"; they need no approval:');
    for (const tool of ['context', 'peers', 'report {text}', 'send {to: "PEER/ROLE", text}', 'reply {text}'])
      expect(text).toContain(`- ${tool}`);
    expect(text.includes('`parley report TEXT`')).toBe(row.mentionsCli);
  });

  it.each([
    { withoutOwnerInstructions: false, has: true },
    { withoutOwnerInstructions: true, has: false },
  ])('holds the owner’s instructions unless told not to ($withoutOwnerInstructions)', (row) => {
    const text = standingInstructions(request(), { cliOnPath: false, fence, ...row });
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
    const prompt = turnPrompt(task('Get Q3.', inputBody), fence);
    expect(prompt.split('Get Q3.').length - 1).toBe(times);
    expect(prompt).toContain('Task #7 "Numbers" (open).');
  });

  it('puts the owner’s instructions and a notice before the inputs', () => {
    const prompt = turnPrompt(request(), fence, { instructions: 'Be brief.', notice: 'You were stopped.' });
    expect(prompt.indexOf('Be brief.')).toBeLessThan(prompt.indexOf('[notice] You were stopped.'));
    expect(prompt.trim().endsWith('alice: hello')).toBe(true);
  });
});
