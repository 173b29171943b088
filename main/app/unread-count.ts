// The number the dock or launcher badge and the window title show. Today it counts the
// answers that came while the window was behind, until it comes to the front. When
// unread marks exist, a source that counts what attention.list holds for the owner
// takes this one's place: the badge and the title follow whatever CountSource they get.
import type { Person } from '../../shared/domain';
import type { Installation } from '../installation';

export interface CountSource {
  /** The number to show now. */
  readonly count: number;
  /** Called with every new count; returns a function that stops it. */
  subscribe(listener: (count: number) => void): () => void;
  close(): void;
}

export class UnseenAnswers implements CountSource {
  private value = 0;
  private readonly listeners = new Set<(count: number) => void>();
  private readonly stop: () => void;

  constructor(installation: Installation, person: Person, inFront: () => boolean) {
    this.stop = installation.subscribe({ person }, (event) => {
      if (event.type === 'notice' && !inFront()) this.set(this.value + 1);
    });
  }

  get count(): number {
    return this.value;
  }

  /** The person looked: the window came to the front. */
  seen(): void {
    this.set(0);
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
