/**
 * Reconnect delays: exponential from `initialMs`, capped at `maxMs`, with multiplicative jitter so a
 * fleet of cells that lost the coordinator together does not reconnect in lockstep.
 */
export interface BackoffOptions {
  /** First delay, ms (default 200). */
  initialMs: number;
  /** Largest delay, ms (default 10000). */
  maxMs: number;
  /** Share of each delay that is randomized, 0..1 (default 0.5): delay * (1 - jitter * u), u in [0, 1). */
  jitter: number;
}

export class Backoff {
  private attempt = 0;

  constructor(private readonly options: BackoffOptions, private readonly random: () => number = Math.random) {}

  /** The delay before the next attempt; each call doubles the base until it reaches `maxMs`. */
  nextDelayMs(): number {
    const { initialMs, maxMs, jitter } = this.options;
    const baseMs = Math.min(maxMs, initialMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.round(baseMs * (1 - jitter * this.random()));
  }

  /** Call after a connection proved healthy (Welcome received). */
  reset(): void {
    this.attempt = 0;
  }

  /** Skips straight to the slowest delay (used when the coordinator refuses the token). */
  slowest(): void {
    this.attempt = 31;
  }
}
