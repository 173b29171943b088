// `npm run demo -- --exit` as a smoke test: three real `parley serve` processes, paired
// over the demo's own loopback DHT by key alone, play ADR 0035's story, and the demo exits 0 only if every state along the way was the
// expected one. The transcript's key lines are checked here too.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const demo = path.join(root, 'dist', 'demo.js');

function runDemo(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [demo, '--exit'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGINT'), 150_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

it('plays the demo story on three installations and exits 0 with --exit', { timeout: 180_000 }, async () => {
  expect(existsSync(demo), 'dist/demo.js is missing: run `npm run build`').toBe(true);
  const { code, stdout, stderr } = await runDemo();
  expect(code, `the demo failed:\n${stdout}\n${stderr}`).toBe(0);

  // Setup: the demo's own DHT on loopback, and the two pairings over it by key alone.
  expect(stdout).toMatch(/dht +bootstrap nodes 127\.0\.0\.1:\d+(,127\.0\.0\.1:\d+)* \(loopback only/);
  expect(stdout.match(/owner accepts the invitation \(DHT key only, no address\)/g)).toHaveLength(2);
  expect(stdout).toMatch(
    /ok bob <-> alice paired over mutual TLS, holepunched over the DHT: alice may address bob\/researcher; bob may address alice\/assistant/,
  );
  expect(stdout).toMatch(
    /ok carol <-> bob paired over mutual TLS, holepunched over the DHT: bob may address carol\/analyst; carol may address nothing/,
  );
  // The connection lines the live transcript prints name the path too.
  expect(stdout).toMatch(/connection \w+ \| active, online \(holepunched\)/);
  expect(stdout).not.toMatch(/online \((direct|relayed)/);

  // 1. The person's question and its answer in her conversation; one thread ID on both sides.
  const question =
    /alice +thread (\S{6}) assistant <-> bob\/researcher \| opened: started here, root: conversation #1/.exec(stdout);
  expect(question).not.toBeNull();
  const thread = question![1]!;
  expect(stdout).toContain(
    `bob      thread ${thread} researcher <-> alice/assistant | opened: started by alice (its own root)`,
  );
  expect(stdout).toContain(
    'conversation #1 alice <-> assistant | assistant: "bob/researcher says: answer from researcher: what is new?"',
  );

  // 2. The relay: bob's thread to carol is rooted in alice's; the answer comes back down.
  expect(stdout).toMatch(
    new RegExp(`bob +thread \\S{6} researcher <-> carol/analyst \\| opened: started here, root: thread ${thread}`),
  );
  expect(stdout).toMatch(/carol +thread \S{6} analyst <-> bob\/researcher \| opened: started by bob \(its own root\)/);
  expect(stdout).toContain('assistant: "bob/researcher says: carol/analyst says: answer from analyst: numbers?"');

  // 3. The stop.
  expect(stdout).toMatch(/researcher's turn \d+ stopped \(Stopped by bob\)/);
  expect(stdout).toMatch(
    /ok turn stopped \(Stopped by bob\); process \d+ gone; "sleep 30" handled, not retried; run idle/,
  );

  // 4. The pause, told to alice: her assistant is refused at home, nothing goes out; then the unpause.
  expect(stdout).toMatch(/bob +connection alice \| paused, online/);
  expect(stdout).toMatch(/ok bob's pause was told: connection bob paused by bob since \S+/);
  expect(stdout).toMatch(
    /ok her assistant was refused at home: "error: bob has paused the connection[^\n]*"; nothing went out/,
  );
  expect(stdout).toContain('ok unpaused: nothing restarted, nothing resent');

  // 5. A withdrawal down the relay chain: carol's analyst stops, each hop confirms.
  expect(stdout).toMatch(
    new RegExp(
      `ok withdrawn down the chain: alice ${thread} \\(by \\S+\\) -> bob ${thread} \\(by alice\\) -> bob \\S{6} -> carol \\S{6} \\(its turn stopped: Withdrawn by bob\\); each hop confirmed`,
    ),
  );

  // 6. The root deletion withdraws its open ask: bob's agent stops.
  expect(stdout).toContain(
    `alice    thread ${thread} assistant <-> bob/researcher | closed (root deleted), its root is gone`,
  );
  expect(stdout).toMatch(
    /bob +ok researcher's turn on "sleep 8" stopped \(Withdrawn by alice\): nothing more is done for a deleted conversation/,
  );

  // Then the three UI addresses, each with its sign-in token.
  expect(stdout.match(/^ {2}(alice|bob|carol) +http:\/\/127\.0\.0\.1:\d+\/#token=\S+$/gm)).toHaveLength(3);
});
