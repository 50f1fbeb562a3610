/**
 * Seeded Monte Carlo of the headline interval over cells: the coverage and width behind the table in
 * docs/statistics.md ("The headline"), shared by the unit tests (small) and scripts/bench (large).
 *
 * Each synthetic unit draws every cell's rate from Beta with mean p and intra-cell correlation icc
 * (simulation.ts cellRateSample), runs `perCell` binomial episodes on each, and checks three
 * intervals against the model-level rate p at 95%: the beta-binomial posterior (the headline),
 * today's-until-issue-25 design-effect t interval (clustered-rate.ts) and plain Wilson of the totals.
 */

import { betaBinomialRate, type HeadlinePrior } from "./beta-binomial-rate.js";
import { clusteredRateInterval } from "./clustered-rate.js";
import { binomialSample, cellRateSample, mulberry32 } from "./simulation.js";
import { wilsonInterval } from "./wilson.js";

/** One setting of {@link simulateHeadlineCoverage}. */
export interface HeadlineSetting {
  cells: number;
  icc: number;
  /** Model-level rate: the mean of the cells' rates. */
  p: number;
  /** Episodes on each cell. */
  perCell: number;
}

/** The three methods the simulation compares. */
export type HeadlineMethod = "beta_binomial" | "design_effect_t" | "wilson";

/** Coverage of p and mean width per method. */
export interface HeadlineCoverage {
  runs: number;
  coverage: Record<HeadlineMethod, number>;
  meanWidth: Record<HeadlineMethod, number>;
}

/**
 * `runs` synthetic units of `setting`. The headline depends only on the multiset of cell counts, so
 * it is computed once per multiset (`cache`, which the caller may share across settings with the
 * same prior).
 */
export function simulateHeadlineCoverage(
  setting: HeadlineSetting, runs: number, seed: number, options: { prior?: HeadlinePrior; cache?: Map<string, [number, number]> } = {},
): HeadlineCoverage {
  const { cells, icc, p, perCell } = setting;
  const random = mulberry32(seed);
  const cache = options.cache ?? new Map<string, [number, number]>();
  const covered = { beta_binomial: 0, design_effect_t: 0, wilson: 0 };
  const width = { beta_binomial: 0, design_effect_t: 0, wilson: 0 };
  for (let r = 0; r < runs; r++) {
    const counts = Array.from({ length: cells }, () => ({ k: binomialSample(random, perCell, cellRateSample(random, p, icc)), n: perCell }));
    const key = counts.map((c) => c.k).sort((a, b) => a - b).join(",") + `/${perCell}`;
    let headline = cache.get(key);
    if (!headline) {
      headline = betaBinomialRate(counts, { prior: options.prior }).ci;
      cache.set(key, headline);
    }
    const k = counts.reduce((sum, c) => sum + c.k, 0);
    const intervals: Record<HeadlineMethod, [number, number]> = {
      beta_binomial: headline,
      design_effect_t: clusteredRateInterval(counts).ci,
      wilson: wilsonInterval(k, cells * perCell),
    };
    for (const method of ["beta_binomial", "design_effect_t", "wilson"] as const) {
      const [low, high] = intervals[method];
      if (low <= p && p <= high) covered[method]++;
      width[method] += high - low;
    }
  }
  const per = (x: Record<HeadlineMethod, number>) => ({ beta_binomial: x.beta_binomial / runs, design_effect_t: x.design_effect_t / runs, wilson: x.wilson / runs });
  return { runs, coverage: per(covered), meanWidth: per(width) };
}
