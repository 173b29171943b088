// `npm run demo -- --exit` as a smoke test: three real `parley serve` processes play
// ADR 0035's story, and the demo exits 0 only if every state along the way was the
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

  // Setup: the two pairings.
  expect(stdout).toMatch(
    /ok bob <-> alice paired over mutual TLS: alice may address bob\/researcher; bob may address alice\/assistant/,
  );
  expect(stdout).toMatch(
    /ok carol <-> bob paired over mutual TLS: bob may address carol\/analyst; carol may address nothing/,
  );

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

  // 4. The pause, its rejection with a notice to alice's assistant, and the unpause.
  expect(stdout).toMatch(/bob +connection alice \| paused, online/);
  // The watcher prints a failure as a transition, or with the text if it first sees it already failed.
  expect(stdout).toMatch(/out #\d+ (now failed|"[^\n]*" \[failed) \(paused\)/);
  expect(stdout).toMatch(/assistant's output: notice: Your text #\d+ to bob\/researcher was rejected \(paused\)/);
  expect(stdout).toContain('ok unpaused: nothing restarted, nothing resent');

  // 5. The root deletion, the `thread` rejection and the new thread after it.
  expect(stdout).toContain(
    `alice    thread ${thread} assistant <-> bob/researcher | closed (root deleted), its root is gone`,
  );
  expect(stdout).toMatch(
    new RegExp(
      `bob +thread ${thread} researcher <-> alice/assistant \\| out #\\d+ (now failed|"[^\\n]*" \\[failed) \\(thread\\)`,
    ),
  );
  expect(stdout).toContain(`bob      thread ${thread} researcher <-> alice/assistant | closed (closed by alice)`);
  const fresh = /ok bob's next send from root (\S{6}) started thread (\S{6})/.exec(stdout);
  expect(fresh?.[1]).toBe(thread);
  expect(fresh?.[2]).not.toBe(thread);
  expect(stdout).toContain(
    `alice    thread ${fresh![2]} assistant <-> bob/researcher | opened: started by bob (its own root)`,
  );

  // Then the three UI addresses, each with its sign-in token.
  expect(stdout.match(/^ {2}(alice|bob|carol) +http:\/\/127\.0\.0\.1:\d+\/#token=\S+$/gm)).toHaveLength(3);
});
