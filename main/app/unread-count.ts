// The number the dock or launcher badge and the window title show: how many items wait
// on the owner in attention.list (main/attention/), read again whenever their list may
// have changed. It falls as they read what waits, in this window or any other.
import type { Person } from '../../shared/domain';
import type { Installation } from '../installation';

export interface CountSource {
  /** The number to show now. */
  readonly count: number;
  /** Called with every new count; returns a function that stops it. */
  subscribe(listener: (count: number) => void): () => void;
  close(): void;
}

export class AttentionCount implements CountSource {
  private value: number;
  private readonly listeners = new Set<(count: number) => void>();
  private readonly stop: () => void;

  constructor(installation: Installation, person: Person) {
    const read = () => installation.attention.count(person);
    this.value = read();
    this.stop = installation.subscribe({ person }, (event) => {
      if (event.type === 'changed' && event.kind === 'attention') this.set(read());
    });
  }

  get count(): number {
    return this.value;
  }

  subscribe(listener: (count: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.stop();
    this.listeners.clear();
  }

  private set(count: number): void {
    if (count === this.value) return;
    this.value = count;
    for (const listener of this.listeners) listener(count);
  }
}
