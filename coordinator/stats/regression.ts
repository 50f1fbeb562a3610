/**
 * Regression detection for `matrix` runs: is the current run's success rate lower than a prior
 * comparable run's (same task revision)? A one-sided rule whose false-alarm rate is stated.
 */

import { fisherExactLess } from "./fisher-exact.js";
import { newcombeDifference } from "./two-proportions.js";

/** Options of {@link detectRegression}. */
export interface RegressionOptions {
  /** False-alarm rate of the rule when the rate has not dropped. Default 0.05. */
  alpha?: number;
  /** Drop (in rate units) that counts as a regression; 0 means any drop. Default 0. */
  margin?: number;
}

/** Verdict of {@link detectRegression}; field names are the wire names. */
export interface RegressionResult {
  regressed: boolean;
  /** current rate - prior rate. */
  diff: number;
  /** Two-sided Newcombe interval at level 1 - 2·alpha: its upper end is the one-sided 1 - alpha bound. */
  ci: [number, number];
  ci_level: number;
  interval_method: "newcombe-hybrid-score";
  /** One-sided p-value of the deciding rule; regressed exactly when p_value <= alpha. */
  p_value: number;
  /** Which rule decided, e.g. "fisher-exact-one-sided". */
  rule: "fisher-exact-one-sided" | "newcombe-upper-bound-below-margin";
  alpha: number;
  margin: number;
}

/**
 * Flags a regression of `current` against `prior` (independent runs, k successes of n episodes).
 *
 * - margin = 0: one-sided Fisher exact test of "current rate < prior rate"; regressed when
 *   p <= alpha. Exact and conservative: the false-alarm rate is <= alpha whatever the true rate.
 * - margin > 0: regressed when the one-sided (1 - alpha) Newcombe upper bound of the difference is
 *   below -margin, i.e. the drop exceeds margin with confidence 1 - alpha. Newcombe's interval has
 *   near-nominal, not guaranteed, coverage, so the false-alarm rate is approximately alpha.
 *
 * NOTE: alpha is per comparison. A matrix compares many cells; pass the cells' p-values through
 * {@link holmAdjust} to hold the chance of any false alarm in the run at alpha.
 */
export function detectRegression(
  prior: { k: number; n: number },
  current: { k: number; n: number },
  options: RegressionOptions = {},
): RegressionResult {
  const { alpha = 0.05, margin = 0 } = options;
  if (!(alpha > 0 && alpha < 0.5)) throw new RangeError(`alpha must be in (0, 0.5); got ${alpha}`);
  if (!(margin >= 0 && margin < 1)) throw new RangeError(`margin must be in [0, 1); got ${margin}`);
  const level = 1 - 2 * alpha;
  const interval = newcombeDifference(current.k, current.n, prior.k, prior.n, level);
  const base = { diff: interval.diff, ci: interval.ci, ci_level: level, interval_method: interval.method, alpha, margin };
  if (margin === 0) {
    const pValue = fisherExactLess(prior.k, prior.n, current.k, current.n);
    return { ...base, regressed: pValue <= alpha, p_value: pValue, rule: "fisher-exact-one-sided" };
  }
  const pValue = newcombeMarginPValue(prior, current, margin);
  return { ...base, regressed: interval.ci[1] < -margin, p_value: pValue, rule: "newcombe-upper-bound-below-margin" };
}

/**
 * The smallest one-sided alpha at which the Newcombe upper bound would fall below -margin (the
 * bound rises with confidence, so bisect); 0.5 when even the point estimate is not below -margin.
 */
function newcombeMarginPValue(prior: { k: number; n: number }, current: { k: number; n: number }, margin: number): number {
  const upperAt = (a: number) => newcombeDifference(current.k, current.n, prior.k, prior.n, 1 - 2 * a).ci[1];
  if (!(upperAt(0.4999) < -margin)) return 0.5;
  let low = 1e-12; // rule does not fire at this alpha (or we report this floor)
  let high = 0.4999; // rule fires
  if (upperAt(low) < -margin) return low;
  for (let i = 0; i < 60; i++) {
    const mid = Math.sqrt(low * high); // alpha spans decades: bisect on a log scale
    if (upperAt(mid) < -margin) high = mid;
    else low = mid;
  }
  return high;
}

/**
 * Holm's (1979) step-down adjustment: adjusted p-values such that flagging every comparison with
 * adjusted p <= alpha keeps the family-wise false-alarm rate <= alpha under any dependence.
 */
export function holmAdjust(pValues: readonly number[]): number[] {
  const m = pValues.length;
  const order = pValues.map((p, i) => [p, i] as const).sort((x, y) => x[0] - y[0]);
  const adjusted = new Array<number>(m);
  let running = 0;
  order.forEach(([p, i], rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p));
    adjusted[i] = running;
  });
  return adjusted;
}
