// The sender key of ADR 0035 as the engine's cache answers it: a send goes to the open,
// locally started agent conversation of (connection, root, sending role, recipient role),
// and to no other conversation filed under the same root id.
import { describe, expect, it } from 'vitest';
import { scratchDatabase } from '../../test-support/scratch-database';
import type { ContextKind } from '../../shared/domain';
import type { Db } from '../store/database';
import { insertConnection } from '../store/queries/connections';
import { insertRole } from '../store/queries/roles';
import { closeThread, getThread, insertThread } from '../store/queries/threads';
import { ThreadCache } from './sender-key';

let db: Db;
scratchDatabase('sender-key', (opened) => (db = opened));

describe('the sender key', () => {
  it('finds the one open, locally started conversation of a key among those of the same root id', () => {
    const bob = insertConnection(db, 'fp-bob', 'cert', 'bob', null, 'peer').id;
    const carol = insertConnection(db, 'fp-carol', 'cert', 'carol', null, 'peer').id;
    const assistant = insertRole(db, 'assistant', '', { adapter: 'command', command: ['true'] }).id;
    const writer = insertRole(db, 'writer', '', { adapter: 'command', command: ['true'] }).id;
    let n = 0;
    const thread = (connectionId: number, rootKind: ContextKind, localRoleId: number, peerRole: string) =>
      insertThread(db, {
        connectionId,
        wireId: `wire-${++n}`,
        localRoleId,
        localRole: localRoleId === assistant ? 'assistant' : 'writer',
        peerRole,
        rootKind,
        rootId: 7,
        startedBy: 'local',
      }).id;
    // Conversation 7 and task 7 share an id; each key below differs from the others in one part.
    const ids = {
      conversation: thread(bob, 'conversation', assistant, 'helper'),
      task: thread(bob, 'task', assistant, 'helper'),
      otherPeer: thread(carol, 'conversation', assistant, 'helper'),
      otherRole: thread(bob, 'conversation', writer, 'helper'),
      otherPeerRole: thread(bob, 'conversation', assistant, 'critic'),
    };
    const cache = new ThreadCache(db);
    const lookUp = () => ({
      conversation: cache.openLocal(bob, 'conversation', 7, assistant, 'helper')?.row.id,
      task: cache.openLocal(bob, 'task', 7, assistant, 'helper')?.row.id,
      otherPeer: cache.openLocal(carol, 'conversation', 7, assistant, 'helper')?.row.id,
      otherRole: cache.openLocal(bob, 'conversation', 7, writer, 'helper')?.row.id,
      otherPeerRole: cache.openLocal(bob, 'conversation', 7, assistant, 'critic')?.row.id,
    });
    // Read from the database on first use, then from memory: the same answers.
    expect(lookUp()).toEqual(ids);
    expect(lookUp()).toEqual(ids);
    expect(cache.openLocal(bob, 'conversation', 8, assistant, 'helper')).toBeUndefined();

    // Closed behind the cache's back and forgotten: the key has no open conversation, and a
    // new one made for it is found, while the others stay as they were.
    closeThread(db, ids.conversation, 'closed by bob');
    cache.forget(cache.byRowId(ids.conversation)!);
    expect(cache.openLocal(bob, 'conversation', 7, assistant, 'helper')).toBeUndefined();
    const fresh = thread(bob, 'conversation', assistant, 'helper');
    expect(lookUp()).toEqual({ ...ids, conversation: fresh });
    expect(getThread(db, ids.conversation)!.status).toBe('closed');
  });
});
