/**
 * Seeded Monte Carlo of the Bradley-Terry fit (bradley-terry.ts): outcomes drawn from the model with
 * known strengths, and how often the fitted 95% intervals cover them. Shared by the unit tests
 * (small) and scripts/bench/leaderboard-tiers.ts (large).
 */

import { fitBradleyTerry } from "./bradley-terry.js";
import { mulberry32 } from "./simulation.js";

/** A round robin to simulate: every pair of policies meets in `episodesPerPair` paired episodes. */
export interface BradleyTerrySetting {
  /** True log-strengths (any location; compared after centring within each fitted component). */
  strengths: readonly number[];
  episodesPerPair: number;
  /** Probability that a paired episode is a tie (same outcome for both). */
  tieRate: number;
  /** Pairs that meet; every pair by default. */
  pairs?: ReadonlyArray<readonly [number, number]>;
}

/** Coverage of the 95% intervals of centred log-strengths, and the estimates' accuracy. */
export interface BradleyTerryCoverage {
  replications: number;
  /** Share of (replication, policy) intervals that contain the true centred log-strength. */
  coverage: number;
  meanWidth: number;
  /** Mean of (estimate - truth) for the strongest policy: the prior's pull towards the mean. */
  strongestBias: number;
  /** Root mean square of (estimate - truth). */
  rmse: number;
}

/** Draws `replications` sets of outcomes from the Bradley-Terry model and fits each. */
export function simulateBradleyTerryCoverage(setting: BradleyTerrySetting, replications: number, seed: number): BradleyTerryCoverage {
  const random = mulberry32(seed);
  const { strengths, episodesPerPair, tieRate } = setting;
  const m = strengths.length;
  const strongest = Math.max(...strengths);
  const pairs = setting.pairs ?? Array.from({ length: m }, (_, i) => Array.from({ length: m - i - 1 }, (_, d) => [i, i + d + 1] as const)).flat();
  let covered = 0;
  let width = 0;
  let strongestError = 0;
  let strongestCount = 0;
  let squared = 0;
  let intervals = 0;
  for (let r = 0; r < replications; r++) {
    const comparisons = pairs.map(([i, j]) => {
      const win = 1 / (1 + Math.exp(strengths[j] - strengths[i]));
      let winsA = 0;
      let winsB = 0;
      let ties = 0;
      for (let e = 0; e < episodesPerPair; e++) {
        if (random() < tieRate) ties++;
        else if (random() < win) winsA++;
        else winsB++;
      }
      return { a: `p${i}`, b: `p${j}`, winsA, winsB, ties };
    });
    const fit = fitBradleyTerry(comparisons);
    // Strengths are centred within their component (the whole board unless some pair had no
    // decisive episode and that cut it).
    const truthOf = (id: string) => strengths[Number(id.slice(1))];
    const centres = fit.components.map((ids) => ids.reduce((sum, id) => sum + truthOf(id), 0) / ids.length);
    for (const policy of fit.policies) {
      if (!policy.ci95) continue;
      const truth = truthOf(policy.id) - centres[policy.component];
      intervals++;
      if (policy.ci95[0] <= truth && truth <= policy.ci95[1]) covered++;
      width += policy.ci95[1] - policy.ci95[0];
      if (truthOf(policy.id) === strongest) {
        strongestError += policy.log_strength - truth;
        strongestCount++;
      }
      squared += (policy.log_strength - truth) ** 2;
    }
  }
  return {
    replications,
    coverage: covered / intervals,
    meanWidth: width / intervals,
    strongestBias: strongestError / strongestCount,
    rmse: Math.sqrt(squared / intervals),
  };
}
