// A small command agent for tests at the edges of stop, pause and crashes. It reads
// its turn as JSON and acts on each line of each text or message:
//
//   send PEER/ROLE TEXT   `parley send`
//   reply TEXT            `parley reply`
//   wait                  stays until signalled (SIGTERM ends it)
//   hang                  stays and ignores SIGTERM: only SIGKILL ends it
//
// Its output is every input it was given, one `kind: body` per line. A waiting or
// hanging agent appends its pid to $PIDS_FILE first, so a test can find it (and end
// it afterwards).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AgentSettings } from '../shared/domain';

const SCRIPT = `
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', () => {
  const turn = JSON.parse(input);
  let stay = null;
  for (const i of turn.inputs) {
    if (i.kind === 'notice') continue;
    for (const line of i.body.split('\\n')) {
      const [verb, ...rest] = line.trim().split(' ');
      if (verb === 'send') execFileSync('parley', ['send', '--to', rest[0], rest.slice(1).join(' ')]);
      else if (verb === 'reply') execFileSync('parley', ['reply', rest.join(' ')]);
      else if (verb === 'wait' || verb === 'hang') stay = verb;
    }
  }
  const output = turn.inputs.map((i) => i.kind + ': ' + i.body).join('\\n');
  if (!stay) {
    process.stdout.write(output);
    return;
  }
  if (process.env.PIDS_FILE) fs.appendFileSync(process.env.PIDS_FILE, process.pid + '\\n');
  if (stay === 'hang') process.on('SIGTERM', () => {});
  setInterval(() => {}, 1000);
});
`;

/** Writes the agent into `dir`; returns the role settings that run it. */
export function edgeAgent(dir: string, pidsFile: string): AgentSettings {
  const file = path.join(dir, 'edge-agent.cjs');
  writeFileSync(file, SCRIPT);
  return { adapter: 'command', command: [process.execPath, file], input: 'json', env: { PIDS_FILE: pidsFile } };
}

/** The pids the agent wrote, oldest first. */
export function agentPidsIn(pidsFile: string): number[] {
  try {
    return readFileSync(pidsFile, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Ends every agent the file names, and its group (tests clean up what they left). */
export function killAgentsIn(pidsFile: string): void {
  for (const pid of agentPidsIn(pidsFile)) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}
