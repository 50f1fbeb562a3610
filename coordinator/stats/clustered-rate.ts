/**
 * Interval for a success rate pooled over clusters of correlated episodes: a unit's episodes run on
 * several physical cells, and cells differ, so episodes on one cell are more alike than episodes on
 * two. The quantity of interest is the model-level rate, the mean over the population of cells the
 * episodes could have run on; a binomial interval of the pooled count treats every episode as
 * independent and undercovers it (0.57-0.95 with 4-8 cells at intra-cell correlation 0-0.05, see
 * docs/statistics.md, "The design-effect t interval"). Runs' headlines use beta-binomial-rate.ts since issue 25;
 * this interval remains for leaderboard tiers and verify's agreement until their rules move too.
 *
 * Method (`interval_method: "wilson-design-effect-t"`): Wilson's score interval at Kish's (1965)
 * effective sample size, with a Student t critical value on (clusters - 1) degrees of freedom, the
 * degrees-of-freedom-adjusted effective-n interval of Korn & Graubard (1998) with Wilson's interval
 * in place of Clopper-Pearson's (Dean & Pagano 2015 compare such intervals for clustered surveys):
 *
 *   p̂ = Σ k_g / Σ n_g = k / n                          (ratio estimator)
 *   V_CR1 = G/(G-1) · Σ (k_g - p̂ n_g)² / n²            (cluster-robust variance, CR1; Cameron & Miller 2015)
 *   deff = max(1, V_CR1 / (p̂(1-p̂)/n)), 1 when p̂ is 0 or 1
 *   n_eff = n / deff
 *   interval = Wilson(p̂, n_eff) with z replaced by t_{1-(1-ci)/2, G-1}
 *
 * Assumes: clusters are independent of each other (episodes within one may be correlated in any
 * way), the cells are a sample of the cells the rate is meant for, and how many episodes a cell
 * runs does not depend on its rate (the scheduler's assignment), so the pooled rate estimates the
 * mean over cells. Guarantees: the bounds lie in [0, 1] and contain p̂; at 0 or n successes the
 * bound on that side is exactly 0 or 1; the interval contains the Wilson interval of the pooled
 * count at the same confidence (Wilson's intervals are nested in z²/n, and deff >= 1, t >= z).
 *
 * Coverage is not exact. The method was chosen by simulation (docs/statistics.md, "The design-effect t interval"): on the
 * grid 4 and 8 cells, ICC 0-0.05, p 0.5-0.9, n 100 and 400 its coverage is >= 0.949 at nominal
 * 0.95. A variant with Satterthwaite degrees of freedom was 5% narrower on that grid but fell as
 * low as 0.81 at p 0.95-0.98 with 2-4 cells, where this one stays >= 0.96 (>= 0.926 with 8 cells).
 * It over-covers when cells do not differ (ICC 0): the t critical value is the price of estimating
 * the between-cell variance from a few cells. With two cells t_{0.975,1} = 12.7: that is what two
 * cells can say about a population of cells.
 */

import { tForConfidence } from "./student-t.js";
import { wilsonInterval, wilsonScoreInterval, zForConfidence } from "./wilson.js";

/** Interval of a pooled rate over clusters; field names are the wire names. */
export interface ClusteredInterval {
  ci: [number, number];
  /** "wilson" with 0 or 1 non-empty clusters, else "wilson-design-effect-t". */
  interval_method: string;
  /** Non-empty clusters. */
  clusters: number;
  /** Kish design effect: the CR1 variance of the pooled rate over the binomial one, floored at 1. */
  design_effect: number;
  /** n / design_effect. */
  effective_n: number;
  /** Degrees of freedom of the t critical value (clusters - 1); null for plain Wilson. */
  df: number | null;
}

/** Name results carry for {@link clusteredRateInterval} with two or more clusters. */
export const CLUSTERED_INTERVAL_METHOD = "wilson-design-effect-t";

/** Kish design effect of the pooled rate of `clusters` (all non-empty), CR1 variance, floored at 1. */
export function designEffect(clusters: ReadonlyArray<{ k: number; n: number }>): number {
  const g = clusters.length;
  const n = clusters.reduce((sum, c) => sum + c.n, 0);
  const k = clusters.reduce((sum, c) => sum + c.k, 0);
  if (g < 2 || n === 0) return 1;
  const p = k / n;
  const binomialVariance = (p * (1 - p)) / n;
  // All successes or all failures: every cell agrees exactly; no between-cell variation is seen.
  if (binomialVariance === 0) return 1;
  let squares = 0;
  for (const c of clusters) squares += (c.k - p * c.n) ** 2;
  const robustVariance = ((g / (g - 1)) * squares) / (n * n);
  return Math.max(1, robustVariance / binomialVariance);
}

/**
 * Interval for the pooled success rate of clusters (`k` successes of `n` episodes per cell) that
 * accounts for between-cell variation; see the module comment. Clusters with n = 0 are ignored.
 * With 0 or 1 non-empty clusters it is exactly the Wilson interval of the totals.
 */
export function clusteredRateInterval(clusters: ReadonlyArray<{ k: number; n: number }>, ci = 0.95): ClusteredInterval {
  zForConfidence(ci); // validates ci
  clusters.forEach(({ k, n }, i) => {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`cluster ${i}: n must be a non-negative integer; got ${n}`);
    if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError(`cluster ${i}: k must be an integer in 0..${n}; got ${k}`);
  });
  const used = clusters.filter((c) => c.n > 0);
  const n = used.reduce((sum, c) => sum + c.n, 0);
  const k = used.reduce((sum, c) => sum + c.k, 0);
  if (used.length < 2) {
    return { ci: wilsonInterval(k, n, ci), interval_method: "wilson", clusters: used.length, design_effect: 1, effective_n: n, df: null };
  }
  const deff = designEffect(used);
  const effectiveN = n / deff;
  const df = used.length - 1;
  return {
    ci: wilsonScoreInterval(k, n, effectiveN, tForConfidence(ci, df)),
    interval_method: CLUSTERED_INTERVAL_METHOD,
    clusters: used.length,
    design_effect: deff,
    effective_n: effectiveN,
    df,
  };
}
