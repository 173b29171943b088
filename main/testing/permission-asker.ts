// A command agent for tests that asks for a tool the way the acp worker does on its
// agent's behalf: through the role API's `permission` call, with its turn's token, and
// waits for the answer. It reads the turn's inputs on stdin; the last line is the tool's
// title. It prints what it was told: "approved by NAME", "denied by NAME" or
// "cancelled: REASON".
import { callRoleApi } from '../role-api/client';

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const lines = Buffer.concat(chunks).toString('utf8').trim().split('\n');
  const title = lines
    .at(-1)!
    .replace(/^[^:]+: /, '')
    .trim();
  const answer = await callRoleApi<{ outcome: string; by?: string; reason?: string }>(
    { socketPath: process.env.PARLEY_API!, token: process.env.PARLEY_TOKEN! },
    'permission',
    { title, toolKind: 'execute', input: `${title} (asked by a test agent)` },
  );
  process.stdout.write(
    answer.outcome === 'cancelled' ? `cancelled: ${answer.reason}\n` : `${answer.outcome} by ${answer.by}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`permission asker: ${(error as Error).message}\n`);
  process.exit(1);
});
