/**
 * Regression detection that accounts for run-to-run cell drift (issue 25 item 4; docs/statistics.md,
 * "Regressions when cells drift"): for matrix runs and gate checks, is a unit's model-level rate in
 * the current run lower than in the baseline run?
 *
 * Why. Two runs of the same policy on the same cells do not see the same cell rates: cameras are
 * re-seated, grippers wear, lighting changes. Comparing pooled counts (Fisher's exact test) treats
 * the difference in cell rates between the runs as a policy effect, and over 12 units the Holm family
 * flags a regression 13–69% of the time at ICC 0.05–0.1 when nothing changed (issue 25).
 *
 * Rule. Each run's unit is the headline's beta-binomial model on that run's cells, the cells' rates
 * drawn afresh for each run (drift as large as the cell-to-cell variation the ICC describes; the A/A
 * reruns the fleet has are too few to fit a separate drift variance, so the ICC posterior stands for
 * it, which is conservative when cells drift less than they differ). The one-sided p-value is the
 * posterior probability P(μ_current ≥ μ_baseline | data) from the two runs' posteriors
 * (`betaBinomialDifference`, each run under the prior it recorded); Holm's adjustment over the family
 * keeps the chance of flagging any unit, when none regressed, within alpha. A side without per-cell
 * counts (a result from before issue 25) falls back to the pooled Fisher rule (`detectRegression`).
 */
import { betaBinomialDifference } from "./beta-binomial-difference.js";
import type { HeadlinePrior } from "./beta-binomial-rate.js";
import { detectRegression, holmAdjust, type RegressionResult } from "./regression.js";

/** One run's side of a comparison: its per-cell counts and the prior its headline recorded. */
export interface RunCells {
  cells: ReadonlyArray<{ k: number; n: number }>;
  prior?: HeadlinePrior;
  /** The pooled counts, for a side without per-cell counts (the fallback rule); the cells' sum unless given. */
  pooled?: { k: number; n: number };
}

export interface CellRegressionResult extends Omit<RegressionResult, "rule" | "interval_method"> {
  rule: "beta-binomial-posterior-drift" | RegressionResult["rule"];
  interval_method: "beta-binomial-posterior-difference" | RegressionResult["interval_method"];
  p_adjusted: number;
  adjustment: "holm";
}

const total = (side: RunCells) => side.pooled ?? side.cells.reduce((s, c) => ({ k: s.k + c.k, n: s.n + c.n }), { k: 0, n: 0 });

/**
 * Flags the units whose current rate is lower than the baseline's, the family's false-alarm rate
 * within `alpha` (default 0.05) by Holm. `pairs[i]` is unit i's baseline and current run.
 */
export function detectCellRegressions(pairs: ReadonlyArray<{ prior: RunCells; current: RunCells }>, options: { alpha?: number } = {}): CellRegressionResult[] {
  const alpha = options.alpha ?? 0.05;
  if (!(alpha > 0 && alpha < 0.5)) throw new RangeError(`alpha must be in (0, 0.5); got ${alpha}`);
  const single = pairs.map(({ prior, current }) => {
    if (prior.cells.length === 0 || current.cells.length === 0) {
      const fisher = detectRegression(total(prior), total(current), { alpha });
      return { ...fisher } as Omit<CellRegressionResult, "p_adjusted" | "adjustment">;
    }
    const d = betaBinomialDifference(current.cells, prior.cells, { ci: 1 - 2 * alpha, prior: current.prior, priorB: prior.prior });
    return {
      regressed: false, diff: d.diff, ci: d.ci, ci_level: 1 - 2 * alpha, interval_method: d.method,
      p_value: d.probability_a_greater, rule: "beta-binomial-posterior-drift" as const, alpha, margin: 0,
    };
  });
  const adjusted = holmAdjust(single.map((s) => s.p_value));
  return single.map((s, i) => ({ ...s, regressed: adjusted[i] <= alpha, p_adjusted: adjusted[i], adjustment: "holm" as const }));
}
