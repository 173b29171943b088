import type { Db } from '../database';

const STATES = ['queued', 'sent', 'acked', 'failed', 'received', 'handled'] as const;

/** `texts_queued = texts_queued + (NEW.state = 'queued') - (OLD.state = 'queued'), …` */
const countChanges = (plus: string | null, minus: string | null) =>
  STATES.map(
    (state) =>
      `texts_${state} = texts_${state}` +
      (plus ? ` + (${plus}.state = '${state}')` : '') +
      (minus ? ` - (${minus}.state = '${state}')` : ''),
  ).join(', ');

/** Adds one to (or takes one from) the sizes of the lists a thread row is in. */
const listSizeChanges = (row: 'NEW' | 'OLD', by: '+ 1' | '- 1') => {
  const start = by === '+ 1' ? 1 : -1;
  return `
    INSERT INTO thread_list_sizes (list, root_kind, root_id, size) VALUES ('root', ${row}.root_kind, ${row}.root_id, ${start})
      ON CONFLICT DO UPDATE SET size = size ${by};
    INSERT INTO thread_list_sizes (list, size) SELECT 'peerStarted', ${start} WHERE ${row}.started_by = 'peer'
      ON CONFLICT DO UPDATE SET size = size ${by};
    INSERT INTO thread_list_sizes (list, size) SELECT 'orphaned', ${start} WHERE ${row}.root_gone = 1
      ON CONFLICT DO UPDATE SET size = size ${by};`;
};

/**
 * A thread list is read a page at a time, and each row of it shows the agent
 * conversation's newest text and how many of its texts are in each state. Worked out
 * from the texts, that cost a page every agent conversation of its list (sorted by a
 * subquery to take a hundred), every text of each of its rows, and a count of the whole
 * list for its size. So the store now keeps these facts as the texts and threads change,
 * in triggers (whoever writes): each thread's newest text and its counts by state, and
 * each list's size; and the lists are indexed in the order people read them — by root,
 * and for the two lists not under a root (peer-started, orphaned), open before closed,
 * newest text first. The root index replaces the one on (root_kind, root_id), which it
 * begins with.
 */
export function summariseThreadLists(db: Db): void {
  db.exec(`
    ALTER TABLE threads ADD COLUMN last_text_id INTEGER;
    ${STATES.map((state) => `ALTER TABLE threads ADD COLUMN texts_${state} INTEGER NOT NULL DEFAULT 0;`).join('\n')}
    UPDATE threads SET last_text_id = facts.last_id,
      ${STATES.map((state) => `texts_${state} = facts.${state}`).join(', ')}
      FROM (SELECT thread_id, max(id) AS last_id,
                   ${STATES.map((state) => `sum(state = '${state}') AS ${state}`).join(', ')}
            FROM texts GROUP BY thread_id) AS facts
      WHERE facts.thread_id = threads.id;

    CREATE TRIGGER texts_insert_thread_facts AFTER INSERT ON texts BEGIN
      UPDATE threads SET last_text_id = NEW.id, ${countChanges('NEW', null)} WHERE id = NEW.thread_id;
    END;
    CREATE TRIGGER texts_state_thread_facts AFTER UPDATE OF state ON texts WHEN OLD.state != NEW.state BEGIN
      UPDATE threads SET ${countChanges('NEW', 'OLD')} WHERE id = NEW.thread_id;
    END;
    CREATE TRIGGER texts_delete_thread_facts AFTER DELETE ON texts BEGIN
      UPDATE threads SET ${countChanges(null, 'OLD')} WHERE id = OLD.thread_id;
    END;

    CREATE TABLE thread_list_sizes (
      list TEXT NOT NULL CHECK (list IN ('root', 'peerStarted', 'orphaned')),
      root_kind TEXT NOT NULL DEFAULT '',
      root_id INTEGER NOT NULL DEFAULT 0,
      size INTEGER NOT NULL,
      PRIMARY KEY (list, root_kind, root_id)
    ) WITHOUT ROWID;
    INSERT INTO thread_list_sizes (list, root_kind, root_id, size)
      SELECT 'root', root_kind, root_id, count(*) FROM threads GROUP BY root_kind, root_id;
    INSERT INTO thread_list_sizes (list, size)
      SELECT 'peerStarted', count(*) FROM threads WHERE started_by = 'peer' HAVING count(*) > 0;
    INSERT INTO thread_list_sizes (list, size)
      SELECT 'orphaned', count(*) FROM threads WHERE root_gone = 1 HAVING count(*) > 0;
    CREATE TRIGGER threads_insert_list_sizes AFTER INSERT ON threads BEGIN ${listSizeChanges('NEW', '+ 1')}
    END;
    CREATE TRIGGER threads_move_list_sizes AFTER UPDATE OF root_kind, root_id, root_gone, started_by ON threads BEGIN
      ${listSizeChanges('OLD', '- 1')} ${listSizeChanges('NEW', '+ 1')}
    END;
    CREATE TRIGGER threads_delete_list_sizes AFTER DELETE ON threads BEGIN ${listSizeChanges('OLD', '- 1')}
    END;

    DROP INDEX threads_root;
    CREATE INDEX threads_root ON threads(root_kind, root_id, status, last_text_id);
    CREATE INDEX threads_peer_started ON threads(status, last_text_id) WHERE started_by = 'peer';
    CREATE INDEX threads_orphaned ON threads(status, last_text_id) WHERE root_gone = 1;
  `);
}
