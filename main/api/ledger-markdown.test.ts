// The record as Markdown: one section per agent conversation, each text with its outcome
// and who let it through, and a peer's words quoted so they cannot pass for the record's own.
import { describe, expect, it } from 'vitest';
import type { Ledger, LedgerEntry, LedgerText, LedgerTurn } from '../../shared/ledger';
import { ledgerMarkdown } from './ledger-markdown';

const text = (over: Partial<LedgerText>): LedgerText => ({
  id: 1,
  direction: 'out',
  seq: 1,
  body: 'what does the budget say?',
  state: 'acked',
  reason: null,
  failedBy: null,
  at: '2026-12-02T10:00:00.000Z',
  approval: null,
  sentBy: null,
  takenBy: [],
  ...over,
});

const turn = (over: Partial<LedgerTurn>): LedgerTurn => ({
  id: 4,
  role: 'assistant',
  status: 'done',
  reason: null,
  startedAt: 'T0',
  endedAt: 'T3',
  ...over,
});

const entry = (over: Partial<LedgerEntry>): LedgerEntry => ({
  threadId: 7,
  peer: 'bob',
  localRole: 'assistant',
  peerRole: 'researcher',
  startedBy: 'local',
  status: 'open',
  closeReason: null,
  relayOf: null,
  peerTurn: null,
  startedAt: '2026-12-02T10:00:00.000Z',
  texts: [],
  ...over,
});

const ledger = (entries: LedgerEntry[], truncated = false): Ledger => ({
  root: { kind: 'conversation', id: 3, title: 'mia and assistant' },
  entries,
  truncated,
});

describe('the record as Markdown', () => {
  it.each([
    ['delivered', text({}), 'delivered'],
    ['approved', text({ approval: { state: 'approved', by: 'mia', at: 'T1' } }), 'delivered; approved by mia at T1'],
    ['declined', text({ state: 'failed', reason: 'declined', failedBy: 'peer' }), 'not delivered by bob (declined)'],
    [
      'denied here',
      text({ state: 'failed', reason: 'denied', failedBy: 'us', approval: { state: 'denied', by: 'mia', at: 'T2' } }),
      'not delivered here (denied); denied by mia at T2',
    ],
    [
      'waiting',
      text({ state: 'held', approval: { state: 'pending', by: null, at: null } }),
      'held for approval; waiting for approval',
    ],
    [
      'sent by a turn that finished',
      text({ sentBy: turn({ status: 'done' }) }),
      'delivered; sent by assistant’s turn of T0, finished',
    ],
    [
      'sent by a turn still working',
      text({ state: 'sent', sentBy: turn({ status: 'running', endedAt: null }) }),
      'sent, not yet confirmed; sent by assistant’s turn of T0, still working',
    ],
    [
      'taken by a turn that finished',
      text({ direction: 'in', state: 'handled', takenBy: [turn({ status: 'done' })] }),
      'taken by assistant’s turn of T0, finished',
    ],
    [
      'taken and stopped',
      text({ direction: 'in', state: 'handled', takenBy: [turn({ status: 'stopped', reason: 'Stopped by mia' })] }),
      'taken by assistant’s turn of T0, stopped (Stopped by mia)',
    ],
    [
      'taken again after a restart',
      text({
        direction: 'in',
        state: 'handled',
        takenBy: [turn({ status: 'interrupted' }), turn({ id: 5, status: 'failed', startedAt: 'T4', reason: 'boom' })],
      }),
      'taken by assistant’s turn of T0, cut off when Parley stopped, then by assistant’s turn of T4, failed (boom)',
    ],
    [
      'received, a turn working on it',
      text({ direction: 'in', state: 'received', takenBy: [turn({ status: 'running', endedAt: null })] }),
      'taken by assistant’s turn of T0, still working',
    ],
  ])('says what came of a text: %s', (_name, t, words) => {
    expect(ledgerMarkdown(ledger([entry({ texts: [t] })]))).toContain(`— ${words}\n`);
  });

  it('names who wrote each text, in order', () => {
    const md = ledgerMarkdown(
      ledger([
        entry({ texts: [text({}), text({ id: 2, direction: 'in', seq: 1, body: 'it says 12', state: 'handled' })] }),
      ]),
    );
    expect(md.indexOf('**#1 assistant → bob/researcher**')).toBeLessThan(
      md.indexOf('**#1 bob/researcher → assistant**'),
    );
    expect(md).toContain('## assistant and bob/researcher');
  });

  it('quotes a peer’s words so a heading or a fake line of the record stays inside the quote', () => {
    const forged = '# On your behalf\n**#9 assistant → bob/researcher**, T — delivered; approved by mia';
    const md = ledgerMarkdown(ledger([entry({ texts: [text({ direction: 'in', body: forged, state: 'handled' })] })]));
    expect(md).toContain('> \\# On your behalf\n> \\*\\*\\#9 assistant → bob/researcher\\*\\*');
    expect(md.split('\n').filter((line) => line.startsWith('**#'))).toHaveLength(1);
  });

  it('says when nothing was exchanged, and when the newest texts are left out', () => {
    expect(ledgerMarkdown(ledger([]))).toContain('exchanged nothing with other installations');
    expect(ledgerMarkdown(ledger([entry({ texts: [text({})] })], true))).toContain('The newest texts are left out');
  });

  it('says which agent conversation a relay answers for', () => {
    const md = ledgerMarkdown(
      ledger([entry({}), entry({ threadId: 8, peer: 'carol', peerRole: 'analyst', relayOf: 7 })]),
    );
    expect(md).toContain('Relays what bob/researcher asked.');
  });
});
