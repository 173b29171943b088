// Change events for signed-in clients. Each event carries its audience, computed by the
// access rules (./access), so a person's client never learns even the ids of what they
// may not read; a session that ends (its person removed, its token replaced) hears
// nothing from that moment on.
import type { AppEvent } from '../shared/api-contract';
import type { Person } from '../shared/domain';
import { inAudience, type Audience } from './access/rules';

export type { Audience };

type Listener = (event: AppEvent) => void;

/** Who listens: read on every event, so a session signed out meanwhile is skipped. */
export interface EventViewer {
  readonly person: Person | null;
}

type Observer = (event: AppEvent, audience: Audience) => void;

export class EventHub {
  // Arrays replaced on every change rather than sets: a busy wire emits thousands of
  // events a second and subscriptions change rarely. An entry removed during an emit is
  // marked, so it hears nothing from that moment on, as from a set.
  private listeners: ReadonlyArray<{ viewer: EventViewer; listener: Listener; active: boolean }> = [];
  private observers: ReadonlyArray<{ observer: Observer; active: boolean }> = [];

  subscribe(viewer: EventViewer, listener: Listener): () => void {
    const entry = { viewer, listener, active: true };
    this.listeners = [...this.listeners, entry];
    return () => {
      entry.active = false;
      this.listeners = this.listeners.filter((other) => other !== entry);
    };
  }

  /**
   * Sees every event regardless of audience, with the audience it went to: for
   * main-process code (what waits on people follows what they heard of) and tests.
   */
  observe(observer: Observer): () => void {
    const entry = { observer, active: true };
    this.observers = [...this.observers, entry];
    return () => {
      entry.active = false;
      this.observers = this.observers.filter((other) => other !== entry);
    };
  }

  emit(event: AppEvent, audience: Audience): void {
    const observers = this.observers;
    for (let i = 0; i < observers.length; i++) {
      const entry = observers[i]!;
      if (entry.active) entry.observer(event, audience);
    }
    const listeners = this.listeners;
    for (let i = 0; i < listeners.length; i++) {
      const { viewer, listener, active } = listeners[i]!;
      const person = viewer.person;
      if (active && person && inAudience(person, audience)) listener(event);
    }
  }
}
