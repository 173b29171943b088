// A command agent for tests that asks for a tool the way the acp worker does on its
// agent's behalf: through the role API's `permission` call, with its turn's token, and
// waits for the answer. It reads the turn's inputs on stdin; the last line is the tool's
// title. It prints what it was told: "approved by NAME", "denied by NAME" (with ": REASON"
// when Parley denied it without asking) or "cancelled: REASON".
//
// "N times, K wait: TITLE" asks N times, 50 at once. Once all but K are answered it reports
// (`parley report`) how those were answered, then waits for the K and prints theirs.
import { callRoleApi } from '../main/role-api/client';

type Answer = { outcome: string; by?: string; reason?: string };

const said = (answer: Answer) =>
  answer.outcome === 'cancelled'
    ? `cancelled: ${answer.reason}`
    : `${answer.outcome} by ${answer.by}${answer.reason ? `: ${answer.reason}` : ''}`;

/** "3 × said", one line per distinct answer, most frequent first. */
function tally(answers: readonly Answer[]): string {
  const counts = new Map<string, number>();
  for (const answer of answers) counts.set(said(answer), (counts.get(said(answer)) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([line, count]) => `${count} × ${line}`)
    .join('\n');
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const lines = Buffer.concat(chunks).toString('utf8').trim().split('\n');
  const title = lines
    .at(-1)!
    .replace(/^[^:]+: /, '')
    .trim();
  const api = { socketPath: process.env.PARLEY_API!, token: process.env.PARLEY_TOKEN! };
  const ask = (what: string) =>
    callRoleApi<Answer>(api, 'permission', {
      title: what,
      toolKind: 'execute',
      input: `${what} (asked by a test agent)`,
    });
  const many = /^(\d+) times, (\d+) wait: (.+)$/.exec(title);
  if (!many) {
    process.stdout.write(`${said(await ask(title))}\n`);
    return;
  }
  const [count, waiting] = [Number(many[1]), Number(many[2])];
  const answered: Answer[] = [];
  let reported: Promise<unknown> | undefined;
  // At most 50 at once: a socket's listen backlog is no part of what is tested.
  let next = 0;
  const answers: Answer[] = [];
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const answer = await ask(`${many[3]} #${i + 1}`);
      answers[i] = answer;
      answered.push(answer);
      if (answered.length === count - waiting)
        reported = callRoleApi(api, 'report', { text: `answered at once:\n${tally(answered)}` });
    }
  };
  await Promise.all(Array.from({ length: 50 }, worker));
  await reported;
  process.stdout.write(`${tally(answers)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`permission asker: ${(error as Error).message}\n`);
  process.exit(1);
});
