// Parley's scripted agent: a small deterministic rule agent that runs as a real
// process and acts only through the real `parley` CLI, like any other agent. It
// reads one turn as JSON on stdin and writes JSON lines on stdout.
import type { ScriptedEvent, ScriptedTurn } from './scripted';
import { readTurn } from './turn-input';

function emit(event: ScriptedEvent): void {
  process.stdout.write(JSON.stringify(event) + '\n');
}

/**
 * Runs `parley ARGS`; resolves to its stdout, or throws with its message. Node's modules
 * load when first needed (a few milliseconds each): a turn that only answers starts faster.
 */
async function parley(args: string[]): Promise<string> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve, reject) => {
    execFile('parley', args, { env: process.env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        const message = stderr.trim().replace(/^parley: /, '') || error.message;
        reject(new Error(message));
      } else resolve(stdout);
    });
  });
}

/** What `parley send`/`reply` printed says the text waits for a person. */
const held = (stdout: string): string => {
  try {
    return (JSON.parse(stdout) as { held?: boolean }).held ? ' (held for approval)' : '';
  } catch {
    return '';
  }
};

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

const ASK = /^ask\s+([^\s/]+\/[^\s:]+)\s*:\s*([\s\S]+)$/i;
// An ask whose line never names the peer ("quietly": "sent it"), or that posts no line at all ("silently").
const QUIET_ASK = /^(quietly|silently)\s+ask\s+([^\s/]+\/[^\s:]+)\s*:\s*([\s\S]+)$/i;
const SLEEP = /^sleep\s+(\d+(?:\.\d+)?)$/i;
// What Parley tells an agent that people already see in Parley's own words: how its previous
// turn ended (stopped, withdrawn, cut off by a restart), and a person's word on one of its
// held texts (approved: "Approved by alice" on the ask's line; denied here: "Denied by alice";
// declined at the peer: "bob declined"). The agent does not repeat those as if they were its
// reply; other notices (a text the peer refused, a connection paused) it passes on.
const SAID_BY_PARLEY = [
  /\byour previous turn (finished|was working)\b/,
  /^Your text #\d+ to \S+ was (approved by |denied by |rejected \(declined\))/,
];

async function handle(turn: ScriptedTurn, input: ScriptedTurn['inputs'][number]): Promise<string> {
  if (input.kind === 'notice')
    return SAID_BY_PARLEY.some((said) => said.test(input.body)) ? '' : `notice: ${input.body}`;
  const text = input.body.trim();
  const ask = ASK.exec(text);
  const pause = SLEEP.exec(text);
  const context = turn.context;
  const quiet = QUIET_ASK.exec(text);
  try {
    if (context.kind !== 'thread') {
      if (quiet) {
        await parley(['send', '--to', quiet[2]!, quiet[3]!.trim()]);
        return quiet[1]!.toLowerCase() === 'quietly' ? 'sent it' : '';
      }
      if (ask) {
        const sent = await parley(['send', '--to', ask[1]!, ask[2]!.trim()]);
        return `asked ${ask[1]}${held(sent)}`;
      }
      if (pause) {
        await sleep(Number(pause[1]));
        return `slept ${pause[1]}`;
      }
      return `echo: ${text}`;
    }
    if (context.peerStarted) {
      if (ask) {
        // A relay: the root is this agent conversation, so the answer comes back here.
        const sent = await parley(['send', '--to', ask[1]!, ask[2]!.trim()]);
        return `asked ${ask[1]}${held(sent)}`;
      }
      let answer = `answer from ${turn.role}: ${text}`;
      if (pause) {
        await sleep(Number(pause[1]));
        answer = `answer from ${turn.role}: slept ${pause[1]}`;
      }
      const sent = await parley(['reply', answer]);
      return `replied${held(sent)}: ${answer}`;
    }
    // An answer came back in an agent conversation rooted elsewhere: pass it on.
    const report = `${input.from} says: ${text}`;
    await parley(['report', report]);
    return `reported: ${report}`;
  } catch (error) {
    return `error: ${(error as Error).message}`;
  }
}

async function main(): Promise<void> {
  const turn = await readTurn<ScriptedTurn>();
  const session = turn.session ?? `scripted-${(await import('node:crypto')).randomBytes(8).toString('hex')}`;
  emit({ type: 'session', session });
  const lines: string[] = [];
  for (const input of turn.inputs) lines.push(await handle(turn, input));
  emit({ type: 'result', output: lines.filter((line) => line !== '').join('\n') });
}

main().catch((error: unknown) => {
  process.stderr.write(`scripted agent: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
