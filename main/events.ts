// Change events for signed-in clients. Each event names who may see it, so a
// person's client never learns even the ids of another person's conversations.
import type { AppEvent } from '../shared/api-contract';
import type { Person } from '../shared/domain';

export type Audience = { personId: number } | 'everyone' | 'owners';

type Listener = (event: AppEvent) => void;

export class EventHub {
  private readonly listeners = new Set<{ person: Person; listener: Listener }>();

  subscribe(person: Person, listener: Listener): () => void {
    const entry = { person, listener };
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }

  emit(event: AppEvent, audience: Audience): void {
    for (const { person, listener } of this.listeners) {
      const sees =
        audience === 'everyone' ||
        (audience === 'owners' && person.kind === 'owner') ||
        (typeof audience === 'object' && audience.personId === person.id);
      if (sees) listener(event);
    }
  }
}
