/**
 * The real cell's `Clock`: monotonic `process.hrtime`, and a `sleepUntil` that sleeps with setTimeout
 * until about 1 ms before the deadline, then spins (yielding with setImmediate) for the rest, because a
 * timer alone wakes up to a millisecond or more late.
 */
import type { Clock } from "../../hardware/types.js";

/** How long before the deadline the timer hands over to the spin, ns. */
const SPIN_NS = 1_000_000n;

export class WallClock implements Clock {
  nowNs(): bigint {
    return process.hrtime.bigint();
  }

  async sleepUntil(tNs: bigint): Promise<void> {
    const coarseNs = tNs - this.nowNs() - SPIN_NS;
    if (coarseNs > 0n) await new Promise((resolve) => setTimeout(resolve, Number(coarseNs / 1_000_000n)));
    while (this.nowNs() < tNs) await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Smallest step the monotonic clock shows between two readings, ns (for the doctor). */
export function monotonicResolutionNs(samples = 1000): number {
  let smallest = Number.POSITIVE_INFINITY;
  for (let i = 0; i < samples; i++) {
    const a = process.hrtime.bigint();
    let b = process.hrtime.bigint();
    while (b === a) b = process.hrtime.bigint();
    smallest = Math.min(smallest, Number(b - a));
  }
  return smallest;
}
