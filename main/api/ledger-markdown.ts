// The record of a conversation or a task (DESIGN §12.8) as Markdown, for a person to keep
// or pass on: one section per agent conversation, each text with who wrote it, what came
// of it, and who let it through. A peer's words are quoted, so nothing in them can pass
// for a heading or a line of the record.
import { textOutcome, type Ledger, type LedgerEntry } from '../../shared/ledger';

/** Each line of a text as a quote, so a peer's Markdown cannot become the record's own. */
function quoted(body: string): string {
  return body
    .split('\n')
    .map((line) => `> ${line.replace(/[\\`*_[\]<>#|]/g, (c) => `\\${c}`)}`)
    .join('\n');
}

function entryMarkdown(entry: LedgerEntry, ledger: Ledger): string {
  const peerRole = `${entry.peer}/${entry.peerRole}`;
  const lines = [
    `## ${entry.localRole} and ${peerRole}`,
    '',
    `Started by ${entry.startedBy === 'local' ? entry.localRole : peerRole} at ${entry.startedAt}; ${
      entry.status === 'open' ? 'open' : `closed${entry.closeReason ? ` (${entry.closeReason})` : ''}`
    }.`,
  ];
  if (entry.relayOf !== null) {
    const of = ledger.entries.find((other) => other.threadId === entry.relayOf);
    if (of) lines.push(`Relays what ${of.peer}/${of.peerRole} asked.`);
  }
  if (entry.peerTurn) lines.push(`${entry.peer} says its turn on the last text: ${entry.peerTurn}.`);
  for (const text of entry.texts) {
    const from = text.direction === 'out' ? `${entry.localRole} → ${peerRole}` : `${peerRole} → ${entry.localRole}`;
    lines.push('', `**#${text.seq} ${from}**, ${text.at} — ${textOutcome(text, entry)}`, '', quoted(text.body));
  }
  if (entry.texts.length === 0) lines.push('', '_No texts._');
  return lines.join('\n');
}

export function ledgerMarkdown(ledger: Ledger): string {
  const kind = ledger.root.kind === 'conversation' ? 'Conversation' : 'Task';
  const head = [`# On your behalf: ${kind.toLowerCase()} “${ledger.root.title}”`, ''];
  if (ledger.entries.length === 0)
    return [...head, `${kind} ${ledger.root.title}: its roles exchanged nothing with other installations.`, ''].join(
      '\n',
    );
  head.push(
    `What the roles of this ${kind.toLowerCase()} said to the roles of other installations, and heard from them.`,
  );
  const body = ledger.entries.map((entry) => entryMarkdown(entry, ledger));
  const tail = ledger.truncated ? ['', '_The newest texts are left out: the record is longer than one export._'] : [];
  return [...head, '', body.join('\n\n'), ...tail, ''].join('\n');
}
