/**
 * Figure group of the `stats-cells` bench (issue 25, item 4): the threshold test over cells
 * (`createCellThresholdTest`, coordinator/stats/cell-threshold.ts) beside the cell-blind test
 * (`createThresholdTest`, the mixture martingale), on the same draws. Episodes go to `cells` cells in
 * turn (episode i on cell i mod cells); each cell's rate is drawn from a Beta around the true rate
 * with the ICC shown; the test looks after every episode, up to BUDGET episodes, target TARGET at
 * alpha ALPHA (the product's defaults).
 *
 * - `false_pass`: share of RUNS replicates at a true model-level rate equal to the target that pass
 *   (target <= alpha); Monte Carlo s.e. about sqrt(0.05 · 0.95 / RUNS) = 0.011 at the default 400.
 * - `power`: share that pass at 0.85, 0.9 and 0.95, on RUNS / 2 replicates (s.e. at most 0.035).
 * - `calibration`: the false-pass rate at the other settings the boundary was checked on (target 0.5
 *   and 0.9, budgets 30 and 200, alpha 0.2) at 4 cells and ICC 0.1, the hardest case found.
 *
 *   npm run bench -- stats-cells
 *   npx tsx scripts/bench/stats-cell-threshold.ts [runs]
 */
import { pathToFileURL } from "node:url";
import { createCellThresholdTest } from "../../coordinator/stats/cell-threshold.js";
import { createThresholdTest } from "../../coordinator/stats/sequential-threshold.js";
import { cellRateSample, mulberry32, type Uniform } from "../../coordinator/stats/simulation.js";
import type { Figure } from "../bench.js";

const BENCH = "stats";
const RUNS = 400;
const TARGET = 0.8;
const ALPHA = 0.05;
const BUDGET = 100;
const CELLS = [1, 2, 3, 4];
const ICCS = [0, 0.05, 0.1];
const POWER_CELLS = [1, 4];
const POWER_ICCS = [0, 0.1];
const POWER_RATES = [0.85, 0.9, 0.95];
const CALIBRATION: Array<{ target: number; alpha: number; budget: number }> = [
  { target: 0.5, alpha: 0.05, budget: 100 },
  { target: 0.9, alpha: 0.05, budget: 100 },
  { target: 0.8, alpha: 0.05, budget: 30 },
  { target: 0.8, alpha: 0.05, budget: 200 },
  { target: 0.8, alpha: 0.2, budget: 100 },
];

const figure = (metric: string, value: number, unit = "ratio"): Figure => ({ bench: BENCH, metric, value: Number(value.toFixed(6)), unit });

/** One replicate: whether the cell test and the cell-blind test pass. */
export function thresholdReplicate(
  random: Uniform, rate: number, cells: number, icc: number, setting: { target: number; alpha: number; budget: number } = { target: TARGET, alpha: ALPHA, budget: BUDGET },
): { cellPass: boolean; blindPass: boolean } {
  const thetas = Array.from({ length: cells }, () => cellRateSample(random, rate, icc));
  const cellTest = createCellThresholdTest({ target: setting.target, alpha: setting.alpha, maxEpisodes: setting.budget });
  const blind = createThresholdTest({ target: setting.target, alpha: setting.alpha, maxEpisodes: setting.budget });
  let cellDecision = "continue";
  let blindDecision = "continue";
  for (let i = 0; i < setting.budget && (cellDecision === "continue" || blindDecision === "continue"); i++) {
    const g = i % cells;
    const ok = random() < thetas[g];
    if (cellDecision === "continue") cellDecision = cellTest.update(ok, `c${g}`);
    if (blindDecision === "continue") blindDecision = blind.update(ok);
  }
  return { cellPass: cellDecision === "pass", blindPass: blindDecision === "pass" };
}

function passRates(runs: number, seed: number, rate: number, cells: number, icc: number, setting?: { target: number; alpha: number; budget: number }) {
  const random = mulberry32(seed);
  let cell = 0;
  let blind = 0;
  for (let r = 0; r < runs; r++) {
    const x = thresholdReplicate(random, rate, cells, icc, setting);
    if (x.cellPass) cell++;
    if (x.blindPass) blind++;
  }
  return { cell: cell / runs, blind: blind / runs };
}

/** `runs` replicates per setting (RUNS unless given); `onFigure` sees each figure as it is made. */
export function run(runs = RUNS, onFigure: (f: Figure) => void = () => {}): Figure[] {
  const figures: Figure[] = [];
  const emit = (f: Figure) => {
    figures.push(f);
    onFigure(f);
  };
  let seed = 28000;
  for (const cells of CELLS) {
    for (const icc of ICCS) {
      const at = `${cells}_cells.icc_${icc}`;
      const p = passRates(runs, seed++, TARGET, cells, icc);
      emit(figure(`threshold_cells.new.false_pass.${at}`, p.cell));
      emit(figure(`threshold_cells.old.false_pass.${at}`, p.blind));
    }
  }
  for (const cells of POWER_CELLS) {
    for (const icc of POWER_ICCS) {
      for (const rate of POWER_RATES) {
        const at = `${cells}_cells.icc_${icc}.rate_${rate}`;
        const p = passRates(Math.ceil(runs / 2), seed++, rate, cells, icc);
        emit(figure(`threshold_cells.new.power.${at}`, p.cell));
        emit(figure(`threshold_cells.old.power.${at}`, p.blind));
      }
    }
  }
  for (const setting of CALIBRATION) {
    const p = passRates(runs, seed++, setting.target, 4, 0.1, setting);
    emit(figure(`threshold_cells.new.false_pass.calibration.target_${setting.target}.alpha_${setting.alpha}.budget_${setting.budget}.4_cells.icc_0.1`, p.cell));
  }
  emit(figure("threshold_cells.target", TARGET));
  emit(figure("threshold_cells.alpha", ALPHA));
  emit(figure("threshold_cells.budget", BUDGET, "episodes"));
  emit(figure("threshold_cells.runs_per_setting", runs, "runs"));
  emit(figure("threshold_cells.false_pass_mc_se", Math.sqrt((ALPHA * (1 - ALPHA)) / runs)));
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const runs = process.argv[2] ? Number(process.argv[2]) : RUNS;
  run(runs, (f) => console.log(JSON.stringify(f)));
}
