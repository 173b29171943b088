// A dial over the DHT carrier says when its stream is open yet the peer has said nothing:
// real HyperDHT nodes on a loopback testnet, real UDP on 127.0.0.1.
import createTestnet, { type Testnet } from '@hyperswarm/testnet';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DhtCarrier } from './dht-carrier';
import { createIdentity } from './identity';

let testnet: Testnet;
let root: string;
const carriers: DhtCarrier[] = [];
beforeAll(async () => {
  testnet = await createTestnet(3);
  root = mkdtempSync(path.join(os.tmpdir(), 'parley-dht-carrier-'));
});
afterAll(async () => {
  for (const carrier of carriers.splice(0)) await carrier.close();
  await testnet?.destroy();
  rmSync(root, { recursive: true, force: true });
});

async function carrier(name: string, onStream: (stream: Duplex) => void): Promise<DhtCarrier> {
  const started = await DhtCarrier.start({
    identity: await createIdentity(path.join(root, name), name),
    bootstrap: { kind: 'nodes', nodes: testnet.bootstrap },
    admit: () => true,
    onStream: (stream) => {
      stream.on('error', () => stream.destroy());
      onStream(stream);
    },
  });
  carriers.push(started);
  return started;
}

describe('a dial over the DHT carrier', () => {
  it('says when its stream has been open a while with not a byte from the peer, and never once the peer spoke', async () => {
    // bob answers each stream with a greeting; carol takes hers and says nothing, as the far
    // side of a half-open stream does (it never knew of it).
    const bob = await carrier('bob', (stream) => stream.write('hello'));
    const carol = await carrier('carol', () => undefined);
    const alice = await carrier('alice', () => undefined);

    const silences: string[] = [];
    const toBob = alice.connect(bob.publicKey);
    toBob.whenSilent(300, () => silences.push('bob'));
    const greeting = await new Promise<string>((resolve, reject) => {
      toBob.stream.once('data', (chunk: Buffer) => resolve(chunk.toString()));
      toBob.stream.once('error', reject);
    });
    expect(greeting).toBe('hello');

    // Opened after bob spoke, with the same wait: by the time it is silent, bob's would have been too.
    const toCarol = alice.connect(carol.publicKey);
    toCarol.stream.on('error', () => undefined);
    await new Promise<void>((resolve) => toCarol.whenSilent(300, () => (silences.push('carol'), resolve())));
    expect(silences).toEqual(['carol']);
    toBob.stream.destroy();
    toCarol.stream.destroy();
  });
});
