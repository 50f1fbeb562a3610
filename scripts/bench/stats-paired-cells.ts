/**
 * Figure group of the `stats` bench (issue 25, item 4): paired compare blocked by cell. PAIRS pairs are
 * split evenly over `cells` cells, both episodes of a pair on one cell (as the scheduler places them).
 * Each policy's cell rates are drawn from a Beta around its rate with the ICC shown, independently for
 * the two policies (cell effects that differ by policy: the case where ignoring cells misleads); given
 * the rates, episodes are independent. Per setting, RUNS seeded replicates, and on each:
 *
 * - new: the model-level rule, `pairedCellDifference` over the per-cell pair counts (default prior);
 * - old: Newcombe's paired interval of all pairs (`pairedDifferenceInterval`), cells ignored.
 *
 * `false_difference`: share of replicates with equal rates (0.5 and 0.5, 0.7 and 0.7, averaged) whose
 * 95% interval excludes 0 (target <= alpha = 0.05); Monte Carlo s.e. sqrt(0.05 · 0.95 / (2 · RUNS)),
 * 0.007 at the default 500. `power`: 0.7 against 0.5, share whose interval lies above 0; s.e. at most
 * 0.022.
 *
 *   npm run bench -- stats-cells     (with the threshold and matrix groups)
 *   npx tsx scripts/bench/stats-paired-cells.ts [runs]
 */
import { pathToFileURL } from "node:url";
import { pairedCellDifference, type CellPairCounts } from "../../coordinator/stats/paired-cell-difference.js";
import { pairedDifferenceInterval } from "../../coordinator/stats/paired-difference.js";
import { cellRateSample, mulberry32, type Uniform } from "../../coordinator/stats/simulation.js";
import type { Figure } from "../bench.js";

const BENCH = "stats";
export const PAIRS = 200;
const RUNS = 500;
const CELLS = [3, 4];
const ICCS = [0.05, 0.1];
const NULL_RATES = [0.5, 0.7];

const figure = (metric: string, value: number, unit = "ratio"): Figure => ({ bench: BENCH, metric, value: Number(value.toFixed(6)), unit });

/** One replicate's per-cell pair counts: pair i on cell i mod cells. */
export function drawPairedCells(random: Uniform, rateA: number, rateB: number, cells: number, icc: number, pairs = PAIRS): CellPairCounts[] {
  const thetaA = Array.from({ length: cells }, () => cellRateSample(random, rateA, icc));
  const thetaB = Array.from({ length: cells }, () => cellRateSample(random, rateB, icc));
  const counts = thetaA.map(() => ({ n: 0, onlyA: 0, onlyB: 0, both: 0 }));
  for (let i = 0; i < pairs; i++) {
    const g = i % cells;
    const a = random() < thetaA[g];
    const b = random() < thetaB[g];
    counts[g].n += 1;
    if (a && b) counts[g].both += 1;
    else if (a) counts[g].onlyA += 1;
    else if (b) counts[g].onlyB += 1;
  }
  return counts;
}

type Claim = 1 | -1 | 0;
const claimOf = (ci: readonly [number, number]): Claim => (ci[0] > 0 ? 1 : ci[1] < 0 ? -1 : 0);

function claims(counts: CellPairCounts[]): { fresh: Claim; old: Claim } {
  const tally = counts.reduce((s, c) => ({ both: s.both + c.both, onlyA: s.onlyA + c.onlyA, onlyB: s.onlyB + c.onlyB, neither: s.neither + c.n - c.both - c.onlyA - c.onlyB }),
    { both: 0, onlyA: 0, onlyB: 0, neither: 0 });
  return { fresh: claimOf(pairedCellDifference(counts).ci), old: claimOf(pairedDifferenceInterval(tally, 0.95).ci) };
}

/** `runs` replicates per rate (RUNS unless given); `onFigure` sees each figure as it is made. */
export function run(runs = RUNS, onFigure: (f: Figure) => void = () => {}): Figure[] {
  const figures: Figure[] = [];
  const emit = (f: Figure) => {
    figures.push(f);
    onFigure(f);
  };
  let seed = 27000;
  for (const cells of CELLS) {
    for (const icc of ICCS) {
      const at = `${cells}_cells.icc_${icc}`;
      const falseClaims = { fresh: 0, old: 0 };
      for (const p of NULL_RATES) {
        const random = mulberry32(seed++);
        for (let r = 0; r < runs; r++) {
          const c = claims(drawPairedCells(random, p, p, cells, icc));
          if (c.fresh !== 0) falseClaims.fresh++;
          if (c.old !== 0) falseClaims.old++;
        }
      }
      const power = { fresh: 0, old: 0 };
      const random = mulberry32(seed++);
      for (let r = 0; r < runs; r++) {
        const c = claims(drawPairedCells(random, 0.7, 0.5, cells, icc));
        if (c.fresh === 1) power.fresh++;
        if (c.old === 1) power.old++;
      }
      for (const [key, name] of [["fresh", "new"], ["old", "old"]] as const) {
        emit(figure(`two_sample.compare_paired.${name}.false_difference.${at}`, falseClaims[key] / (runs * NULL_RATES.length)));
        emit(figure(`two_sample.compare_paired.${name}.power_0.7_vs_0.5.pairs_${PAIRS}.${at}`, power[key] / runs));
      }
    }
  }
  emit(figure("two_sample.compare_paired.runs_per_rate", runs, "runs"));
  emit(figure("two_sample.compare_paired.false_difference_mc_se", Math.sqrt((0.05 * 0.95) / (2 * runs))));
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const runs = process.argv[2] ? Number(process.argv[2]) : RUNS;
  run(runs, (f) => console.log(JSON.stringify(f)));
}
