/**
 * Benchmark: false-pass rate of the `threshold` run kind's sequential test against the naive rule
 * that re-checks a fixed-n Wilson bound after every episode, over many seeded synthetic runs.
 * A "false pass" is a pass when the true success rate is at or below target.
 *
 * Run alone: npx tsx scripts/bench/threshold-false-pass.ts (one JSON line per figure).
 */

import { pathToFileURL } from "node:url";
import { naiveThresholdRule } from "../../coordinator/stats/naive-threshold.js";
import { createThresholdTest } from "../../coordinator/stats/sequential-threshold.js";
import { simulateThreshold } from "../../coordinator/stats/simulation.js";

interface Figure {
  bench: string;
  metric: string;
  value: number;
  unit: string;
}

const BENCH = "threshold-false-pass";
const RUNS = 20000;
const TARGET = 0.8;
const ALPHA = 0.05;
const MAX_EPISODES = 500;

export async function run(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const procedures = {
    sequential: () => createThresholdTest({ target: TARGET, alpha: ALPHA, maxEpisodes: MAX_EPISODES }),
    // Same confidence as the target spec (ci = 1 - alpha): one-sided error alpha/2 per look.
    naive_ci95: () => naiveThresholdRule({ target: TARGET, ci: 1 - ALPHA, maxEpisodes: MAX_EPISODES }),
    // Same one-sided error per look as the sequential test's alpha.
    naive_ci90: () => naiveThresholdRule({ target: TARGET, ci: 1 - 2 * ALPHA, maxEpisodes: MAX_EPISODES }),
  };
  const truths = [
    ["at_target", TARGET],
    ["target_minus_0.02", TARGET - 0.02],
    ["target_plus_0.1", TARGET + 0.1],
  ] as const;
  for (const [label, p] of truths) {
    for (const [name, create] of Object.entries(procedures)) {
      const result = simulateThreshold(create, p, RUNS, 20240601);
      const metric = p <= TARGET ? "false_pass_rate" : "pass_rate";
      figures.push({ bench: BENCH, metric: `${name}.${label}.${metric}`, value: result.passRate, unit: "ratio" });
      figures.push({ bench: BENCH, metric: `${name}.${label}.mean_episodes`, value: result.meanEpisodes, unit: "episodes" });
    }
  }
  figures.push({ bench: BENCH, metric: "alpha", value: ALPHA, unit: "ratio" });
  figures.push({ bench: BENCH, metric: "runs_per_cell", value: RUNS, unit: "runs" });
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run()) console.log(JSON.stringify(figure));
}
