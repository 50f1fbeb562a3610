/**
 * Regression detection for `matrix` runs and gate checks: is the current run's success rate lower
 * than a prior comparable run's (same task revision)? A one-sided rule whose false-alarm rate is
 * stated, per comparison ({@link detectRegression}) and over a family of comparisons
 * ({@link detectRegressions}: a matrix's compared cells, a gate check's units), where the
 * p-values are adjusted so that the family's false-alarm rate, not each comparison's, is alpha.
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
 * NOTE: alpha is per comparison. For several comparisons at once use {@link detectRegressions}.
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

/**
 * Benjamini & Hochberg's (1995) step-up adjustment: with p-values sorted ascending p_(1..m), the
 * adjusted p_(i) = min over j >= i of min(1, m · p_(j) / j), so the adjusted values are monotone in
 * the raw ones. Flagging every comparison with adjusted p <= q keeps the expected share of false
 * alarms among the flagged (the false discovery rate) <= q when the p-values are independent or
 * positively dependent (Benjamini & Yekutieli 2001); it does not bound the chance of any false alarm.
 */
export function benjaminiHochbergAdjust(pValues: readonly number[]): number[] {
  const m = pValues.length;
  const order = pValues.map((p, i) => [p, i] as const).sort((x, y) => x[0] - y[0]);
  const adjusted = new Array<number>(m);
  let running = 1;
  for (let rank = m - 1; rank >= 0; rank--) {
    const [p, i] = order[rank];
    running = Math.min(running, (m * p) / (rank + 1));
    adjusted[i] = Math.min(1, running);
  }
  return adjusted;
}

/** Multiplicity adjustment of {@link detectRegressions}. */
export type RegressionAdjustment = "holm" | "benjamini-hochberg";

/** One comparison's verdict within a family; field names are the wire names. */
export interface AdjustedRegressionResult extends RegressionResult {
  /** p_value adjusted over the family; regressed exactly when p_adjusted <= alpha. */
  p_adjusted: number;
  adjustment: RegressionAdjustment;
}

/**
 * Regression verdicts for a family of comparisons (a matrix's compared cells, a gate check's
 * units), each decided by the rule of {@link detectRegression} on its own p-value, then adjusted:
 *
 * - "holm" (default; Holm 1979): P(any comparison flagged while none regressed) <= alpha, under any
 *   dependence between the comparisons. With one comparison it is detectRegression's verdict.
 * - "benjamini-hochberg" (Benjamini & Hochberg 1995): the expected share of false alarms among the
 *   flagged <= alpha (independent or positively dependent comparisons). More flags when many units
 *   truly regressed; no bound on the chance of a single false alarm.
 *
 * `regressed` = p_adjusted <= alpha. Each result keeps its own p_value and its per-comparison
 * interval (`ci` at `ci_level`, not adjusted for multiplicity).
 */
export function detectRegressions(
  comparisons: ReadonlyArray<{ prior: { k: number; n: number }; current: { k: number; n: number } }>,
  options: RegressionOptions & { adjustment?: RegressionAdjustment } = {},
): AdjustedRegressionResult[] {
  const { adjustment = "holm", ...ruleOptions } = options;
  if (adjustment !== "holm" && adjustment !== "benjamini-hochberg") {
    throw new RangeError(`adjustment must be "holm" or "benjamini-hochberg"; got ${String(adjustment)}`);
  }
  const results = comparisons.map(({ prior, current }) => detectRegression(prior, current, ruleOptions));
  const pValues = results.map((r) => r.p_value);
  const adjusted = adjustment === "holm" ? holmAdjust(pValues) : benjaminiHochbergAdjust(pValues);
  return results.map((result, i) => ({ ...result, regressed: adjusted[i] <= result.alpha, p_adjusted: adjusted[i], adjustment }));
}
