// Which turn sent a text and which turn posted a line, as the store keeps and returns them.
import { describe, expect, it } from 'vitest';
import { scratchDatabase } from '../../../test-support/scratch-database';
import type { Db } from '../database';
import { conversationAsks, rootAsks } from './asks';
import { insertConnection } from './connections';
import { insertConversation, insertMessage, listMessages } from './conversations';
import { insertPerson } from './people';
import { insertRole } from './roles';
import { ensureRun, insertTurn } from './runs';
import { insertText, insertThread, listTexts } from './threads';

describe('the turns behind texts and lines', () => {
  let db: Db;
  scratchDatabase('asks', (opened) => (db = opened));

  function setUp() {
    const person = insertPerson(db, 'alice', 'owner');
    const role = insertRole(db, 'assistant', '', { adapter: 'scripted' });
    const conversation = insertConversation(db, person.id, role.id);
    const run = ensureRun(db, { kind: 'conversation', id: conversation.id }, role.id);
    const connection = insertConnection(db, 'ff'.repeat(32), 'PEM', 'bob', '127.0.0.1:4100', 'invitation');
    const thread = (rootKind: 'conversation' | 'task', wire: string, startedBy: 'local' | 'peer' = 'local') =>
      insertThread(db, {
        connectionId: connection.id,
        wireId: wire.repeat(22),
        localRoleId: role.id,
        localRole: 'assistant',
        peerRole: 'researcher',
        rootKind,
        rootId: conversation.id,
        startedBy,
      });
    return { role, conversation, run, thread };
  }

  it("returns a conversation's asks with the turns that sent them, and each line with the turn that posted it", () => {
    const { role, conversation, run, thread } = setUp();
    const first = insertTurn(db, run.id, 0, 'hash-1');
    const second = insertTurn(db, run.id, 0, 'hash-2');
    const here = thread('conversation', 'A');
    const elsewhere = thread('task', 'B');
    const asked = insertText(db, here.id, 'out', 1, 'numbers?', 'sent', first);
    const followUp = insertText(db, here.id, 'out', 2, 'and since?', 'queued', second);
    insertText(db, here.id, 'out', 3, 'no turn sent this', 'queued');
    insertText(db, here.id, 'in', 1, 'an answer', 'received');
    const forTask = insertText(db, elsewhere.id, 'out', 1, 'for the task', 'sent', first);
    const line = insertMessage(db, conversation.id, { kind: 'role', id: role.id, name: 'assistant' }, 'sent it', first);
    insertMessage(db, conversation.id, { kind: 'person', id: 1, name: 'alice' }, 'thanks');

    expect(conversationAsks(db, conversation.id, null)).toEqual([
      expect.objectContaining({ threadId: here.id, textId: asked, sentByTurnId: first }),
      expect.objectContaining({ threadId: here.id, textId: followUp, sentByTurnId: second }),
    ]);
    expect(listMessages(db, conversation.id, 10).map((m) => [m.body, m.postedByTurnId])).toEqual([
      ['sent it', first],
      ['thanks', null],
    ]);
    expect(line.postedByTurnId).toBe(first);
    expect(listTexts(db, here.id).map((t) => [t.body, t.sent_by_turn])).toEqual([
      ['numbers?', first],
      ['and since?', second],
      ['no turn sent this', null],
      ['an answer', null],
    ]);
    // A task's asks the same way (here the task has the conversation's id: only the kind differs).
    expect(rootAsks(db, 'task', conversation.id, null)).toEqual([
      expect.objectContaining({ threadId: elsewhere.id, textId: forTask, sentByTurnId: first }),
    ]);
    // Asks before the first line shown are left out.
    expect(conversationAsks(db, conversation.id, '9999')).toEqual([]);
  });

  it('names the turn that took an incoming text once it is taken, and forgets a turn that goes', () => {
    const { run, thread } = setUp();
    const turn = insertTurn(db, run.id, 0, 'hash-1');
    const here = thread('conversation', 'A');
    const received = insertText(db, here.id, 'in', 1, 'an answer', 'received');
    const sent = insertText(db, here.id, 'out', 1, 'numbers?', 'sent', turn);
    const input = Number(
      db
        .prepare(
          "INSERT INTO inputs (run_id, kind, body, author_name, text_id) VALUES (?, 'text', 'an answer', 'bob', ?)",
        )
        .run(run.id, received).lastInsertRowid,
    );
    const takenBy = () => listTexts(db, here.id).find((t) => t.id === received)?.taken_by_turn;
    expect(takenBy()).toBeNull();
    db.prepare("UPDATE inputs SET state = 'taken', turn_id = ? WHERE id = ?").run(turn, input);
    expect(takenBy()).toBe(turn);
    db.prepare('DELETE FROM turns WHERE id = ?').run(turn);
    expect(listTexts(db, here.id).find((t) => t.id === sent)?.sent_by_turn).toBeNull();
  });
});
