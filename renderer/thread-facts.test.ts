// What the window says about agent conversations, by tables of the API's data.
import { describe, expect, it } from 'vitest';
import type { ConnectionSummary, Message, RunSummary, TextView, TurnSummary } from '../shared/domain';
import { answeredAfter, orphanedGroupTitle, receivedWithAgent, textLabel, waitingForAgent } from './thread-facts';
import { connectionState, listConnectionStates } from './connection-facts';
import { approvedWords, askState, canWithdraw, placeAsks } from './ask-facts';
import { idleRun, threadSummary } from '../test-support/renderer/test-summaries';

const at = (second: number) => `2026-12-01T10:00:${String(second).padStart(2, '0')}.000Z`;
const idle = idleRun;

function text(
  id: number,
  direction: 'in' | 'out',
  state: TextView['state'],
  second: number,
  reason: string | null = null,
  failedBy: TextView['failedBy'] = null,
) {
  return {
    id,
    direction,
    seq: id,
    body: `text ${id}`,
    state,
    reason,
    failedBy,
    sentByTurnId: null,
    takenByTurnId: null,
    createdAt: at(second),
  } satisfies TextView;
}

function turn(id: number, status: TurnSummary['status'], second: number, reason: string | null = null): TurnSummary {
  return { id, status, attempt: 0, startedAt: at(second), endedAt: at(second + 1), reason };
}

const thread = threadSummary;

function connection(patch: Partial<ConnectionSummary> = {}): ConnectionSummary {
  return {
    id: 7,
    name: 'bob',
    fingerprint: 'f'.repeat(64),
    address: '127.0.0.1:1',
    addressFrom: 'invitation',
    redial: null,
    status: 'active',
    policy: { outgoing: 'send', incoming: 'run' },
    trust: 'answer',
    sandboxRequired: true,
    online: true,
    queue: { used: 0, limit: 100 },
    exposedRoles: [],
    peerRoles: [],
    lastError: null,
    createdAt: at(0),
    dhtKey: null,
    path: 'direct',
    relay: null,
    peerRelays: [],
    ...patch,
  };
}

function message(id: number, second: number, body: string, postedByTurnId: number | null = null): Message {
  const author = { kind: postedByTurnId === null ? ('person' as const) : ('role' as const), id: 1, name: 'assistant' };
  return { id, conversationId: 1, author, body, postedByTurnId, createdAt: at(second) };
}

describe('the turn that took an incoming text', () => {
  const turns = [turn(1, 'done', 2), turn(2, 'stopped', 6, 'Stopped by bob'), turn(3, 'done', 9)];
  it('labels a text a stop dropped, and who stopped it', () => {
    const label = textLabel(text(2, 'in', 'handled', 3), 'alice/assistant', { turn: turns[1] });
    expect(label).toMatchObject({ label: 'Stopped', tone: 'warn' });
    expect(label.note).toBe('Dropped: stopped by bob before the agent finished; it will not be retried.');
    expect(textLabel(text(1, 'in', 'handled', 1), 'alice/assistant', { turn: turns[0] }).label).toBe(
      'Read by the agent',
    );
  });

  it('says delivered, not more, for an acknowledged text the peer has said nothing of', () => {
    expect(textLabel(text(1, 'out', 'acked', 1), 'bob/researcher')).toMatchObject({ label: 'Delivered' });
    // What the peer said of an earlier text is not this one's.
    const earlier = { state: 'working', seq: 1, at: at(2) } as const;
    expect(textLabel(text(2, 'out', 'acked', 3), 'bob/researcher', { peerTurn: earlier }).label).toBe('Delivered');
  });

  it.each([
    ['working', 'Working', 'accent'],
    ['stopped', 'Stopped by bob', 'warn'],
    ['failed', 'Failed at bob', 'bad'],
    ['ended', 'No answer', 'neutral'],
    ['relayed', 'Waiting on another peer', 'accent'],
  ] as const)('labels a delivered text by what the peer said of its turn: %s', (state, label, tone) => {
    const peerTurn = { state, seq: 1, at: at(2) };
    expect(textLabel(text(1, 'out', 'acked', 1), 'bob/researcher', { peerTurn })).toMatchObject({ label, tone });
    // Once an answer came after it, what the peer said of the turn is old news.
    expect(textLabel(text(1, 'out', 'acked', 1), 'bob/researcher', { peerTurn, answered: true }).label).toBe(
      'Delivered',
    );
  });

  it('knows an outgoing text was answered when a text from the peer came after it', () => {
    const texts = [text(1, 'out', 'acked', 1), text(2, 'in', 'handled', 3), text(3, 'out', 'acked', 5)];
    expect(texts.map((t) => answeredAfter(t, texts))).toEqual([true, false, false]);
  });

  it('says which side failed a text', () => {
    expect(textLabel(text(1, 'out', 'failed', 1, 'paused', 'peer'), 'bob/researcher').help).toBe(
      'It will not be delivered: bob refused it.',
    );
    expect(textLabel(text(1, 'out', 'failed', 1, 'paused', 'us'), 'bob/researcher').help).toBe(
      'It will not be delivered: it failed here.',
    );
    expect(textLabel(text(1, 'out', 'failed', 1, 'paused'), 'bob/researcher').help).toBe('It will not be delivered.');
  });
});

describe('what waits for the agent', () => {
  const running = (pending: number): RunSummary => ({ ...idle, state: 'running', pending });
  it.each([
    ['idle: every received text waits', idle, 2, 2],
    ['working on the one it got: none waits', running(0), 1, 0],
    ['working, and one came meanwhile', running(1), 2, 1],
    ['pending notices are not texts', running(3), 1, 1],
  ])('%s', (_, run, received, waiting) => {
    const t = thread({ run, counts: { ...thread().counts, received } });
    expect(waitingForAgent(t)).toBe(waiting);
  });

  it('marks the oldest received texts as the ones the working agent has', () => {
    const t = thread({ run: { ...idle, state: 'running', pending: 1 }, counts: { ...thread().counts, received: 2 } });
    const texts = [text(2, 'in', 'received', 2), text(1, 'in', 'received', 1), text(3, 'out', 'acked', 0)];
    expect([...receivedWithAgent(texts, t)]).toEqual([1]);
    expect([...receivedWithAgent(texts, thread())]).toEqual([]);
  });
});

describe('connection states', () => {
  it.each([
    [connection(), null],
    [connection({ online: false }), 'offline'],
    [connection({ status: 'paused' }), 'paused'],
    [connection({ status: 'paused', online: false }), 'paused'],
    [connection({ status: 'revoked', online: false }), 'revoked'],
    [undefined, null],
  ])('%# → %s', (given, expected) => {
    expect(connectionState(given)).toBe(expected);
  });

  it('marks a list by the connections of its open threads, and by revoked ones', () => {
    const connections = new Map([
      [7, connection({ status: 'paused' })],
      [8, connection({ id: 8, name: 'carol', online: false })],
      [9, connection({ id: 9, name: 'dave', status: 'revoked' })],
    ]);
    const threads = [
      thread({ id: 1 }),
      thread({ id: 2, connection: { id: 8, name: 'carol', fingerprint: 'c'.repeat(64) }, status: 'closed' }),
      thread({ id: 3, connection: { id: 9, name: 'dave', fingerprint: 'd'.repeat(64) }, status: 'closed' }),
    ];
    expect(listConnectionStates(threads, connections)).toEqual([
      { state: 'paused', peers: ['bob'] },
      { state: 'revoked', peers: ['dave'] },
    ]);
  });
});

describe('orphaned groups', () => {
  it.each([
    ['conversation', 'alice’s conversation with assistant', 'Deleted: alice’s conversation with assistant'],
    ['task', 'Plan the trip', 'Deleted task: Plan the trip'],
  ] as const)('a %s whose title was kept', (kind, kept, title) => {
    const group = [
      thread({ id: 2, createdAt: at(5), root: { kind, id: 4, gone: true, title: kept } }),
      thread({ id: 1, createdAt: at(3), root: { kind, id: 4, gone: true, title: kept } }),
    ];
    expect(orphanedGroupTitle(group).title).toBe(title);
  });

  it.each([
    ['conversation', 'Deleted conversation with assistant'],
    ['task', 'Deleted task for assistant'],
    ['thread', 'Closed agent conversation of assistant'],
  ] as const)('a %s deleted before titles were kept', (kind, title) => {
    const group = [
      thread({ id: 2, createdAt: at(5), root: { kind, id: 4, gone: true, title: null } }),
      thread({ id: 1, createdAt: at(3), root: { kind, id: 4, gone: true, title: null } }),
    ];
    expect(orphanedGroupTitle(group).title).toBe(title);
    expect(orphanedGroupTitle(group).since).toMatch(/^first ask /);
  });
});

describe('placing asks by the turns that made them', () => {
  const ask = (textId: number, sentByTurnId: number, second: number) => ({
    threadId: 1,
    textId,
    sentByTurnId,
    createdAt: at(second),
  });

  it('puts each ask under the last line its turn posted, whatever the line says', () => {
    const messages = [
      message(1, 1, 'ask bob for numbers'),
      message(2, 3, 'on it', 10),
      message(3, 5, 'here is a follow-up', 11),
      message(4, 6, 'done', 10),
    ];
    const { under, alone } = placeAsks(messages, [ask(7, 10, 2), ask(8, 11, 4), ask(9, 10, 5)]);
    expect([...under.entries()]).toEqual([
      [
        4,
        [
          { threadId: 1, textId: 7 },
          { threadId: 1, textId: 9 },
        ],
      ],
      [3, [{ threadId: 1, textId: 8 }]],
    ]);
    expect(alone).toEqual([]);
  });

  it('gives a turn that posted no line a row of its own, where its first ask was made', () => {
    const messages = [message(1, 1, 'ask bob'), message(2, 9, 'later', 13)];
    const { under, alone } = placeAsks(messages, [ask(5, 12, 3), ask(6, 12, 4)]);
    expect(under.size).toBe(0);
    expect(alone).toEqual([
      {
        turnId: 12,
        at: at(3),
        links: [
          { threadId: 1, textId: 5 },
          { threadId: 1, textId: 6 },
        ],
      },
    ]);
  });
});

describe("an ask's state", () => {
  const delivered = text(1, 'out', 'acked', 2);
  it.each([
    [
      'answered',
      delivered,
      [delivered, text(2, 'in', 'handled', 3)],
      thread(),
      connection(),
      true,
      'Answered',
      undefined,
    ],
    [
      'delivered, nothing back',
      delivered,
      [delivered],
      thread(),
      connection(),
      true,
      'Delivered; no answer yet',
      undefined,
    ],
    [
      'delivered, then paused here (owner)',
      delivered,
      [delivered],
      thread(),
      connection({ status: 'paused' }),
      true,
      'Delivered; no answer can come while you pause the connection to bob',
      'unpause',
    ],
    [
      'delivered, then paused here (member)',
      delivered,
      [delivered],
      thread(),
      connection({ status: 'paused' }),
      false,
      'Delivered; no answer can come while the connection to bob is paused here',
      undefined,
    ],
    [
      'refused by bob while he paused',
      text(1, 'out', 'failed', 2, 'paused', 'peer'),
      [],
      thread(),
      connection(),
      true,
      'Not delivered: bob paused the connection',
      undefined,
    ],
    [
      'refused by bob, and paused here now too: the fix here would not help',
      text(1, 'out', 'failed', 2, 'paused', 'peer'),
      [],
      thread(),
      connection({ status: 'paused' }),
      true,
      'Not delivered: bob paused the connection',
      undefined,
    ],
    [
      'failed by a pause here, still paused (owner)',
      text(1, 'out', 'failed', 2, 'paused', 'us'),
      [],
      thread(),
      connection({ status: 'paused' }),
      true,
      'Not delivered: you paused the connection to bob',
      'unpause',
    ],
    [
      'failed by a pause here, still paused (member)',
      text(1, 'out', 'failed', 2, 'paused', 'us'),
      [],
      thread(),
      connection({ status: 'paused' }),
      false,
      'Not delivered: the connection to bob is paused here; an owner can unpause it',
      undefined,
    ],
    [
      'failed by a pause here, unpaused since',
      text(1, 'out', 'failed', 2, 'paused', 'us'),
      [],
      thread(),
      connection(),
      true,
      'Not delivered: the connection to bob was paused here; ask again',
      undefined,
    ],
    [
      'paused, from before it was kept which side',
      text(1, 'out', 'failed', 2, 'paused'),
      [],
      thread(),
      connection(),
      true,
      'Not delivered: the connection was paused (by bob, or here while it waited)',
      undefined,
    ],
    [
      'paused, from before it was kept which side, paused here now',
      text(1, 'out', 'failed', 2, 'paused'),
      [],
      thread(),
      connection({ status: 'paused' }),
      true,
      'Not delivered: the connection was paused (by bob, or here while it waited)',
      'unpause',
    ],
    [
      'working at bob',
      delivered,
      [delivered],
      thread({ peerTurn: { state: 'working', seq: 1, at: at(3) } }),
      connection(),
      true,
      'Working: bob’s agent has it',
      undefined,
    ],
    [
      'working at bob, then answered',
      delivered,
      [delivered, text(2, 'in', 'received', 9)],
      thread({ peerTurn: { state: 'working', seq: 1, at: at(3) } }),
      connection(),
      true,
      'Answered',
      undefined,
    ],
    [
      'a turn that took an earlier text says nothing of this one',
      text(2, 'out', 'acked', 5),
      [delivered, text(2, 'out', 'acked', 5)],
      thread({ peerTurn: { state: 'stopped', seq: 1, at: at(3) } }),
      connection(),
      true,
      'Delivered; no answer yet',
      undefined,
    ],
    [
      'stopped by the peer',
      delivered,
      [delivered],
      thread({ peerTurn: { state: 'stopped', seq: 1, at: at(3) } }),
      connection(),
      true,
      'Stopped by bob; no answer will come',
      undefined,
    ],
    [
      'failed at the peer',
      delivered,
      [delivered],
      thread({ peerTurn: { state: 'failed', seq: 1, at: at(3) } }),
      connection(),
      true,
      'bob’s agent failed on it; no answer will come',
      undefined,
    ],
    [
      'ended at the peer without an answer',
      delivered,
      [delivered],
      thread({ peerTurn: { state: 'ended', seq: 1, at: at(3) } }),
      connection(),
      true,
      'bob’s agent finished without answering',
      undefined,
    ],
    [
      'bob relayed it and waits on carol',
      delivered,
      [delivered],
      thread({ peerTurn: { state: 'relayed', seq: 1, at: at(3), waitingOn: ['carol/researcher'] } }),
      connection(),
      true,
      'bob is waiting on carol/researcher',
      undefined,
    ],
    [
      'bob relayed it to three',
      delivered,
      [delivered],
      thread({
        peerTurn: { state: 'relayed', seq: 1, at: at(3), waitingOn: ['carol/researcher', 'dave/analyst', 'erin/x'] },
      }),
      connection(),
      true,
      'bob is waiting on carol/researcher, dave/analyst and 1 more',
      undefined,
    ],
    [
      'working at bob, paused here since (owner)',
      delivered,
      [delivered],
      thread({ peerTurn: { state: 'working', seq: 1, at: at(3) } }),
      connection({ status: 'paused' }),
      true,
      'Delivered; no answer can come while you pause the connection to bob',
      'unpause',
    ],
    [
      'stopped by bob, paused here since: a stop stays a stop (unpausing brings nothing)',
      delivered,
      [delivered],
      thread({ peerTurn: { state: 'stopped', seq: 1, at: at(3) } }),
      connection({ status: 'paused' }),
      true,
      'Stopped by bob; no answer will come',
      undefined,
    ],
    [
      'failed at bob, paused here since',
      delivered,
      [delivered],
      thread({ peerTurn: { state: 'failed', seq: 1, at: at(3) } }),
      connection({ status: 'paused' }),
      true,
      'bob’s agent failed on it; no answer will come',
      undefined,
    ],
    [
      'declined by a person at bob',
      text(1, 'out', 'failed', 2, 'declined', 'peer'),
      [],
      thread(),
      connection(),
      true,
      'bob declined',
      undefined,
    ],
    [
      'withdrawn here, bob has confirmed it',
      delivered,
      [delivered],
      thread({
        withdrawn: { seq: 1, by: 'alice', at: at(4), told: true },
        peerTurn: { state: 'stopped', seq: 1, at: at(5) },
      }),
      connection(),
      true,
      'Withdrawn by alice; bob stopped working on it',
      undefined,
    ],
    [
      'withdrawn here, not confirmed yet',
      delivered,
      [delivered],
      thread({ withdrawn: { seq: 1, by: 'alice', at: at(4), told: false } }),
      connection({ online: false }),
      true,
      'Withdrawn by alice; bob has not confirmed it yet',
      undefined,
    ],
    [
      'a later text continues a withdrawn agent conversation',
      text(2, 'out', 'acked', 5),
      [delivered, text(2, 'out', 'acked', 5)],
      thread({ withdrawn: { seq: 1, by: 'alice', at: at(4), told: true } }),
      connection(),
      true,
      'Delivered; no answer yet',
      undefined,
    ],
    [
      'withdrawn before bob confirmed it (queued, held or on the wire)',
      text(1, 'out', 'failed', 2, 'withdrawn', 'us'),
      [],
      thread({ withdrawn: { seq: 1, by: 'alice', at: at(4), told: true } }),
      connection(),
      true,
      'Withdrawn by alice before bob confirmed it',
      undefined,
    ],
    [
      'working at bob, who is offline now',
      delivered,
      [delivered],
      thread({ peerTurn: { state: 'working', seq: 1, at: at(3) } }),
      connection({ online: false }),
      true,
      'Working: bob’s agent has it (bob is offline now)',
      undefined,
    ],
    [
      'revoked by bob',
      text(1, 'out', 'failed', 2, 'revoke', 'peer'),
      [],
      thread({ status: 'closed', closeReason: 'revoked by bob' }),
      connection({ status: 'revoked' }),
      true,
      'Not delivered: bob revoked the connection',
      undefined,
    ],
    [
      'revoked here',
      text(1, 'out', 'failed', 2, 'revoke', 'us'),
      [],
      thread({ status: 'closed', closeReason: 'revoked by alice' }),
      connection({ status: 'revoked' }),
      true,
      'Not delivered: the connection to bob was revoked here',
      undefined,
    ],
    [
      'revoked',
      text(1, 'out', 'failed', 2, 'revoke'),
      [],
      thread({ status: 'closed', closeReason: 'revoked by bob' }),
      connection({ status: 'revoked' }),
      true,
      'Not delivered: the connection to bob was revoked by bob',
      undefined,
    ],
    [
      'queued while offline',
      text(1, 'out', 'queued', 2),
      [],
      thread(),
      connection({ online: false }),
      true,
      'Waiting to go out: bob is offline',
      undefined,
    ],
    [
      'closed without an answer',
      delivered,
      [delivered],
      thread({ status: 'closed', closeReason: 'root deleted' }),
      connection(),
      true,
      'Closed: root deleted, with no answer',
      undefined,
    ],
    [
      'the role is not exposed',
      text(1, 'out', 'failed', 2, 'role'),
      [],
      thread(),
      connection(),
      true,
      'Not delivered: bob does not let assistant ask researcher',
      undefined,
    ],
  ] as const)('%s', (_, given, texts, t, c, isOwner, words, fix) => {
    const state = askState(given, texts, t, c, isOwner);
    expect(state.words).toBe(words);
    expect(state.fix).toBe(fix);
  });

  it.each([
    [
      'held, and the person may approve it',
      text(1, 'out', 'held', 2),
      true,
      'Held for your approval before it goes to bob',
      'approve',
    ],
    [
      'held, for someone else to approve',
      text(1, 'out', 'held', 2),
      false,
      'Held: waiting for approval before it goes to bob',
      undefined,
    ],
    ['denied', text(1, 'out', 'failed', 2, 'denied'), true, 'Not sent: it was denied', undefined],
    [
      'denied, by someone named',
      { ...text(1, 'out', 'failed', 2, 'denied'), deniedBy: 'alice' },
      true,
      'Denied by alice: not sent',
      undefined,
    ],
  ] as const)('%s', (_, given, canApprove, words, fix) => {
    const state = askState(given, [given], thread(), connection(), false, canApprove);
    expect(state.words).toBe(words);
    expect(state.fix).toBe(fix);
  });
});

describe('texts that wait for approval', () => {
  it.each([
    ['an outgoing text held', text(1, 'out', 'held', 1), 'Held', 'Waiting for a person’s approval before it goes out.'],
    [
      'an incoming text held',
      text(1, 'in', 'held', 1),
      'Held',
      'Waiting for a person’s approval before the agent takes it.',
    ],
    [
      'an outgoing text denied',
      text(1, 'out', 'failed', 1, 'denied'),
      'Denied',
      'A person denied it, so it was never sent.',
    ],
    [
      'an incoming text denied',
      text(1, 'in', 'handled', 1, 'denied'),
      'Denied',
      'A person denied it: the agent never got it.',
    ],
    [
      'an outgoing text denied by someone named',
      { ...text(1, 'out', 'failed', 1, 'denied'), deniedBy: 'alice' },
      'Denied by alice',
      'alice denied it, so it was never sent.',
    ],
    [
      'an incoming text denied by someone named',
      { ...text(1, 'in', 'handled', 1, 'denied'), deniedBy: 'bob' },
      'Denied by bob',
      'bob denied it: the agent never got it.',
    ],
    [
      'an incoming text held when the connection was revoked',
      text(1, 'in', 'handled', 1, 'revoke'),
      'Dropped',
      'It waited for approval when its agent conversation or connection ended; the agent never got it.',
    ],
  ] as const)('%s', (_, given, label, help) => {
    expect(textLabel(given, 'bob/researcher')).toMatchObject({ label, help });
  });

  it.each([
    [
      'approved by a person, and gone',
      { ...text(1, 'out', 'acked', 1), approvedBy: { name: 'alice', always: false } },
      'Approved by alice',
    ],
    [
      'let through by a rule',
      { ...text(1, 'out', 'sent', 1), approvedBy: { name: 'alice', always: true } },
      'Always allowed by alice',
    ],
    ['never held', text(1, 'out', 'acked', 1), undefined],
    [
      'refused at the peer after it was approved: its line says why instead',
      { ...text(1, 'out', 'failed', 1, 'queue', 'peer'), approvedBy: { name: 'alice', always: false } },
      undefined,
    ],
  ] as const)('who let a held ask through: %s', (_, given, words) => {
    expect(approvedWords(given)).toBe(words);
  });

  it('says why a dropped text never reached the agent', () => {
    expect(textLabel(text(1, 'in', 'handled', 1, 'closed'), 'bob/researcher').note).toBe(
      'Never given to the agent: its agent conversation closed while it waited.',
    );
  });
});

describe('canWithdraw', () => {
  it.each([
    ['an ask on its way or delivered, no answer', thread({ lastText: text(1, 'out', 'acked', 2) }), true],
    ['one still queued or held here', thread({ lastText: text(1, 'out', 'held', 2) }), true],
    ['answered: the newest text is the peer’s', thread({ lastText: text(2, 'in', 'handled', 3) }), false],
    ['failed (declined, not delivered)', thread({ lastText: text(1, 'out', 'failed', 2, 'declined') }), false],
    [
      'withdrawn already',
      thread({ lastText: text(1, 'out', 'acked', 2), withdrawn: { seq: 1, by: 'alice', at: at(3), told: false } }),
      false,
    ],
    [
      'a later ask after a withdrawal',
      thread({ lastText: text(2, 'out', 'acked', 4), withdrawn: { seq: 1, by: 'alice', at: at(3), told: true } }),
      true,
    ],
    [
      'stopped there: nothing works on it',
      thread({ lastText: text(1, 'out', 'acked', 2), peerTurn: { state: 'stopped', seq: 1, at: at(3) } }),
      false,
    ],
    [
      'still working there, or relayed',
      thread({ lastText: text(1, 'out', 'acked', 2), peerTurn: { state: 'working', seq: 1, at: at(3) } }),
      true,
    ],
    [
      'stopped on an earlier text, not the newest',
      thread({ lastText: text(2, 'out', 'acked', 4), peerTurn: { state: 'stopped', seq: 1, at: at(3) } }),
      true,
    ],
    ['started by the peer', thread({ startedBy: 'peer', lastText: text(1, 'out', 'acked', 2) }), false],
    ['closed', thread({ status: 'closed', lastText: text(1, 'out', 'acked', 2) }), false],
  ])('%s', (_about, summary, expected) => {
    expect(canWithdraw(summary)).toBe(expected);
  });
});
