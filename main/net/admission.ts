// Counts a port's unauthenticated connections, in total and per remote address, and
// refuses one over either cap (see ./limits). A connection holds a ticket from its
// first byte until it authenticates or closes, whichever comes first.
import { MAX_UNAUTHENTICATED, MAX_UNAUTHENTICATED_PER_ADDRESS } from './limits';

export interface Ticket {
  /** Gives the place back; later calls do nothing. */
  release(): void;
}

export interface GateLimits {
  total: number;
  perAddress: number;
}

export class ConnectionGate {
  private total = 0;
  private readonly byAddress = new Map<string, number>();

  constructor(
    private readonly limits: GateLimits = {
      total: MAX_UNAUTHENTICATED,
      perAddress: MAX_UNAUTHENTICATED_PER_ADDRESS,
    },
  ) {}

  /** A ticket for a new connection from `address`, or null when it is over a cap. */
  admit(address: string | undefined): Ticket | null {
    const key = normalizeAddress(address);
    const held = this.byAddress.get(key) ?? 0;
    if (this.total >= this.limits.total || held >= this.limits.perAddress) return null;
    this.total++;
    this.byAddress.set(key, held + 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const left = (this.byAddress.get(key) ?? 1) - 1;
        if (left > 0) this.byAddress.set(key, left);
        else this.byAddress.delete(key);
      },
    };
  }

  /** Whether `admit(address)` would give a ticket now. */
  hasRoom(address: string | undefined): boolean {
    return (
      this.total < this.limits.total && (this.byAddress.get(normalizeAddress(address)) ?? 0) < this.limits.perAddress
    );
  }

  /** Unauthenticated connections held now (for tests and logs). */
  get pending(): number {
    return this.total;
  }
}

/** One key per remote host: an IPv4 address seen through an IPv6 socket counts as itself. */
export function normalizeAddress(address: string | undefined): string {
  if (!address) return 'unknown';
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && lower.includes('.') ? lower.slice('::ffff:'.length) : lower;
}
