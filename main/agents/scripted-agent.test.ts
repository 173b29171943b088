import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { distPaths } from '../paths';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import type { ScriptedTurn } from './scripted';
import type { AgentContext } from './types';

let bin: string;
let callsFile: string;

beforeAll(() => {
  bin = mkdtempSync(path.join(os.tmpdir(), 'parley-fake-bin-'));
  callsFile = path.join(bin, 'calls.jsonl');
  // A stand-in `parley` that records how it was called, to check each rule's exact command.
  writeFileSync(
    path.join(bin, 'parley'),
    `#!${process.execPath}
const fs = require('node:fs');
fs.appendFileSync(process.env.CALLS, JSON.stringify(process.argv.slice(2)) + '\\n');
if (process.env.FAKE_FAIL) { process.stderr.write('parley: ' + process.env.FAKE_FAIL + '\\n'); process.exit(13); }
`,
  );
  chmodSync(path.join(bin, 'parley'), 0o755);
});
afterAll(() => rmSync(bin, { recursive: true, force: true }));
afterEach(() => rmSync(callsFile, { force: true }));

const base = { role: { id: 1, name: 'researcher' }, summary: '', reporting: '' };
const contexts: Record<string, AgentContext> = {
  conversation: { ...base, kind: 'conversation', id: 1, root: { kind: 'conversation', id: 1, summary: '' } },
  task: { ...base, kind: 'task', id: 2, root: { kind: 'task', id: 2, summary: '' } },
  peerStarted: {
    ...base,
    kind: 'thread',
    id: 3,
    peerStarted: true,
    peer: 'alice',
    root: { kind: 'thread', id: 3, summary: '' },
  },
  answer: {
    ...base,
    kind: 'thread',
    id: 4,
    peerStarted: false,
    peer: 'bob',
    root: { kind: 'conversation', id: 1, summary: '' },
  },
};

interface Run {
  events: Array<{ type: string; session?: string; output?: string }>;
  calls: string[][];
}

function runAgent(
  context: AgentContext,
  inputs: Array<[kind: ScriptedTurn['inputs'][number]['kind'], from: string, body: string]>,
  options: { session?: string; fail?: string } = {},
): Promise<Run> {
  const turn: ScriptedTurn = {
    session: options.session ?? null,
    role: 'researcher',
    context,
    inputs: inputs.map(([kind, from, body]) => ({ kind, from, body, at: '' })),
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [distPaths.scriptedAgent], {
      env: {
        PATH: `${bin}:${process.env.PATH}`,
        CALLS: callsFile,
        ...(options.fail ? { FAKE_FAIL: options.fail } : {}),
      },
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`agent exited ${code}`));
      const calls = existsSync(callsFile)
        ? readFileSync(callsFile, 'utf8')
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as string[])
        : [];
      resolve({
        events: stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as Run['events'][number]),
        calls,
      });
    });
    child.stdin.end(JSON.stringify(turn));
  });
}

const output = (run: Run) => run.events.find((e) => e.type === 'result')?.output;

describe('scripted agent', () => {
  it('in a conversation or task: asks through `parley send`, sleeps, echoes, and passes on notices about texts', async () => {
    for (const context of [contexts.conversation!, contexts.task!]) {
      const run = await runAgent(context, [
        // How its previous turn ended, and a person's word on its held text, are Parley's to
        // say; they are not repeated as the reply.
        ['notice', 'parley', 'You were stopped by alice before your previous turn finished.'],
        ['notice', 'parley', 'Your text #4 to bob/researcher was approved by alice; it goes out as usual.'],
        ['notice', 'parley', 'Your text #1 to bob/researcher was denied by alice: it was not sent.'],
        ['notice', 'parley', 'Your text #2 to bob/researcher was rejected (declined): a person at bob declined it.'],
        ['notice', 'parley', 'Your text #3 to bob/researcher was rejected (queue): bob has too much waiting.'],
        ['message', 'alice', 'ask bob/researcher: what changed?'],
        ['message', 'alice', 'sleep 0.2'],
        ['message', 'alice', 'hello'],
      ]);
      expect(output(run)).toBe(
        'notice: Your text #3 to bob/researcher was rejected (queue): bob has too much waiting.\nasked bob/researcher\nslept 0.2\necho: hello',
      );
      expect(run.calls).toEqual([['send', '--to', 'bob/researcher', 'what changed?']]);
      rmSync(callsFile, { force: true });
    }
  });

  it('in an agent conversation the peer started: relays asks, and replies to everything else', async () => {
    const run = await runAgent(contexts.peerStarted!, [
      ['text', 'alice/assistant', 'ask carol/analyst: numbers?'],
      ['text', 'alice/assistant', 'sleep 0.1'],
      ['text', 'alice/assistant', 'what is new?'],
    ]);
    expect(run.calls).toEqual([
      ['send', '--to', 'carol/analyst', 'numbers?'],
      ['reply', 'answer from researcher: slept 0.1'],
      ['reply', 'answer from researcher: what is new?'],
    ]);
    expect(output(run)).toBe(
      'asked carol/analyst\nreplied: answer from researcher: slept 0.1\nreplied: answer from researcher: what is new?',
    );
  });

  it('in an agent conversation rooted elsewhere: reports the answer to the root', async () => {
    const run = await runAgent(contexts.answer!, [['text', 'bob/researcher', 'answer from researcher: 42']]);
    expect(run.calls).toEqual([['report', 'bob/researcher says: answer from researcher: 42']]);
  });

  it('sends nothing for a notice in an agent conversation', async () => {
    const run = await runAgent(contexts.peerStarted!, [['notice', 'parley', 'Your text was rejected: paused']]);
    expect(run.calls).toEqual([]);
    expect(output(run)).toBe('notice: Your text was rejected: paused');
  });

  it('reports a failed parley call as `error:` with the CLI’s message', async () => {
    const run = await runAgent(contexts.peerStarted!, [['text', 'alice/assistant', 'hi']], {
      fail: 'the connection is paused',
    });
    expect(output(run)).toBe('error: the connection is paused');
  });

  it('starts a session when it has none and keeps the one it is given', async () => {
    const fresh = await runAgent(contexts.conversation!, [['message', 'alice', 'hi']]);
    expect(fresh.events[0]).toMatchObject({
      type: 'session',
      session: expect.stringMatching(/^scripted-[0-9a-f]{16}$/) as unknown,
    });
    const kept = await runAgent(contexts.conversation!, [['message', 'alice', 'hi']], { session: 'scripted-kept' });
    expect(kept.events[0]).toEqual({ type: 'session', session: 'scripted-kept' });
  });
});

describe('scripted agent behind a role', () => {
  let t: TestInstallation;
  afterEach(async () => t?.close());

  it('answers `ask` for an unknown peer with the real CLI’s error', async () => {
    t = await openTestInstallation();
    const role = await t.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const conversation = await t.owner('conversations.open', { roleId: role.id });
    await t.owner('conversations.send', { id: conversation.id, text: 'ask bob/researcher: anything new?' });
    const reply = await t.waitFor(async () => {
      const messages = (await t.owner('conversations.get', { id: conversation.id })).messages;
      return messages.find((m) => m.author.kind === 'role')?.body;
    }, 'the reply');
    expect(reply).toBe('error: no connection named "bob"; this installation is not connected to any peer yet');
  });
});
