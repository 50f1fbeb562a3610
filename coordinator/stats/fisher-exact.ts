/**
 * Fisher's exact test for two independent binomial samples, one-sided: conditional on the total
 * number of successes, the successes of the second sample are hypergeometric when both rates are
 * equal. Its size never exceeds the nominal level, for any common rate and any sample sizes.
 */

import { logAddExp, logChoose } from "./special-functions.js";

/**
 * One-sided Fisher exact p-value for "sample 2's rate is lower than sample 1's": P(X <= k2) where
 * X ~ Hypergeometric(population n1 + n2, k1 + k2 successes, n2 draws).
 */
export function fisherExactLess(k1: number, n1: number, k2: number, n2: number): number {
  for (const [name, k, n] of [["sample 1", k1, n1], ["sample 2", k2, n2]] as const) {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`${name}: n must be a non-negative integer; got ${n}`);
    if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError(`${name}: k must be an integer in 0..${n}; got ${k}`);
  }
  const total = k1 + k2;
  const logDenominator = logChoose(n1 + n2, total);
  const lowest = Math.max(0, total - n1);
  let logP = -Infinity;
  for (let x = lowest; x <= k2; x++) logP = logAddExp(logP, logChoose(n2, x) + logChoose(n1, total - x) - logDenominator);
  return Math.min(1, Math.exp(logP));
}
