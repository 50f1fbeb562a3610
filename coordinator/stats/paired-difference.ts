/**
 * Interval for the difference of two proportions measured on the same units (paired episodes:
 * policy A and policy B run from the same initial conditions, or sim and real on one scenario).
 */

import { wilsonInterval } from "./wilson.js";

/** Counts of a paired 2×2 table. */
export interface PairedCounts {
  /** Both arms succeeded. */
  both: number;
  /** Only arm A succeeded. */
  onlyA: number;
  /** Only arm B succeeded. */
  onlyB: number;
  /** Neither arm succeeded. */
  neither: number;
}

/** A paired difference with its interval; field names are the wire names. */
export interface PairedDifferenceInterval {
  /** Point estimate pA - pB = (onlyA - onlyB) / n. */
  diff: number;
  ci: [number, number];
  /** Names the interval in results (`interval_method`). */
  method: "newcombe-paired";
}

/** Tallies boolean pairs into a {@link PairedCounts} table. */
export function tallyPairs(pairs: Iterable<{ a: boolean; b: boolean }>): PairedCounts {
  const counts: PairedCounts = { both: 0, onlyA: 0, onlyB: 0, neither: 0 };
  for (const { a, b } of pairs) {
    if (a && b) counts.both++;
    else if (a) counts.onlyA++;
    else if (b) counts.onlyB++;
    else counts.neither++;
  }
  return counts;
}

/**
 * Newcombe's continuity-corrected correlation φ* of the paired table (Newcombe 1998b, method 10):
 * with A = both·neither - onlyA·onlyB, the numerator is A - n/2 when A > n/2, 0 when 0 <= A <= n/2
 * and A when A < 0, over sqrt of the product of the four margins (φ* = 0 when a margin is 0).
 */
export function newcombePhi({ both, onlyA, onlyB, neither }: PairedCounts): number {
  const n = both + onlyA + onlyB + neither;
  const margins = (both + onlyA) * (onlyB + neither) * (both + onlyB) * (onlyA + neither);
  if (margins === 0) return 0;
  const a = both * neither - onlyA * onlyB;
  const numerator = a > n / 2 ? a - n / 2 : a >= 0 ? 0 : a;
  return numerator / Math.sqrt(margins);
}

/**
 * Interval for pA - pB from paired outcomes: Newcombe (1998b) method 10. The Wilson intervals
 * [lA, uA] and [lB, uB] of the two marginal rates are combined square-and-add, reduced by the
 * correlation φ* of the pairs (see {@link newcombePhi}):
 *
 *   lower = d - sqrt((pA - lA)² - 2φ*(pA - lA)(uB - pB) + (uB - pB)²)
 *   upper = d + sqrt((uA - pA)² - 2φ*(uA - pA)(pB - lB) + (pB - lB)²)
 *
 * Pairing narrows the interval when the arms succeed and fail together, which is what running both
 * on the same initial conditions buys. With no pairs the interval is the uninformative [-1, 1].
 */
export function pairedDifferenceInterval(pairs: PairedCounts, ci = 0.95): PairedDifferenceInterval {
  const { both, onlyA, onlyB, neither } = pairs;
  for (const [name, value] of Object.entries(pairs)) {
    if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer; got ${value}`);
  }
  const n = both + onlyA + onlyB + neither;
  if (n === 0) return { diff: 0, ci: [-1, 1], method: "newcombe-paired" };
  const pA = (both + onlyA) / n;
  const pB = (both + onlyB) / n;
  const [lA, uA] = wilsonInterval(both + onlyA, n, ci);
  const [lB, uB] = wilsonInterval(both + onlyB, n, ci);
  const phi = newcombePhi(pairs);
  // (onlyA - onlyB) / n is pA - pB rounded once: 0.3, not 0.30000000000000004.
  const diff = (onlyA - onlyB) / n;
  const down = Math.sqrt(Math.max(0, (pA - lA) ** 2 - 2 * phi * (pA - lA) * (uB - pB) + (uB - pB) ** 2));
  const up = Math.sqrt(Math.max(0, (uA - pA) ** 2 - 2 * phi * (uA - pA) * (pB - lB) + (pB - lB) ** 2));
  return { diff, ci: [Math.max(-1, diff - down), Math.min(1, diff + up)], method: "newcombe-paired" };
}
