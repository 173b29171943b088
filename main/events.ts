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

  private readonly observers = new Set<Listener>();

  /** Sees every event regardless of audience: for main-process code such as notifications and tests. */
  observe(listener: Listener): () => void {
    this.observers.add(listener);
    return () => this.observers.delete(listener);
  }

  emit(event: AppEvent, audience: Audience): void {
    for (const observer of this.observers) observer(event);
    for (const { person, listener } of this.listeners) {
      const sees =
        audience === 'everyone' ||
        (audience === 'owners' && person.kind === 'owner') ||
        (typeof audience === 'object' && audience.personId === person.id);
      if (sees) listener(event);
    }
  }
}
