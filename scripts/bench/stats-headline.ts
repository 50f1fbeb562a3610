/**
 * Figure group of the `stats` bench (issue 25): the beta-binomial headline beside the design-effect t
 * interval it replaced and plain Wilson, over cells {1, 2, 3, 4, 8} x ICC {0, 0.05, 0.1, 0.2}, each
 * setting averaged over model-level rates p in {0.5, 0.7, 0.9} with 20 episodes per cell (the README
 * run's cells). RUNS_PER_P seeded units per p, so each coverage figure rests on 3 x RUNS_PER_P units:
 * Monte Carlo standard error about 0.004 at 0.95 (emitted as `headline.coverage_mc_se`). Then the
 * README run (the expert, 20/20 on three cells, 7/6/7) through the real result code, and the CPU time
 * of one headline at 3, 8 and 50 cells.
 *
 *   npm run bench -- stats              (with the other groups)
 *   npx tsx scripts/bench/stats-headline.ts    (alone)
 */
import { pathToFileURL } from "node:url";
import { computeRunResult } from "../../coordinator/runs/result-summary.js";
import { betaBinomialRate } from "../../coordinator/stats/beta-binomial-rate.js";
import { simulateHeadlineCoverage, type HeadlineMethod } from "../../coordinator/stats/headline-simulation.js";
import { episodeRecordOf } from "../../coordinator/store/episodes-repo.js";
import type { Figure } from "../bench.js";

const BENCH = "stats";
const CELL_COUNTS = [1, 2, 3, 4, 8];
const ICCS = [0, 0.05, 0.1, 0.2];
const RATES = [0.5, 0.7, 0.9];
const PER_CELL = 20;
const RUNS_PER_P = 1000;
const METHODS: HeadlineMethod[] = ["beta_binomial", "design_effect_t", "wilson"];

const figure = (metric: string, value: number, unit = "ratio"): Figure => ({ bench: BENCH, metric, value: Number(value.toFixed(6)), unit });

function coverageFigures(): Figure[] {
  const figures: Figure[] = [];
  const cache = new Map<string, [number, number]>();
  let seed = 25000;
  for (const cells of CELL_COUNTS) {
    for (const icc of ICCS) {
      const coverage = { beta_binomial: 0, design_effect_t: 0, wilson: 0 };
      const width = { beta_binomial: 0, design_effect_t: 0, wilson: 0 };
      for (const p of RATES) {
        const result = simulateHeadlineCoverage({ cells, icc, p, perCell: PER_CELL }, RUNS_PER_P, seed++, { cache });
        for (const m of METHODS) {
          coverage[m] += result.coverage[m] / RATES.length;
          width[m] += result.meanWidth[m] / RATES.length;
        }
      }
      const at = `headline.${cells}_cells.icc_${icc}`;
      for (const m of METHODS) figures.push(figure(`${at}.coverage.${m}`, coverage[m]));
      for (const m of METHODS) figures.push(figure(`${at}.width_over_wilson.${m}`, width[m] / width.wilson));
    }
  }
  // The targets: mean coverage over ICC 0-0.1 at every cell count, and the width at 3 cells, ICC 0.
  for (const cells of CELL_COUNTS) {
    const mean = ICCS.filter((icc) => icc <= 0.1)
      .map((icc) => figures.find((f) => f.metric === `headline.${cells}_cells.icc_${icc}.coverage.beta_binomial`)!.value);
    figures.push(figure(`headline.${cells}_cells.mean_coverage_icc_0_to_0.1.beta_binomial`, mean.reduce((a, b) => a + b, 0) / mean.length));
  }
  figures.push(figure("headline.target.mean_coverage_icc_0_to_0.1", 0.94));
  figures.push(figure("headline.target.width_over_wilson_3_cells_icc_0", 1.8));
  figures.push(figure("headline.coverage_mc_se", Math.sqrt((0.95 * 0.05) / (RUNS_PER_P * RATES.length))));
  figures.push(figure("headline.units_per_setting", RUNS_PER_P * RATES.length, "runs"));
  figures.push(figure("headline.episodes_per_cell", PER_CELL, "episodes"));
  return figures;
}

/** The README run: the expert's 20 episodes on three cells, 7/6/7, all successes, through computeRunResult. */
function readmeFigures(): Figure[] {
  const cells = ["so101-b", "so101-b", "so101-b", "so101-b", "so101-b", "so101-b", "so101-b", "so101-c", "so101-c", "so101-c", "so101-c", "so101-c", "so101-c",
    "so101-d", "so101-d", "so101-d", "so101-d", "so101-d", "so101-d", "so101-d"];
  const episodes = cells.map((cell, idx) => episodeRecordOf({
    id: `ep_${idx}`, run_id: "run_readme", idx, status: "done", attempt: 1, seed: idx, cell_id: cell, outcome: "success",
    failure_cluster: null, duration_s: 20, reset_s: 4, replay_spec: null, meta: null, evaluation: null, interruptions: "[]",
    assigned_at: null, started_at: null, finished_at: null,
  }));
  const result = computeRunResult("run_readme", episodes, { tier: "soak", environmentClass: "standard", priority: "standard" }, "http://bench");
  return [
    figure("readme.n", result.n, "episodes"),
    figure("readme.ci95.lower", result.ci95[0]),
    figure("readme.ci95.upper", result.ci95[1]),
    figure("readme.these_cells.lower", result.cells.these_cells.ci95[0]),
    figure("readme.these_cells.upper", result.cells.these_cells.ci95[1]),
    figure("readme.effective_n", result.cells.effective_n, "episodes"),
    figure("readme.icc.median", result.cells.icc.median),
    figure("readme.icc.upper95", result.cells.icc.upper95),
    figure("readme.rests_on_prior", result.cells.rests_on_prior ? 1 : 0, "boolean"),
  ];
}

/** CPU milliseconds of one headline (median of 30 after warm-up) at 3, 8 and 50 cells of 20 episodes with differing rates. */
function speedFigures(): Figure[] {
  return [3, 8, 50].map((cells) => {
    const counts = Array.from({ length: cells }, (_, i) => ({ k: 8 + ((i * 7) % 12), n: PER_CELL }));
    for (let i = 0; i < 5; i++) betaBinomialRate(counts);
    const times = Array.from({ length: 30 }, () => {
      const start = process.cpuUsage();
      betaBinomialRate(counts);
      const used = process.cpuUsage(start);
      return (used.user + used.system) / 1000;
    }).sort((a, b) => a - b);
    return figure(`headline.cpu_ms.${cells}_cells`, times[15], "ms");
  });
}

export async function run(): Promise<Figure[]> {
  return [...readmeFigures(), ...speedFigures(), ...coverageFigures()];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const f of await run()) console.log(JSON.stringify(f));
}
