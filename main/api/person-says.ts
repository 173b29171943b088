// A person's words where a role reads them, in a conversation or a task.
import type { Person } from '../../shared/domain';
import { personAuthor, postLine } from '../posting/post-line';
import type { ApiServices } from './handlers';

/** The line, and the input that wakes its agent, in one step. */
export function personSays<K extends 'conversation' | 'task'>(
  services: ApiServices,
  person: Person,
  place: { kind: K; id: number },
  roleId: number,
  text: string,
  input: 'message' | 'comment',
) {
  return postLine(services, place, { author: personAuthor(person), text, entry: 'comment' }, () =>
    services.runs.addInput(place, roleId, input, text, person.name),
  );
}
