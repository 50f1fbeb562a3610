/**
 * Figure group of the `stats-cells` bench (issue 25, item 4): regressions over a family of 12 units
 * (a matrix run's, or a gate check's) when cell rates drift between runs. Each unit runs EPISODES
 * episodes per run, split evenly over `cells` cells; each run draws its cells' rates afresh from a
 * Beta around the unit's rate with the ICC shown (run-to-run drift as large as the cell-to-cell
 * variation). Per setting, RUNS seeded replicates of the whole family, and on each:
 *
 * - new: `detectCellRegressions` (each run's beta-binomial posterior, P(current >= baseline), Holm);
 * - old: `detectRegressions` on pooled counts (one-sided Fisher exact, Holm), the rule before.
 *
 * `false_regression`: share of replicates where any unit is flagged while none changed (unit rates
 * spread over 0.5-0.9; target <= alpha = 0.05); Monte Carlo s.e. sqrt(0.05 · 0.95 / RUNS), 0.022 at
 * the default 100. `power`: one unit drops from 0.7 to 0.5 (EPISODES per run), the other 11 unchanged:
 * share where that unit is flagged, on RUNS / 2 replicates.
 *
 *   npm run bench -- stats-cells
 *   npx tsx scripts/bench/stats-cell-regression.ts [runs]
 */
import { pathToFileURL } from "node:url";
import { detectCellRegressions } from "../../coordinator/stats/cell-regression.js";
import { detectRegressions } from "../../coordinator/stats/regression.js";
import { cellRateSample, mulberry32, type Uniform } from "../../coordinator/stats/simulation.js";
import type { Figure } from "../bench.js";

const BENCH = "stats";
const RUNS = 100;
const UNITS = 12;
const EPISODES = 200;
const CELLS = [3, 4];
const ICCS = [0.05, 0.1];
const UNIT_RATES = Array.from({ length: UNITS }, (_, i) => 0.5 + (0.4 * i) / (UNITS - 1));

const figure = (metric: string, value: number, unit = "ratio"): Figure => ({ bench: BENCH, metric, value: Number(value.toFixed(6)), unit });

function drawRun(random: Uniform, rate: number, cells: number, icc: number): Array<{ k: number; n: number }> {
  const thetas = Array.from({ length: cells }, () => cellRateSample(random, rate, icc));
  const counts = thetas.map(() => ({ k: 0, n: 0 }));
  for (let i = 0; i < EPISODES; i++) {
    const g = i % cells;
    counts[g].n += 1;
    if (random() < thetas[g]) counts[g].k += 1;
  }
  return counts;
}

const pooled = (cells: Array<{ k: number; n: number }>) => cells.reduce((s, c) => ({ k: s.k + c.k, n: s.n + c.n }), { k: 0, n: 0 });

function family(random: Uniform, rates: { before: number[]; after: number[] }, cells: number, icc: number): { fresh: boolean[]; old: boolean[] } {
  const pairs = rates.before.map((before, u) => ({ prior: { cells: drawRun(random, before, cells, icc) }, current: { cells: drawRun(random, rates.after[u], cells, icc) } }));
  const fresh = detectCellRegressions(pairs).map((v) => v.regressed);
  const old = detectRegressions(pairs.map((p) => ({ prior: pooled(p.prior.cells), current: pooled(p.current.cells) })), { alpha: 0.05, margin: 0, adjustment: "holm" }).map((v) => v.regressed);
  return { fresh, old };
}

/** `runs` replicates per setting (RUNS unless given); `onFigure` sees each figure as it is made. */
export function run(runs = RUNS, onFigure: (f: Figure) => void = () => {}): Figure[] {
  const figures: Figure[] = [];
  const emit = (f: Figure) => {
    figures.push(f);
    onFigure(f);
  };
  let seed = 29000;
  for (const cells of CELLS) {
    for (const icc of ICCS) {
      const at = `${UNITS}_units.${cells}_cells.icc_${icc}`;
      let random = mulberry32(seed++);
      const falseAlarms = { fresh: 0, old: 0 };
      for (let r = 0; r < runs; r++) {
        const f = family(random, { before: UNIT_RATES, after: UNIT_RATES }, cells, icc);
        if (f.fresh.some(Boolean)) falseAlarms.fresh++;
        if (f.old.some(Boolean)) falseAlarms.old++;
      }
      random = mulberry32(seed++);
      const powerRuns = Math.ceil(runs / 2);
      const power = { fresh: 0, old: 0 };
      const before = UNIT_RATES.map((p, u) => (u === 0 ? 0.7 : p));
      const after = UNIT_RATES.map((p, u) => (u === 0 ? 0.5 : p));
      for (let r = 0; r < powerRuns; r++) {
        const f = family(random, { before, after }, cells, icc);
        if (f.fresh[0]) power.fresh++;
        if (f.old[0]) power.old++;
      }
      emit(figure(`regressions_cells.new.false_regression.${at}`, falseAlarms.fresh / runs));
      emit(figure(`regressions_cells.old.false_regression.${at}`, falseAlarms.old / runs));
      emit(figure(`regressions_cells.new.power_0.7_to_0.5.n_${EPISODES}.${at}`, power.fresh / powerRuns));
      emit(figure(`regressions_cells.old.power_0.7_to_0.5.n_${EPISODES}.${at}`, power.old / powerRuns));
    }
  }
  emit(figure("regressions_cells.runs_per_setting", runs, "runs"));
  emit(figure("regressions_cells.false_regression_mc_se", Math.sqrt((0.05 * 0.95) / runs)));
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const runs = process.argv[2] ? Number(process.argv[2]) : RUNS;
  run(runs, (f) => console.log(JSON.stringify(f)));
}
