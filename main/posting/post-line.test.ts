// A line posted to a conversation or a task: written with what its step commits beside
// it, and told to its readers once; nothing at all when its place is gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppEvent } from '../../shared/api-contract';
import type { Audience } from '../events';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { PARLEY_AUTHOR, postLine, postReport, writeLine } from './post-line';

describe('posting a line', () => {
  let t: TestInstallation;
  let roleId: number;
  let conversationId: number;
  let taskId: number;
  let briefTurn: number;
  const heard: { event: AppEvent; audience: Audience }[] = [];

  beforeAll(async () => {
    t = await openTestInstallation();
    const quiet = { adapter: 'command' as const, command: [process.execPath, '-e', 'void 0'] };
    roleId = (await t.owner('roles.create', { name: 'worker', agent: quiet })).id;
    conversationId = (await t.owner('conversations.open', { roleId })).id;
    taskId = (await t.owner('tasks.create', { roleId, title: 'check' })).id;
    // The brief's turn is over before anything is heard.
    briefTurn = await t.waitFor(async () => {
      const first = (await t.owner('tasks.get', { id: taskId })).turns[0];
      return first && first.status !== 'running' ? first.id : undefined;
    }, 'the brief’s turn');
    t.installation.events.observe((event, audience) => heard.push({ event, audience }));
  });
  afterAll(() => t.close());

  const posting = () => ({ db: t.installation.db, events: t.installation.events });

  it('writes a message with what its step commits first, then tells the conversation’s readers', async () => {
    heard.length = 0;
    let alongside = 0;
    const posted = postLine(
      posting(),
      { kind: 'conversation', id: conversationId },
      { author: PARLEY_AUTHOR, text: 'a notice', entry: 'notice' },
      () => alongside++,
    );
    expect(alongside).toBe(1);
    expect(posted?.message).toMatchObject({ body: 'a notice', author: { kind: 'system', name: 'Parley' } });
    expect(heard.map((h) => h.event)).toEqual([{ type: 'changed', kind: 'conversation', id: conversationId }]);
    const { messages } = await t.owner('conversations.get', { id: conversationId });
    expect(messages.at(-1)).toMatchObject({ id: posted!.message.id, body: 'a notice' });
  });

  it('keeps what the line is in the task’s log, and the turn that wrote a report', async () => {
    heard.length = 0;
    const role = { id: roleId, name: 'worker' };
    const reported = postReport(posting(), { kind: 'task', id: taskId }, role, 'progress', briefTurn);
    expect(reported).toMatchObject({ reported: 'task', id: taskId });
    expect(heard.map((h) => h.event)).toEqual([{ type: 'changed', kind: 'task', id: taskId }]);
    const { log } = await t.owner('tasks.get', { id: taskId });
    expect(log.at(-1)).toMatchObject({ kind: 'report', body: 'progress', author: { kind: 'role', name: 'worker' } });
  });

  it('writes nothing, and commits nothing beside it, where the place is gone', () => {
    heard.length = 0;
    let alongside = 0;
    const gone = { kind: 'conversation' as const, id: 999_999 };
    const line = { author: PARLEY_AUTHOR, text: 'lost', entry: 'notice' as const };
    expect(postLine(posting(), gone, line, () => alongside++)).toBeNull();
    expect(postReport(posting(), { kind: 'task', id: 999_999 }, { id: roleId, name: 'worker' }, 'x', 0)).toBeNull();
    expect(writeLine(t.installation.db, gone, line)).toBeNull();
    expect(alongside).toBe(0);
    expect(heard).toEqual([]);
  });
});
