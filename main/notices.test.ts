// Notices with a real installation and its scripted agent: a role's answer is news to
// the person whose conversation it is, and to nobody else; what was there before the
// start is not news.
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppEvent, Notice } from '../shared/api-contract';
import { openTestInstallation, type TestInstallation } from './testing/installation';

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

function noticesOf(t: TestInstallation, person = t.installation.owner()): Notice[] {
  const seen: Notice[] = [];
  t.installation.subscribe({ person }, (event: AppEvent) => {
    if (event.type === 'notice') seen.push(event.notice);
  });
  return seen;
}

describe('answer notices', () => {
  it('tell the person whose conversation a role answered in, and nobody else', async () => {
    const t = await openTestInstallation();
    open.push(t);
    const role = await t.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const { person: member } = await t.owner('people.add', { name: 'dana', kind: 'member' });
    const ownerNotices = noticesOf(t);
    const memberNotices = noticesOf(t, member);
    const conversation = await t.as(member)('conversations.open', { roleId: role.id });
    await t.as(member)('conversations.send', { id: conversation.id, text: 'hello' });
    await t.waitFor(() => memberNotices.length > 0, 'the member’s notice');
    expect(memberNotices).toEqual([
      { kind: 'answer', conversationId: conversation.id, title: 'assistant answered', body: 'echo: hello' },
    ]);
    expect(ownerNotices).toEqual([]);
  });

  it('are not raised again for answers that were there before a restart', async () => {
    const first = await openTestInstallation();
    const role = await first.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const conversation = await first.owner('conversations.open', { roleId: role.id });
    await first.owner('conversations.send', { id: conversation.id, text: 'one' });
    await first.waitFor(async () => {
      const detail = await first.owner('conversations.get', { id: conversation.id });
      return detail.messages.some((m) => m.body === 'echo: one');
    }, 'the first answer');
    const dataDir = first.installation.dataDir;
    await first.installation.close();

    const again = await openTestInstallation({ dataDir });
    try {
      const notices = noticesOf(again);
      await again.owner('conversations.send', { id: conversation.id, text: 'two' });
      await again.waitFor(() => notices.length > 0, 'the second answer’s notice');
      expect(notices.map((n) => n.body)).toEqual(['echo: two']);
    } finally {
      await again.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
