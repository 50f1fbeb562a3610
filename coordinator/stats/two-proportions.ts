/**
 * Newcombe's hybrid score interval for the difference of two independent proportions, used for
 * transfer gaps (sim vs real run) and regression checks between two runs.
 */

import { wilsonInterval } from "./wilson.js";

/** A difference of proportions with its interval; field names are the wire names. */
export interface DifferenceInterval {
  /** Point estimate p1 - p2. */
  diff: number;
  ci: [number, number];
  /** Names the interval in results (`interval_method`). */
  method: "newcombe-hybrid-score";
}

/**
 * Interval for p1 - p2 with p1 = k1/n1 and p2 = k2/n2 from independent samples: Newcombe (1998a)
 * method 10, the "square-and-add" of the two Wilson score intervals [l1, u1], [l2, u2]:
 *
 *   lower = d - sqrt((p1 - l1)² + (u2 - p2)²),  upper = d + sqrt((u1 - p1)² + (p2 - l2)²).
 *
 * Newcombe's evaluation puts its coverage close to nominal with no aberrations (never outside
 * [-1, 1], no zero-width intervals). An empty sample contributes the uninformative Wilson [0, 1].
 */
export function newcombeDifference(k1: number, n1: number, k2: number, n2: number, ci = 0.95): DifferenceInterval {
  const [l1, u1] = wilsonInterval(k1, n1, ci);
  const [l2, u2] = wilsonInterval(k2, n2, ci);
  const p1 = n1 === 0 ? 0.5 : k1 / n1;
  const p2 = n2 === 0 ? 0.5 : k2 / n2;
  // One division of an exact integer numerator: 7/10 - 4/10 is 0.3, not 0.29999999999999993.
  const diff = n1 === 0 || n2 === 0 ? p1 - p2 : (k1 * n2 - k2 * n1) / (n1 * n2);
  const lower = diff - Math.hypot(p1 - l1, u2 - p2);
  const upper = diff + Math.hypot(u1 - p1, p2 - l2);
  return { diff, ci: [Math.max(-1, lower), Math.min(1, upper)], method: "newcombe-hybrid-score" };
}
