// Agents without a system prompt of their own for Parley (Codex's stdin, an ACP session)
// get the role owner's instructions with the turn: in a session's first turn, and again
// whenever they change. What each session was told is kept as a digest in the data
// folder's private `sessions` folder, beside the openai-compatible histories.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const digest = (text: string) => createHash('sha256').update(text).digest('hex');

/** Which instructions each session was given; `prefix` keeps each adapter's sessions apart. */
export function instructionsRecord(defaultCwd: string, prefix: 'codex' | 'acp') {
  const folder = path.join(path.dirname(path.resolve(defaultCwd)), 'sessions');
  // An agent's session ID is the agent's to choose: only a safe file name is made of it.
  const file = (session: string) =>
    path.join(folder, `${prefix}-${session.replace(/[^A-Za-z0-9_.-]/g, '_')}.instructions`);
  return {
    read(session: string): string | null {
      try {
        return readFileSync(file(session), 'utf8').trim();
      } catch {
        return null;
      }
    },
    write(session: string, instructions: string): void {
      try {
        mkdirSync(folder, { recursive: true, mode: 0o700 });
        writeFileSync(file(session), digest(instructions), { mode: 0o600 });
      } catch {
        // Not fatal: the next turn gives the instructions again.
      }
    },
  };
}

/**
 * What a continued session hears of the owner's instructions, given the digest of what it
 * was told before (null when unknown): nothing when it has them already, a withdrawal when
 * they were removed, else the instructions.
 */
export function instructionsForContinued(before: string | null, instructions: string): string | undefined {
  if (before === digest(instructions)) return undefined;
  if (!instructions && before !== null && before !== digest('')) return 'None: the earlier ones no longer apply.';
  return instructions;
}
