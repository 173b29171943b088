// What the ACP worker tells Parley: AcpEvent JSON lines on its stdout, live lines among them.
import type { AcpEvent } from './acp';

export const emit = (event: AcpEvent) => process.stdout.write(JSON.stringify(event) + '\n');
export const live = (text: string) => emit({ type: 'live', text });

/** One line, not too long (as cli-agent's preview, kept here so the worker stays small). */
export function preview(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
