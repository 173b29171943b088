// What the reply guard counts a turn's role API call as: a reply, a report, or a relay.
import { describe, expect, it } from 'vitest';
import type { SendResult } from '../role-api/protocol';
import type { TurnAction } from '../runs/run-manager';
import { turnActionOf, type TurnSent } from './turn-action';

const OWN = 7;
const sent = (threadRowId: number): SendResult => ({ thread: 'w', threadRowId, seq: 1, to: 'bob/researcher' });

describe('turnActionOf', () => {
  const cases: [string, TurnSent, TurnAction][] = [
    ['a reply', { command: 'reply', result: sent(OWN) }, 'replied'],
    ['a held reply', { command: 'reply', result: { ...sent(OWN), held: true, note: 'held' } }, 'replied'],
    ['a send that lands on its own agent conversation', { command: 'send', result: sent(OWN) }, 'replied'],
    ['a send to another agent conversation', { command: 'send', result: sent(OWN + 1) }, 'relayed'],
    [
      'a report to its conversation',
      { command: 'report', result: { reported: 'conversation', id: 3, messageId: 9 } },
      'reported',
    ],
    ['a report to its task', { command: 'report', result: { reported: 'task', id: 3, logId: 9 } }, 'reported'],
    [
      'a report on the agent conversation a peer started',
      { command: 'report', result: { reported: 'thread', ...sent(OWN + 2) } },
      'reported',
    ],
  ];
  it.each(cases)('%s', (_, sent, action) => {
    expect(turnActionOf(OWN, sent)).toBe(action);
  });
});
