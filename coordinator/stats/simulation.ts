/**
 * Seeded Monte Carlo of the sequential procedures: the evidence behind the error rates that
 * docs/statistics.md states, shared by the unit tests (small) and scripts/bench (large).
 */

import { clusteredRateInterval } from "./clustered-rate.js";
import type { ThresholdProcedure } from "./sequential-threshold.js";
import type { CompareDecision, SequentialCompare } from "./sequential-compare.js";
import { wilsonInterval } from "./wilson.js";

import { mulberry32, type Uniform } from "../../protocol/prng.js";

export { mulberry32, type Uniform };

/** Outcome frequencies of a threshold procedure over many synthetic runs. */
export interface ThresholdSimulation {
  runs: number;
  passRate: number;
  meanEpisodes: number;
}

/** Runs `runs` synthetic runs at true success rate `p`, each to a decision. */
export function simulateThreshold(create: () => ThresholdProcedure, p: number, runs: number, seed: number): ThresholdSimulation {
  const random = mulberry32(seed);
  let passes = 0;
  let episodes = 0;
  for (let r = 0; r < runs; r++) {
    const procedure = create();
    let decision = "continue";
    while (decision === "continue") {
      decision = procedure.update(random() < p);
      episodes++;
    }
    if (decision === "pass") passes++;
  }
  return { runs, passRate: passes / runs, meanEpisodes: episodes / runs };
}

/** Outcome frequencies of a sequential paired comparison over many synthetic runs. */
export interface CompareSimulation {
  runs: number;
  rates: Record<Exclude<CompareDecision, "continue">, number>;
  meanPairs: number;
}

/**
 * Runs `runs` synthetic paired comparisons. Each pair is discordant with probability `discordant`;
 * a discordant pair goes to A with probability `shareA` (0.5 = no difference).
 */
export function simulateCompare(
  create: () => SequentialCompare,
  discordant: number,
  shareA: number,
  runs: number,
  seed: number,
): CompareSimulation {
  const random = mulberry32(seed);
  const counts = { a_better: 0, b_better: 0, no_difference: 0 };
  let pairs = 0;
  for (let r = 0; r < runs; r++) {
    const compare = create();
    let decision: CompareDecision = "continue";
    while (decision === "continue") {
      let a: boolean;
      let b: boolean;
      if (random() < discordant) {
        a = random() < shareA;
        b = !a;
      } else {
        a = b = random() < 0.5;
      }
      decision = compare.update({ a, b });
      pairs++;
    }
    counts[decision]++;
  }
  return {
    runs,
    rates: { a_better: counts.a_better / runs, b_better: counts.b_better / runs, no_difference: counts.no_difference / runs },
    meanPairs: pairs / runs,
  };
}

/** A standard normal draw (Box-Muller). */
export function normalSample(random: Uniform): number {
  let u = 0;
  while (u === 0) u = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

/** A Gamma(shape, 1) draw (Marsaglia & Tsang 2000; shape < 1 by the boost Γ(a) = Γ(a+1)·U^(1/a)). */
export function gammaSample(random: Uniform, shape: number): number {
  if (shape < 1) return gammaSample(random, shape + 1) * Math.pow(random(), 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      x = normalSample(random);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = random();
    if (u < 1 - 0.0331 * x ** 4 || Math.log(u) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v;
  }
}

/**
 * A cell's success rate drawn around `mean` with intra-cell correlation `icc`: Beta with mean
 * `mean` and a + b = 1/icc - 1, so that episodes on one cell correlate by icc (beta-binomial);
 * icc = 0 gives every cell the rate `mean`.
 */
export function cellRateSample(random: Uniform, mean: number, icc: number): number {
  if (icc === 0) return mean;
  const sum = 1 / icc - 1;
  const a = gammaSample(random, mean * sum);
  return a / (a + gammaSample(random, (1 - mean) * sum));
}

/** Successes in n Bernoulli(p) episodes. */
export function binomialSample(random: Uniform, n: number, p: number): number {
  let k = 0;
  for (let i = 0; i < n; i++) if (random() < p) k++;
  return k;
}

/** One setting of {@link simulateClusteredCoverage}. */
export interface ClusteredCoverageSetting {
  /** Number of cells the unit's episodes run on. */
  cells: number;
  /** Intra-cell correlation of episode outcomes. */
  icc: number;
  /** Model-level rate: the mean of the cells' rates. */
  p: number;
  /** Episodes of the unit, split over the cells as evenly as integers allow. */
  n: number;
}

/** Coverage of the model-level rate and mean width, for the clustered interval and plain Wilson. */
export interface ClusteredCoverage {
  runs: number;
  coverage: { clustered: number; wilson: number };
  meanWidth: { clustered: number; wilson: number };
}

/**
 * Runs `runs` synthetic units: each cell's rate is drawn by {@link cellRateSample}, its episodes
 * are binomial at that rate, and both intervals of the pooled count (clusteredRateInterval over the
 * cells, and Wilson of the totals) are checked against the model-level rate `p` at 95%.
 */
export function simulateClusteredCoverage(setting: ClusteredCoverageSetting, runs: number, seed: number): ClusteredCoverage {
  const { cells, icc, p, n } = setting;
  const random = mulberry32(seed);
  const sizes = Array.from({ length: cells }, (_, i) => Math.floor(n / cells) + (i < n % cells ? 1 : 0));
  const covered = { clustered: 0, wilson: 0 };
  const width = { clustered: 0, wilson: 0 };
  for (let r = 0; r < runs; r++) {
    const counts = sizes.map((size) => ({ k: binomialSample(random, size, cellRateSample(random, p, icc)), n: size }));
    const k = counts.reduce((sum, c) => sum + c.k, 0);
    const intervals = { clustered: clusteredRateInterval(counts).ci, wilson: wilsonInterval(k, n) };
    for (const name of ["clustered", "wilson"] as const) {
      const [low, high] = intervals[name];
      if (low <= p && p <= high) covered[name]++;
      width[name] += high - low;
    }
  }
  return {
    runs,
    coverage: { clustered: covered.clustered / runs, wilson: covered.wilson / runs },
    meanWidth: { clustered: width.clustered / runs, wilson: width.wilson / runs },
  };
}
