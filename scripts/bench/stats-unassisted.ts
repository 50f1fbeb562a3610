/**
 * Figure group of the `stats` bench: the unassisted-rate example through the real result
 * code (coordinator/runs/result-summary.ts computeRunResult). 20% of episodes stall and get a
 * nudge, half of those then succeed; 90% of the others succeed. The policy on its own succeeds in
 * 0.8 x 0.9 = 0.72 of episodes: the headline must say that, not 0.82 (assisted successes counted)
 * nor 0.90 (intervened episodes left out, the old `clean` rate). Seeded draws, 20 000 episodes.
 */
import { computeRunResult } from "../../coordinator/runs/result-summary.js";
import { mulberry32 } from "../../coordinator/stats/simulation.js";
import { episodeRecordOf, type EpisodeRecord } from "../../coordinator/store/episodes-repo.js";
import type { Figure } from "../bench.js";

const BENCH = "stats";
const EPISODES = 20000;
const STALL = 0.2;
const SUCCESS_UNASSISTED = 0.9;
const SUCCESS_AFTER_NUDGE = 0.5;

function episode(idx: number, success: boolean, nudged: boolean): EpisodeRecord {
  return episodeRecordOf({
    id: `ep_${idx}`, run_id: "run_bench", idx, status: "done", attempt: 1, seed: idx, cell_id: "so101-b", outcome: success ? "success" : "failure",
    failure_cluster: null, duration_s: 20, reset_s: 4, replay_spec: null,
    meta: nudged ? JSON.stringify({ interventions: [{ t_s: 6, kind: "on_stall", detail: "re-home" }] }) : null,
    evaluation: null, interruptions: "[]", assigned_at: null, started_at: null, finished_at: null,
  });
}

export async function run(): Promise<Figure[]> {
  const random = mulberry32(20261124);
  const episodes = Array.from({ length: EPISODES }, (_, i) => {
    const nudged = random() < STALL;
    return episode(i, random() < (nudged ? SUCCESS_AFTER_NUDGE : SUCCESS_UNASSISTED), nudged);
  });
  const result = computeRunResult("run_bench", episodes, { tier: "soak", environmentClass: "standard", priority: "standard" }, "http://bench", { interventions: "on_stall" });
  const notHelped = episodes.filter((e) => e.meta === null);
  const truth = (1 - STALL) * SUCCESS_UNASSISTED;
  return [
    { bench: BENCH, metric: "unassisted.true_rate", value: Number(truth.toFixed(6)), unit: "ratio" },
    { bench: BENCH, metric: "unassisted.headline_success_rate", value: result.success_rate, unit: "ratio" },
    { bench: BENCH, metric: "unassisted.headline_ci95_covers_true_rate", value: result.ci95[0] <= truth && truth <= result.ci95[1] ? 1 : 0, unit: "boolean" },
    { bench: BENCH, metric: "unassisted.assisted_success_rate", value: result.assisted!.success_rate, unit: "ratio" },
    { bench: BENCH, metric: "unassisted.old_clean_rate", value: notHelped.filter((e) => e.outcome === "success").length / notHelped.length, unit: "ratio" },
    { bench: BENCH, metric: "unassisted.episodes", value: EPISODES, unit: "episodes" },
  ];
}
