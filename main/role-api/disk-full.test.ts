// An agent's write that the database cannot take for lack of space is refused with
// `disk_full`: the `parley` CLI says the disk is full and exits with its own code, and
// the same call works once there is room. The database is kept from growing with
// SQLite's max_page_count, which fails a write exactly as a full disk does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestInstallation, type TestInstallation } from '../../test-support/installation';
import { exitCodes } from './protocol';

describe('the role API on a full disk', () => {
  let t: TestInstallation;
  let conversationId: number;

  beforeAll(async () => {
    t = await openTestInstallation();
    // Reports a text of 90,000 characters and says how the CLI answered.
    const script =
      'read line; big=$(head -c 90000 /dev/zero | tr "\\0" x); parley report "$big" 2>&1 >/dev/null; echo "exit=$?"';
    const role = await t.owner('roles.create', {
      name: 'writer',
      agent: { adapter: 'command', command: ['sh', '-c', script] },
    });
    conversationId = (await t.owner('conversations.open', { roleId: role.id })).id;
  });
  afterAll(async () => {
    await t.close();
  });

  async function turn(text: string): Promise<string> {
    await t.owner('conversations.send', { id: conversationId, text });
    return t.waitFor(
      async () => {
        const detail = await t.owner('conversations.get', { id: conversationId });
        const answer = detail.messages.findLast((m) => m.author.kind === 'role' && m.body.includes('exit='));
        return answer && detail.messages.indexOf(answer) > detail.messages.findIndex((m) => m.body === text)
          ? answer.body
          : undefined;
      },
      `the agent's answer to ${text}`,
      30_000,
    );
  }

  it('refuses with disk_full and exit code 15, and takes the same write once there is room', async () => {
    const db = t.installation.db;
    const pages = db.pragma('page_count', { simple: true }) as number;
    // Room for the turn's own rows, none for a 90 KB text.
    db.pragma(`max_page_count = ${pages + 4}`);
    const refused = await turn('full');
    expect(refused).toContain(`exit=${exitCodes.disk_full}`);
    expect(refused).toMatch(/parley: the disk is full: Parley could not save this/);
    db.pragma('max_page_count = 1073741823');
    expect(await turn('room again')).toContain('exit=0');
    const detail = await t.owner('conversations.get', { id: conversationId });
    expect(detail.messages.filter((m) => m.body === 'x'.repeat(90_000))).toHaveLength(1);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  });
});
