// The record of a root (DESIGN §12.8) as the store reads it: the agent conversations rooted
// there and, through a local relay, in them; each text with the turn that sent it and every
// turn that took it, from the links kept (`texts.sent_by_turn`, `inputs.turn_id`).
import { describe, expect, it } from 'vitest';
import { scratchDatabase } from '../../../test-support/scratch-database';
import type { Db } from '../database';
import { insertConnection } from './connections';
import { insertConversation } from './conversations';
import { readLedger } from './ledger';
import { insertPerson } from './people';
import { insertRole } from './roles';
import { endTurn, ensureRun, insertTurn } from './runs';
import { insertText, insertThread } from './threads';

describe('the record of a conversation', () => {
  let db: Db;
  scratchDatabase('ledger', (opened) => (db = opened));

  it('names the turn that sent each text and each turn that took one, through a local relay', () => {
    const person = insertPerson(db, 'alice', 'owner');
    const role = insertRole(db, 'assistant', '', { adapter: 'scripted' });
    const conversation = insertConversation(db, person.id, role.id);
    const bob = insertConnection(db, 'ff'.repeat(32), 'PEM', 'bob', '127.0.0.1:4100', 'invitation');
    const carol = insertConnection(db, 'ee'.repeat(32), 'PEM', 'carol', '127.0.0.1:4101', 'invitation');
    const thread = (connectionId: number, wire: string, rootKind: 'conversation' | 'thread', rootId: number) =>
      insertThread(db, {
        connectionId,
        wireId: wire.repeat(22),
        localRoleId: role.id,
        localRole: 'assistant',
        peerRole: 'researcher',
        rootKind,
        rootId,
        startedBy: 'local',
      });
    const toBob = thread(bob.id, 'A', 'conversation', conversation.id);
    // The turn that took bob's answer asked carol before passing it on: a relay rooted in it.
    const toCarol = thread(carol.id, 'B', 'thread', toBob.id);
    const unrelated = thread(carol.id, 'C', 'conversation', conversation.id + 1);

    const chat = ensureRun(db, { kind: 'conversation', id: conversation.id }, role.id);
    const onAnswer = ensureRun(db, { kind: 'thread', id: toBob.id }, role.id);
    const asking = insertTurn(db, chat.id, 0, 'h1');
    endTurn(db, asking, 'done', 'asked', null);
    const cut = insertTurn(db, onAnswer.id, 0, 'h2');
    endTurn(db, cut, 'interrupted', null, 'Parley stopped while this turn was working');
    const rerun = insertTurn(db, onAnswer.id, 1, 'h3');
    endTurn(db, rerun, 'stopped', null, 'Stopped by alice');

    const question = insertText(db, toBob.id, 'out', 1, 'numbers?', 'acked', asking);
    const answer = insertText(db, toBob.id, 'in', 1, 'twelve', 'handled');
    const relayed = insertText(db, toCarol.id, 'out', 1, 'is twelve right?', 'sent', rerun);
    const unlinked = insertText(db, toBob.id, 'out', 2, 'sent before links were kept', 'acked');
    insertText(db, unrelated.id, 'out', 1, 'elsewhere', 'acked', asking);
    const take = db.prepare(
      "INSERT INTO inputs (run_id, kind, body, author_name, text_id, state, turn_id) VALUES (?, 'text', 'twelve', 'bob', ?, 'handled', ?)",
    );
    take.run(onAnswer.id, answer, cut);
    take.run(onAnswer.id, answer, rerun);

    const ledger = readLedger(
      db,
      { kind: 'conversation', id: conversation.id, title: 'alice and assistant' },
      (r) => r,
    );
    expect(ledger.entries.map((e) => [e.threadId, e.peer, e.relayOf])).toEqual([
      [toBob.id, 'bob', null],
      [toCarol.id, 'carol', toBob.id],
    ]);
    const texts = new Map(ledger.entries.flatMap((e) => e.texts).map((t) => [t.id, t]));
    expect(texts.get(question)).toMatchObject({
      sentBy: { id: asking, role: 'assistant', status: 'done', reason: null },
      takenBy: [],
    });
    expect(texts.get(answer)!.sentBy).toBeNull();
    expect(texts.get(answer)!.takenBy.map((t) => [t.id, t.status, t.reason])).toEqual([
      [cut, 'interrupted', 'Parley stopped while this turn was working'],
      [rerun, 'stopped', 'Stopped by alice'],
    ]);
    expect(texts.get(relayed)).toMatchObject({ sentBy: { id: rerun, status: 'stopped' }, takenBy: [] });
    expect(texts.get(unlinked)).toMatchObject({ sentBy: null, takenBy: [] });
    expect(texts.size).toBe(4);
  });
});
