// The trust a turn runs under, between real installations on loopback (DESIGN §12.3): a
// run for this installation's people is `own`; a run in an agent conversation a peer
// started, and the run that takes the answer of a relay rooted there, run at that peer's
// level; an owner's change takes effect at the next turn. The agents are real processes
// that write down the trust Parley gave their turn.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSettings } from '../../shared/domain';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer, pair } from '../../test-support/network';

let dir: string;
let journal: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'parley-turn-trust-'));
  journal = path.join(dir, 'journal.jsonl');
  // Writes down each turn's trust; relays a peer's question to carol/analyst, passes her
  // answer on, and answers its own person directly.
  writeFileSync(
    path.join(dir, 'recorder.cjs'),
    `
      const { execFileSync } = require('node:child_process');
      const { appendFileSync } = require('node:fs');
      let input = '';
      process.stdin.on('data', (d) => (input += d));
      process.stdin.on('end', () => {
        const turn = JSON.parse(input);
        const text = turn.inputs.map((i) => i.body).join(' ');
        const where = turn.context.kind !== 'thread' ? 'own person' : turn.context.peerStarted ? 'peer' : 'relay answer';
        // What \`parley context\` says of it, from inside the turn.
        const told = JSON.parse(execFileSync('parley', ['context'], { encoding: 'utf8' })).context.trust;
        appendFileSync(process.env.JOURNAL,
          JSON.stringify({ where, text, trust: turn.context.trust, told }) + '\\n');
        if (where === 'own person') return process.stdout.write('hello');
        if (where === 'relay answer') return process.stdout.write('carol says: ' + text);
        execFileSync('parley', ['send', '--to', 'carol/analyst', text]);
        process.stdout.write('asked carol');
      });
    `,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const open: TestInstallation[] = [];
afterEach(async () => {
  for (const t of open.splice(0)) await t.close();
});

const plainAnswer: AgentSettings = {
  adapter: 'command',
  input: 'json',
  command: [
    process.execPath,
    '-e',
    "let d='';process.stdin.on('data',(c)=>(d+=c)).on('end',()=>{const t=JSON.parse(d);console.log('the answer to '+t.inputs.at(-1).body+' is 42')})",
  ],
};

type Trust = { level: string; peer?: string; note?: string };
type Entry = { where: string; text: string; trust: Trust; told?: Trust };
const entries = (): Entry[] =>
  existsSync(journal)
    ? readFileSync(journal, 'utf8')
        .trim()
        .split('\n')
        .map((line) => {
          const entry = JSON.parse(line) as Entry;
          // `parley context` says the same level the turn was given.
          expect(entry.told).toEqual(entry.trust);
          delete entry.told;
          return entry;
        })
    : [];

async function bodies(t: TestInstallation, id: number) {
  return (await t.owner('conversations.get', { id })).messages.map((m) => m.body);
}

describe('the trust a turn runs under (DESIGN §12.3)', () => {
  it('is the peer’s level for its agent conversations and their relays, own for people here, and changes at the next turn', async () => {
    const alice = await openPeer('alice');
    const bob = await openPeer('bob');
    const carol = await openPeer('carol');
    open.push(alice, bob, carol);
    const assistant = await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    const researcher = await bob.owner('roles.create', {
      name: 'researcher',
      agent: {
        adapter: 'command',
        command: [process.execPath, path.join(dir, 'recorder.cjs')],
        input: 'json',
        env: { JOURNAL: journal },
      },
    });
    await carol.owner('roles.create', { name: 'analyst', agent: plainAnswer });
    const withAlice = await pair(bob, alice, { inviter: ['researcher'], acceptor: ['assistant'] });
    const withCarol = await pair(carol, bob, { inviter: ['analyst'], acceptor: [] });
    // Carol is trusted more than alice: the relay's answer still works at alice's level.
    await bob.owner('connections.setTrust', { id: withCarol.acceptorConnectionId, level: 'full' });
    const fromAlice = (await bob.owner('connections.list', {})).find((c) => c.id === withAlice.inviterConnectionId)!;
    expect(fromAlice.trust).toBe('answer');

    const conversation = await alice.owner('conversations.open', { roleId: assistant.id });
    const ask = async (question: string) => {
      await alice.owner('conversations.send', { id: conversation.id, text: `ask bob/researcher: ${question}` });
      await alice.waitFor(
        async () => (await bodies(alice, conversation.id)).find((b) => b.includes(`answer to ${question} is 42`)),
        `carol’s answer to ${question}, through bob`,
      );
    };
    await ask('one');
    expect(entries()).toEqual([
      { where: 'peer', text: 'one', trust: { level: 'answer', peer: 'alice' } },
      { where: 'relay answer', text: 'the answer to one is 42', trust: { level: 'answer', peer: 'alice' } },
    ]);

    // Bob's owner raises alice's level; the same agent conversation's next turns take it.
    const raised = await bob.owner('connections.setTrust', { id: withAlice.inviterConnectionId, level: 'work' });
    expect(raised.trust).toBe('work');
    await ask('two');
    expect(entries().slice(2)).toEqual([
      { where: 'peer', text: 'two', trust: { level: 'work', peer: 'alice' } },
      { where: 'relay answer', text: 'the answer to two is 42', trust: { level: 'work', peer: 'alice' } },
    ]);
    expect(await bob.owner('threads.list', { peerStarted: true })).toHaveLength(1);

    // Bob's own conversation with his role works for bob.
    const own = await bob.owner('conversations.open', { roleId: researcher.id });
    await bob.owner('conversations.send', { id: own.id, text: 'hi' });
    await bob.waitFor(async () => (await bodies(bob, own.id)).includes('hello'), 'the answer to bob');
    expect(entries().slice(4)).toEqual([{ where: 'own person', text: 'hi', trust: { level: 'own' } }]);
  }, 90_000);
});
