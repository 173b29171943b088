// Who hears that a run changed: the readers of its conversation or task, or, for an
// agent conversation, the connection engine, which knows who may see it.
import { contextAudience } from '../access/lookup';
import { eventAudience } from '../access/rules';
import type { EventHub } from '../events';
import type { Db } from '../store/database';
import { getConversationRow } from '../store/queries/conversations';
import type { RunRow } from '../store/queries/runs';
import type { ThreadHooks } from './thread-hooks';

export function tellChanged(db: Db, events: EventHub, hooks: ThreadHooks | null, run: RunRow): void {
  if (run.context_kind === 'conversation') {
    const conversation = getConversationRow(db, run.context_id);
    if (conversation)
      events.emit(
        { type: 'changed', kind: 'conversation', id: run.context_id },
        eventAudience.conversation(conversation),
      );
  } else if (run.context_kind === 'task') {
    events.emit(
      { type: 'changed', kind: 'task', id: run.context_id },
      contextAudience(db, { kind: 'task', id: run.context_id }),
    );
  } else {
    hooks?.changed(run.context_id);
  }
}
