/**
 * Which coordinator the link dials next, and how long it waits first. Pure: no timers, no sockets.
 *
 * The addresses are tried round-robin. A failed dial or a broken stream moves to the next address,
 * the one after the address that failed. The backoff (backoff.ts, exponential with jitter) is paid
 * once per cycle through the list, not per address: within a cycle the next coordinator is dialled
 * at once, since it is another machine and may well be healthy; once every address has failed, the
 * next cycle waits the backoff's next delay. A stream that was welcomed and then broke starts a new
 * cycle at the next address after the backoff's first (short, jittered) delay, so cells that lose
 * their coordinator together do not all land on the next one in the same instant. With one address
 * this is exactly the single-coordinator backoff.
 */
import type { Backoff } from "./backoff.js";

/** Where to dial next. */
export interface RotationStep {
  address: string;
  /** How long to wait before dialling it, ms (0: at once). */
  delayMs: number;
}

export class CoordinatorRotation {
  private index = 0;
  /** Addresses still untried in this cycle, the current one included; 0 after a Welcome. */
  private untried: number;

  /** `addresses` must be non-empty (the config guarantees it). */
  constructor(private readonly addresses: readonly string[], private readonly backoff: Backoff) {
    if (addresses.length === 0) throw new Error("CoordinatorRotation needs at least one coordinator address");
    this.untried = addresses.length;
  }

  /** The address being dialled, or connected to. */
  get address(): string {
    return this.addresses[this.index]!;
  }

  /** 1-based position of the current address in the list. */
  get position(): number {
    return this.index + 1;
  }

  get size(): number {
    return this.addresses.length;
  }

  /** The current coordinator welcomed the cell: the backoff starts over, and so does the cycle. */
  welcomed(): void {
    this.backoff.reset();
    this.untried = 0;
  }

  /**
   * Dialling the current address failed, or its stream broke: moves to the next address.
   * `refused`: the coordinator refused the cell's token. The coordinators share one database, so
   * the next would refuse it too: wait the slowest delay before asking it.
   */
  failed(options: { refused?: boolean } = {}): RotationStep {
    this.index = (this.index + 1) % this.addresses.length;
    this.untried--;
    if (options.refused) this.backoff.slowest();
    if (this.untried > 0 && !options.refused) return { address: this.address, delayMs: 0 };
    this.untried = this.addresses.length;
    return { address: this.address, delayMs: this.backoff.nextDelayMs() };
  }

  /**
   * A failure that is not the coordinator's (the cell could not build its Hello): the same address
   * again, after the backoff's next delay.
   */
  retryDelayMs(): number {
    return this.backoff.nextDelayMs();
  }
}
