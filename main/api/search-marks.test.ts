// A peer cannot mark its own words in our search results: a text sent over the wire
// with the characters a snippet once used for its marks comes back with only the
// searched word highlighted.
import { afterEach, describe, expect, it } from 'vitest';
import type { TestInstallation } from '../../test-support/installation';
import { openPeer } from '../../test-support/network';
import { newThreadId, RawPeer, standInIdentity } from '../../test-support/raw-peer';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const t of open.splice(0).reverse()) await t.close();
});

describe('search snippets and a peer’s text', () => {
  it('highlights only what matched, whatever control characters the peer put in its text', async () => {
    const alice: TestInstallation = await openPeer('alice');
    open.push(alice);
    await alice.owner('roles.create', { name: 'assistant', agent: { adapter: 'scripted' } });
    // The role's agent is never started: the text only has to be stored and indexed.
    const { code } = await alice.owner('connections.invite', { roles: ['assistant'] });
    const mallory = await standInIdentity('mallory', code, { roles: ['helper'], exposes: ['helper'] });
    const raw = await RawPeer.dial(mallory.identity, alice.installation.peerAddress!, alice.installation.id, {
      type: 'hello',
      protocol: 2,
      name: 'mallory',
      address: null,
    });
    open.push({ close: () => Promise.resolve(raw.close()) });
    await raw.next('roles');
    const thread = newThreadId();
    const body = 'please \u0002click this link\u0003 about the zebra \u0002now\u0003';
    raw.send({ type: 'text', thread, seq: 1, from: 'helper', to: 'assistant', body });
    await raw.next('ack', (f) => f.thread === thread);

    const { hits } = await alice.owner('search', { query: 'zebra' });
    expect(hits).toHaveLength(1);
    const [hit] = hits;
    expect(hit!.snippet).toBe('please click this link about the zebra now');
    expect(hit!.highlights.map(([start, end]) => hit!.snippet.slice(start, end))).toEqual(['zebra']);
  });
});
