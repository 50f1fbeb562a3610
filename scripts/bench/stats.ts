/**
 * Benchmark: the operating characteristics behind docs/statistics.md (issue 10), one JSON line per
 * figure ({"bench": "stats", "metric": "...", "value": 0.95, "unit": "ratio"}). Exact wherever an
 * exact computation exists (threshold and compare power, family-wise false regressions); seeded
 * simulations of 20 000 runs otherwise (cell clustering, verify agreement, confidence sequences).
 *
 *   npm run bench -- stats
 *   npx tsx scripts/bench/stats.ts          (alone)
 *
 * Groups: cells, verify, regressions, threshold, compare. Producers in EXTRA_FIGURES run after them.
 */

import { pathToFileURL } from "node:url";
import type { Figure } from "../bench.js";
import { run as headlineFigures } from "./stats-headline.js";
import { run as unassistedFigures } from "./stats-unassisted.js";
import { run as twoSampleFigures } from "./stats-two-sample.js";
import { run as pairedCellFigures } from "./stats-paired-cells.js";
import { run as cellThresholdFigures } from "./stats-cell-threshold.js";
import { run as cellRegressionFigures } from "./stats-cell-regression.js";
import { agreement, type AgreementPair } from "../../coordinator/stats/agreement.js";
import { binomialPmf } from "../../coordinator/stats/binomial.js";
import { pairedDifferenceInterval, type PairedCounts } from "../../coordinator/stats/paired-difference.js";
import { benjaminiHochbergAdjust, detectRegression } from "../../coordinator/stats/regression.js";
import {
  createSequentialCompare,
  differenceConfidenceSequence,
  pairsForPower,
  sequentialCompareOperatingCharacteristics,
} from "../../coordinator/stats/sequential-compare.js";
import {
  checkpointAlpha,
  createThresholdTest,
  fixedNExactPower,
  logEvidenceAbove,
  thresholdOperatingCharacteristics,
} from "../../coordinator/stats/sequential-threshold.js";
import { binomialSample, cellRateSample, mulberry32, simulateClusteredCoverage, type Uniform } from "../../coordinator/stats/simulation.js";
import { fixedPairsForPower } from "./sequential-compare.js";

const BENCH = "stats";
const RUNS = 20000;

/** A producer of figures, run after the built-in groups. */
export type FigureProducer = () => Figure[] | Promise<Figure[]>;

/** Extra figure groups, run after the built-in ones in order: those that go through the run result code. */
export const EXTRA_FIGURES: FigureProducer[] = [unassistedFigures, headlineFigures, () => twoSampleFigures(), () => pairedCellFigures(), () => cellThresholdFigures(), () => cellRegressionFigures()];

const figure = (metric: string, value: number, unit = "ratio"): Figure => ({ bench: BENCH, metric, value, unit });

// ---------------------------------------------------------------------------------------------
// Cells: the pooled-rate interval of a unit whose episodes ran on several cells.

const CELL_COUNTS = [4, 8];
const ICCS = [0, 0.02, 0.05];
const CELL_RATES = [0.5, 0.8, 0.9];
const UNIT_EPISODES = [100, 400];

function cellFigures(): Figure[] {
  const figures: Figure[] = [];
  let seed = 1000;
  for (const cells of CELL_COUNTS) {
    for (const icc of ICCS) {
      for (const n of UNIT_EPISODES) {
        for (const p of CELL_RATES) {
          const result = simulateClusteredCoverage({ cells, icc, p, n }, RUNS, seed++);
          const at = `cells.${cells}_cells.icc_${icc}.n_${n}.p_${p}`;
          figures.push(figure(`${at}.coverage.clustered`, result.coverage.clustered));
          figures.push(figure(`${at}.coverage.wilson`, result.coverage.wilson));
          figures.push(figure(`${at}.mean_width.clustered`, result.meanWidth.clustered));
          figures.push(figure(`${at}.mean_width.wilson`, result.meanWidth.wilson));
        }
      }
    }
  }
  const coverage = figures.filter((f) => f.metric.endsWith("coverage.clustered")).map((f) => f.value);
  figures.push(figure("cells.min_coverage.clustered", Math.min(...coverage)));
  figures.push(figure("cells.min_coverage.wilson", Math.min(...figures.filter((f) => f.metric.endsWith("coverage.wilson")).map((f) => f.value))));
  figures.push(figure("cells.nominal", 0.95));
  figures.push(figure("cells.runs_per_setting", RUNS, "runs"));
  return figures;
}

// ---------------------------------------------------------------------------------------------
// Verify: sim-to-real agreement when several robots replay each scenario.

const ROBOTS_PER_SCENARIO = 3;
const AGREEMENT = 0.8;
const REAL_RATE = 0.6;
/** Between-scenario spread of the real success rate (scenario difficulty). */
const REAL_RATE_ICC = 0.3;

/**
 * One verify run: per scenario an agreement probability a_s (mean 0.8, intra-scenario correlation
 * `icc`) and a real success rate r_s (mean 0.6, correlation 0.3); each robot's real outcome is
 * Bernoulli(r_s) and the simulator agrees with it with probability a_s. Population agreement is
 * 0.8; P(sim succeeds) = 0.8·0.6 + 0.2·0.4 = 0.56, so kappa = (0.8 - pe)/(1 - pe) with
 * pe = 0.56·0.6 + 0.44·0.4 = 0.512.
 */
function verifyRun(random: Uniform, scenarios: number, icc: number): AgreementPair[] {
  const pairs: AgreementPair[] = [];
  for (let s = 0; s < scenarios; s++) {
    const agree = cellRateSample(random, AGREEMENT, icc);
    const realRate = cellRateSample(random, REAL_RATE, REAL_RATE_ICC);
    for (let robot = 0; robot < ROBOTS_PER_SCENARIO; robot++) {
      const real = random() < realRate;
      pairs.push({ sim: random() < agree ? real : !real, real, cluster: s });
    }
  }
  return pairs;
}

function verifyFigures(): Figure[] {
  const figures: Figure[] = [];
  const pe = 0.56 * REAL_RATE + 0.44 * (1 - REAL_RATE);
  const kappa = (AGREEMENT - pe) / (1 - pe);
  let seed = 2000;
  for (const scenarios of [30, 40]) {
    for (const icc of [0, 0.1, 0.3]) {
      const random = mulberry32(seed++);
      const covered = { plain: 0, clustered: 0, kappa_plain: 0, kappa_clustered: 0 };
      const width = { plain: 0, clustered: 0 };
      for (let r = 0; r < RUNS; r++) {
        const pairs = verifyRun(random, scenarios, icc);
        const clustered = agreement(pairs);
        const plain = agreement(pairs.map(({ sim, real }) => ({ sim, real })));
        const inside = (ci: [number, number] | null, value: number) => ci !== null && ci[0] <= value && value <= ci[1];
        if (inside(plain.ci95, AGREEMENT)) covered.plain++;
        if (inside(clustered.ci95, AGREEMENT)) covered.clustered++;
        if (inside(plain.kappa_ci, kappa)) covered.kappa_plain++;
        if (inside(clustered.kappa_ci, kappa)) covered.kappa_clustered++;
        width.plain += plain.ci95[1] - plain.ci95[0];
        width.clustered += clustered.ci95[1] - clustered.ci95[0];
      }
      const at = `verify.${scenarios}_scenarios.icc_${icc}`;
      figures.push(figure(`${at}.agreement_coverage.wilson`, covered.plain / RUNS));
      figures.push(figure(`${at}.agreement_coverage.clustered`, covered.clustered / RUNS));
      figures.push(figure(`${at}.agreement_mean_width.wilson`, width.plain / RUNS));
      figures.push(figure(`${at}.agreement_mean_width.clustered`, width.clustered / RUNS));
      figures.push(figure(`${at}.kappa_coverage.plain`, covered.kappa_plain / RUNS));
      figures.push(figure(`${at}.kappa_coverage.clustered`, covered.kappa_clustered / RUNS));
    }
  }
  figures.push(figure("verify.robots_per_scenario", ROBOTS_PER_SCENARIO, "robots"));
  figures.push(figure("verify.true_kappa", kappa, "kappa"));
  figures.push(figure("verify.runs_per_setting", RUNS, "runs"));
  return figures;
}

// ---------------------------------------------------------------------------------------------
// Regressions: false alarms over a family of unchanged units.

const REGRESSION_N = 50;
const REGRESSION_ALPHA = 0.05;

function regressionFigures(): Figure[] {
  const figures: Figure[] = [];
  const n = REGRESSION_N;
  for (const p of [0.5, 0.8]) {
    // The one-sided Fisher p-value of every (prior, current) outcome, with its probability.
    const pValue = (k1: number, k2: number) => detectRegression({ k: k1, n }, { k: k2, n }, { alpha: REGRESSION_ALPHA }).p_value;
    const table: number[][] = [];
    const outcomes: Array<[number, number]> = [];
    for (let k1 = 0; k1 <= n; k1++) {
      table.push([]);
      for (let k2 = 0; k2 <= n; k2++) {
        table[k1].push(pValue(k1, k2));
        outcomes.push([table[k1][k2], binomialPmf(k1, n, p) * binomialPmf(k2, n, p)]);
      }
    }
    const atMost = (c: number) => outcomes.reduce((sum, [value, weight]) => sum + (value <= c ? weight : 0), 0);
    for (const m of [12, 24]) {
      const at = `regressions.${m}_units.p_${p}`;
      // Exact: units are independent; Holm flags some unit exactly when the smallest p <= alpha/m.
      figures.push(figure(`${at}.familywise_false_alarm.per_unit_alpha`, 1 - (1 - atMost(REGRESSION_ALPHA)) ** m));
      figures.push(figure(`${at}.familywise_false_alarm.holm`, 1 - (1 - atMost(REGRESSION_ALPHA / m)) ** m));
      // Benjamini-Hochberg has no product form: simulated (with every unit unchanged, its FDR is this rate).
      const random = mulberry32(3000 + m + Math.round(p * 10));
      let flagged = 0;
      for (let r = 0; r < RUNS; r++) {
        const family = Array.from({ length: m }, () => table[binomialSample(random, n, p)][binomialSample(random, n, p)]);
        if (benjaminiHochbergAdjust(family).some((adjusted) => adjusted <= REGRESSION_ALPHA)) flagged++;
      }
      figures.push(figure(`${at}.familywise_false_alarm.benjamini_hochberg`, flagged / RUNS));
    }
  }
  figures.push(figure("regressions.alpha", REGRESSION_ALPHA));
  figures.push(figure("regressions.episodes_per_run", REGRESSION_N, "episodes"));
  return figures;
}

// ---------------------------------------------------------------------------------------------
// Threshold: power at the product's default budget, exact.

const THRESHOLD_BUDGET = 100;
const THRESHOLD_ALPHA = 0.05;

function thresholdFigures(): Figure[] {
  const figures: Figure[] = [];
  for (const target of [0.7, 0.8, 0.9]) {
    const options = { target, alpha: THRESHOLD_ALPHA, maxEpisodes: THRESHOLD_BUDGET };
    const state = createThresholdTest(options).state();
    const t = `threshold.target_${target}`;
    figures.push(figure(`${t}.final_critical`, state.final_critical ?? NaN, "successes"));
    figures.push(figure(`${t}.false_pass_at_target.final_look`, state.alpha_spent));
    figures.push(figure(`${t}.false_pass_at_target.no_final_look`, thresholdOperatingCharacteristics({ ...options, finalLook: false }, target).pass));
    figures.push(figure(`${t}.false_pass_at_target.fixed_n_exact`, fixedNExactPower(target, THRESHOLD_ALPHA, THRESHOLD_BUDGET, target)));
    for (const step of [0.05, 0.1, 0.15]) {
      const p = Math.round((target + step) * 100) / 100;
      if (p >= 1) continue;
      const withFinal = thresholdOperatingCharacteristics(options, p);
      const without = thresholdOperatingCharacteristics({ ...options, finalLook: false }, p);
      figures.push(figure(`${t}.true_${p}.pass.final_look`, withFinal.pass));
      figures.push(figure(`${t}.true_${p}.pass.no_final_look`, without.pass));
      figures.push(figure(`${t}.true_${p}.pass.fixed_n_exact`, fixedNExactPower(target, THRESHOLD_ALPHA, THRESHOLD_BUDGET, p)));
      figures.push(figure(`${t}.true_${p}.inconclusive.final_look`, withFinal.inconclusive));
      figures.push(figure(`${t}.true_${p}.expected_episodes`, withFinal.expected_episodes, "episodes"));
    }
  }
  // Checkpoints, at the worst case (every policy exactly at target 0.8), each test run to its end:
  // P(some checkpoint passes falsely) with a fresh alpha per checkpoint and with checkpointAlpha.
  const base = { target: 0.8, maxEpisodes: THRESHOLD_BUDGET };
  let fresh = 1;
  let spent = 1;
  for (let j = 1; j <= 10; j++) {
    fresh *= 1 - createThresholdTest({ ...base, alpha: THRESHOLD_ALPHA }).state().alpha_spent;
    spent *= 1 - createThresholdTest({ ...base, alpha: checkpointAlpha(THRESHOLD_ALPHA, j) }).state().alpha_spent;
    if (j === 1 || j === 2 || j === 5 || j === 10) {
      figures.push(figure(`threshold.checkpoints_${j}.familywise_false_pass.fresh_alpha`, 1 - fresh));
      figures.push(figure(`threshold.checkpoints_${j}.familywise_false_pass.checkpoint_alpha`, 1 - spent));
    }
  }
  for (const j of [1, 2, 3]) {
    const options = { ...base, alpha: checkpointAlpha(THRESHOLD_ALPHA, j) };
    figures.push(figure(`threshold.checkpoint_${j}.alpha`, options.alpha));
    figures.push(figure(`threshold.checkpoint_${j}.pass_at_0.9`, thresholdOperatingCharacteristics(options, 0.9).pass));
  }
  figures.push(figure("threshold.budget", THRESHOLD_BUDGET, "episodes"));
  figures.push(figure("threshold.alpha", THRESHOLD_ALPHA));
  return figures;
}

// ---------------------------------------------------------------------------------------------
// Compare: power at the cap (exact) and the confidence sequence after early stops (simulated).

const COMPARE_ALPHA = 0.05;
const COMPARE_BETA = 0.2;
const DISCORDANT = 0.3;

function compareFigures(): Figure[] {
  const figures: Figure[] = [];
  for (const delta of [0.1, 0.15, 0.2, 0.3]) {
    const base = { alpha: COMPARE_ALPHA, beta: COMPARE_BETA, delta };
    const fixedN = fixedPairsForPower(COMPARE_ALPHA, COMPARE_BETA, DISCORDANT, 0.5 + delta);
    const needed = pairsForPower(base, DISCORDANT);
    const d = `compare.delta_${delta}`;
    figures.push(figure(`${d}.fixed_n_mcnemar_pairs`, fixedN, "pairs"));
    figures.push(figure(`${d}.pairs_for_power`, needed, "pairs"));
    const caps: Array<[string, number]> = [["cap_1x", fixedN], ["cap_2x", 2 * fixedN], ["cap_4x", 4 * fixedN], ["cap_pairs_for_power", needed]];
    for (const [label, maxPairs] of caps) {
      const h1 = sequentialCompareOperatingCharacteristics({ ...base, maxPairs }, DISCORDANT, 0.5 + delta);
      const h0 = sequentialCompareOperatingCharacteristics({ ...base, maxPairs }, DISCORDANT, 0.5);
      figures.push(figure(`${d}.${label}.power`, h1.a_better));
      figures.push(figure(`${d}.${label}.expected_pairs_h1`, h1.expected_pairs, "pairs"));
      figures.push(figure(`${d}.${label}.type1_error`, h0.a_better + h0.b_better));
      figures.push(figure(`${d}.${label}.expected_pairs_h0`, h0.expected_pairs, "pairs"));
    }
  }
  figures.push(...confidenceSequenceFigures());
  figures.push(figure("compare.alpha", COMPARE_ALPHA));
  figures.push(figure("compare.power_target", 1 - COMPARE_BETA));
  figures.push(figure("compare.discordant_share", DISCORDANT));
  return figures;
}

/** A pair at discordant share `discordant`, A winning a discordant pair with probability `shareA`. */
function drawPair(random: Uniform, discordant: number, shareA: number): { a: boolean; b: boolean } {
  if (random() < discordant) {
    const a = random() < shareA;
    return { a, b: !a };
  }
  const both = random() < 0.5;
  return { a: both, b: both };
}

/** Counts where k of n would put the one-sided mixture bound at alpha past p: k >= first[n]. */
function exclusionCounts(p: number, alpha: number, horizon: number): Int32Array {
  const first = new Int32Array(horizon + 1);
  const level = Math.log(1 / alpha);
  for (let n = 0; n <= horizon; n++) {
    let k = Math.ceil(n * p);
    while (k <= n && logEvidenceAbove(k, n, p) < level) k++;
    first[n] = k;
  }
  return first;
}

/**
 * The difference's confidence sequence (alpha 0.05) after the comparison stopped (delta 0.2, cap
 * 172 pairs), beside the fixed-n Newcombe interval at the same stop; and its coverage when the
 * analyst stops at the worst moment: P(it excludes the truth at some n <= 400). The latter checks
 * the two component sequences after every pair (cheap: precomputed count thresholds) and computes
 * the difference's interval only where a component excludes its truth.
 */
function confidenceSequenceFigures(): Figure[] {
  const figures: Figure[] = [];
  const horizon = 400;
  let seed = 4000;
  for (const shareA of [0.5, 0.6, 0.7]) {
    const truth = DISCORDANT * (2 * shareA - 1);
    const random = mulberry32(seed++);
    let covered = 0;
    let coveredNewcombe = 0;
    let width = 0;
    let widthNewcombe = 0;
    for (let r = 0; r < RUNS; r++) {
      const compare = createSequentialCompare({ alpha: COMPARE_ALPHA, beta: COMPARE_BETA, delta: 0.2, maxPairs: 172 });
      while (compare.update(drawPair(random, DISCORDANT, shareA)) === "continue");
      const { both, onlyA, onlyB, neither } = compare.state();
      const cs = differenceConfidenceSequence({ both, onlyA, onlyB, neither }, COMPARE_ALPHA).ci;
      const fixed = pairedDifferenceInterval({ both, onlyA, onlyB, neither }, 1 - COMPARE_ALPHA).ci;
      if (cs[0] <= truth && truth <= cs[1]) covered++;
      if (fixed[0] <= truth && truth <= fixed[1]) coveredNewcombe++;
      width += cs[1] - cs[0];
      widthNewcombe += fixed[1] - fixed[0];
    }
    const at = `compare.confidence_sequence.share_a_${shareA}`;
    figures.push(figure(`${at}.coverage_at_sequential_stop`, covered / RUNS));
    figures.push(figure(`${at}.newcombe_coverage_at_sequential_stop`, coveredNewcombe / RUNS));
    figures.push(figure(`${at}.mean_width`, width / RUNS));
    figures.push(figure(`${at}.newcombe_mean_width`, widthNewcombe / RUNS));

    // Worst-moment stopping over the first `horizon` pairs. Component sequences are at alpha/2,
    // i.e. one-sided bounds at alpha/4 each.
    const quarter = COMPARE_ALPHA / 4;
    const shareHigh = exclusionCounts(DISCORDANT, quarter, horizon); // discordant count too high
    const shareLow = exclusionCounts(1 - DISCORDANT, quarter, horizon); // concordant count too high
    const thetaHigh = exclusionCounts(shareA, quarter, horizon);
    const thetaLow = exclusionCounts(1 - shareA, quarter, horizon);
    const everRandom = mulberry32(seed++);
    let ever = 0;
    for (let r = 0; r < RUNS; r++) {
      const counts: PairedCounts = { both: 0, onlyA: 0, onlyB: 0, neither: 0 };
      for (let n = 1; n <= horizon; n++) {
        const { a, b } = drawPair(everRandom, DISCORDANT, shareA);
        if (a && b) counts.both++;
        else if (a) counts.onlyA++;
        else if (b) counts.onlyB++;
        else counts.neither++;
        const m = counts.onlyA + counts.onlyB;
        const componentMisses =
          m >= shareHigh[n] || n - m >= shareLow[n] || (m > 0 && (counts.onlyA >= thetaHigh[m] || counts.onlyB >= thetaLow[m]));
        if (!componentMisses) continue;
        const [low, high] = differenceConfidenceSequence(counts, COMPARE_ALPHA).ci;
        if (truth < low || truth > high) {
          ever++;
          break;
        }
      }
    }
    figures.push(figure(`${at}.coverage_at_worst_stop_within_${horizon}_pairs`, 1 - ever / RUNS));
  }
  return figures;
}

export async function run(): Promise<Figure[]> {
  const figures = [...cellFigures(), ...verifyFigures(), ...regressionFigures(), ...thresholdFigures(), ...compareFigures()];
  for (const produce of EXTRA_FIGURES) figures.push(...(await produce()));
  figures.push(figure("runs_per_simulated_figure", RUNS, "runs"));
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const f of await run()) console.log(JSON.stringify(f));
}
