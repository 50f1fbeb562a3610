/**
 * Benchmark: average pairs used by the sequential paired comparison (Sobel-Wald SPRT on discordant
 * pairs) against the fixed-n exact McNemar test with the same two-sided alpha and the same power
 * 1 - beta, at a few effect sizes. The fixed n is computed exactly (not simulated); the sequential
 * figures come from seeded synthetic runs, which also confirm its error rates.
 *
 * Run alone: npx tsx scripts/bench/sequential-compare.ts (one JSON line per figure).
 */

import { pathToFileURL } from "node:url";
import { binomialCdf, binomialPmf, binomialUpperTail } from "../../coordinator/stats/binomial.js";
import { createSequentialCompare } from "../../coordinator/stats/sequential-compare.js";
import { simulateCompare } from "../../coordinator/stats/simulation.js";

interface Figure {
  bench: string;
  metric: string;
  value: number;
  unit: string;
}

const BENCH = "sequential-compare";
const RUNS = 20000;
const ALPHA = 0.05;
const BETA = 0.2;
/** Share of pairs where exactly one policy succeeds. */
const DISCORDANT = 0.3;
/** Effect sizes on the discordant-share scale: A wins a discordant pair w.p. 1/2 + delta. */
const DELTAS = [0.1, 0.15, 0.2, 0.3];

/**
 * Smallest number of pairs N at which the two-sided exact McNemar test at `alpha` has power
 * >= 1 - beta when pairs are discordant w.p. `discordant` and A wins a discordant pair w.p. `share`.
 * Power = Σ_m P(m discordant of N) · P(reject | m), computed exactly.
 */
export function fixedPairsForPower(alpha: number, beta: number, discordant: number, share: number, maxPairs = 20000): number {
  const rejectGivenM: number[] = [0];
  let critical = -1; // largest j with 2·P(X <= j | m, 1/2) <= alpha; grows with m
  let power = 0;
  for (let n = 1; n <= maxPairs; n++) {
    const m = n;
    while (critical + 1 < m / 2 && 2 * binomialCdf(critical + 1, m, 0.5) <= alpha) critical++;
    rejectGivenM[m] = critical < 0 ? 0 : binomialCdf(critical, m, share) + binomialUpperTail(m - critical, m, share);
    power = 0;
    for (let k = 0; k <= n; k++) {
      const weight = binomialPmf(k, n, discordant);
      if (weight > 1e-16) power += weight * rejectGivenM[k];
    }
    if (power >= 1 - beta) return n;
  }
  throw new Error(`no N <= ${maxPairs} reaches power ${1 - beta}`);
}

export async function run(): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const delta of DELTAS) {
    const fixed = fixedPairsForPower(ALPHA, BETA, DISCORDANT, 0.5 + delta);
    const create = () => createSequentialCompare({ alpha: ALPHA, beta: BETA, delta, maxPairs: 4 * fixed });
    const null_ = simulateCompare(create, DISCORDANT, 0.5, RUNS, 7001);
    const alt = simulateCompare(create, DISCORDANT, 0.5 + delta, RUNS, 7002);
    const d = `delta_${delta}`;
    figures.push({ bench: BENCH, metric: `${d}.fixed_n_pairs`, value: fixed, unit: "pairs" });
    figures.push({ bench: BENCH, metric: `${d}.sequential_mean_pairs_h1`, value: alt.meanPairs, unit: "pairs" });
    figures.push({ bench: BENCH, metric: `${d}.sequential_mean_pairs_h0`, value: null_.meanPairs, unit: "pairs" });
    figures.push({ bench: BENCH, metric: `${d}.saving_ratio_h1`, value: 1 - alt.meanPairs / fixed, unit: "ratio" });
    figures.push({ bench: BENCH, metric: `${d}.saving_ratio_h0`, value: 1 - null_.meanPairs / fixed, unit: "ratio" });
    figures.push({ bench: BENCH, metric: `${d}.sequential_type1_error`, value: null_.rates.a_better + null_.rates.b_better, unit: "ratio" });
    figures.push({ bench: BENCH, metric: `${d}.sequential_power`, value: alt.rates.a_better, unit: "ratio" });
  }
  figures.push({ bench: BENCH, metric: "alpha", value: ALPHA, unit: "ratio" });
  figures.push({ bench: BENCH, metric: "power_target", value: 1 - BETA, unit: "ratio" });
  figures.push({ bench: BENCH, metric: "discordant_share", value: DISCORDANT, unit: "ratio" });
  figures.push({ bench: BENCH, metric: "runs_per_cell", value: RUNS, unit: "runs" });
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run()) console.log(JSON.stringify(figure));
}
