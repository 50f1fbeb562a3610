/**
 * McNemar's exact test for paired binary outcomes: under "both arms succeed equally often", each
 * discordant pair is A-only or B-only with probability 1/2, so b ~ Binomial(b + c, 1/2).
 */

import { binomialCdf } from "./binomial.js";

/** Result of {@link mcnemarExact}; field names are the wire names. */
export interface McNemarResult {
  /** Pairs where only A succeeded. */
  b: number;
  /** Pairs where only B succeeded. */
  c: number;
  n_discordant: number;
  /** Two-sided exact p-value: min(1, 2 × the smaller binomial tail). */
  p_value: number;
  method: "mcnemar-exact";
}

/**
 * Two-sided exact (conditional) McNemar test on the discordant counts `b` (only A succeeded) and
 * `c` (only B succeeded). p = min(1, 2 · P(X <= min(b, c))), X ~ Binomial(b + c, 1/2); 1 when there
 * are no discordant pairs. Its size never exceeds the nominal level (it is conservative).
 */
export function mcnemarExact(b: number, c: number): McNemarResult {
  for (const [name, value] of [["b", b], ["c", c]] as const) {
    if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer; got ${value}`);
  }
  const n = b + c;
  const pValue = n === 0 ? 1 : Math.min(1, 2 * binomialCdf(Math.min(b, c), n, 0.5));
  return { b, c, n_discordant: n, p_value: pValue, method: "mcnemar-exact" };
}
