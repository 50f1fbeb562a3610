import assert from "node:assert/strict";
import { computeRunResult, stageRates } from "../../coordinator/runs/result-summary.js";
import { betaBinomialRate, DEFAULT_HEADLINE_PRIOR } from "../../coordinator/stats/beta-binomial-rate.js";
import { wilsonInterval } from "../../coordinator/stats/wilson.js";
import { episodeRecordOf, type EpisodeRecord, type EpisodeRow } from "../../coordinator/store/episodes-repo.js";

function episode(idx: number, outcome: "success" | "failure", extra: Partial<EpisodeRow> = {}): EpisodeRecord {
  return episodeRecordOf({
    id: `ep_${idx}`, run_id: "run_x", idx, status: "done", attempt: 1, seed: idx, cell_id: "so101-b", outcome,
    failure_cluster: null, duration_s: 20, reset_s: 4, replay_spec: null, meta: null, evaluation: null, interruptions: "[]",
    assigned_at: null, started_at: null, finished_at: null, ...extra,
  });
}

const context = { tier: "soak", environmentClass: "standard", priority: "standard" } as const;

describe("run results", () => {
  it("carries n, the rate and its model-level interval, and exactly the spec's fields plus stages and the stage funnel", () => {
    const episodes = [
      ...Array.from({ length: 7 }, (_, i) => episode(i, "success")),
      episode(7, "failure", { failure_cluster: "grasp_slip" }),
      episode(8, "failure", { failure_cluster: "grasp_slip" }),
      episode(9, "failure"),
    ];
    const result = computeRunResult("run_x", episodes, context, "https://api.example");
    assert.deepEqual(Object.keys(result).sort(), [
      "artifacts", "cells", "ci95", "cost_usd", "environment_hours", "failure_clusters", "interval_method", "n", "robot_hours", "stage_funnel", "stages", "success_rate",
    ]);
    assert.equal(result.n, 10);
    assert.equal(result.success_rate, 0.7);
    // One cell ran them: ci95 is the model-level interval (a new cell of this model), which rests on the
    // ICC prior; the rate on this very cell is its Wilson interval.
    assert.deepEqual(result.ci95, betaBinomialRate([{ k: 7, n: 10 }]).ci);
    assert.equal(result.interval_method, "beta-binomial-posterior");
    assert.deepEqual(result.cells.these_cells, { success_rate: 0.7, ci95: wilsonInterval(7, 10), interval_method: "wilson" });
    assert.ok(result.cells.ci95_these_cells[0] > 0.39 && result.cells.ci95_these_cells[0] < 0.4 && result.cells.ci95_these_cells[1] > 0.89 && result.cells.ci95_these_cells[1] < 0.9);
    assert.equal(result.cells.rests_on_prior, true);
    assert.deepEqual(result.cells.prior, { rate: { family: "beta", parameters: { a: 0.5, b: 0.5 } }, icc: { family: "beta", parameters: { a: 1, b: 9 } }, source: "default", fitted_on_runs: null, fitted_at: null });
    assert.match(result.cells.statement[3], /^One cell ran these episodes, so the model-level interval rests on the prior/);
    assert.deepEqual(result.failure_clusters, { grasp_slip: 2, unclassified: 1 });
    assert.equal(result.robot_hours, 0.066667); // 10 x 24 s
    assert.equal(result.environment_hours, 0.066667);
    assert.equal(result.cost_usd, 1.47); // 0.066667 h x (18 + 4) USD/h
    assert.deepEqual(result.artifacts, {
      mcap: "https://api.example/v1/runs/run_x/episodes?artifact=mcap",
      video: "https://api.example/v1/runs/run_x/episodes?artifact=video",
      ground_truth: "https://api.example/v1/runs/run_x/episodes?artifact=ground_truth",
      report_pdf: "https://api.example/v1/runs/run_x/report?format=pdf",
    });
  });

  it("counts an intervened episode as a failure of the policy and reports the assisted rate beside it (the issue's example)", () => {
    // 20% of episodes stall and get a nudge, half of those then succeed; 90% of the others succeed.
    const nudge = JSON.stringify({ interventions: [{ t_s: 6, kind: "on_stall", detail: "re-home" }] });
    const episodes = Array.from({ length: 1000 }, (_, i) => {
      if (i < 200) return episode(i, i < 100 ? "success" : "failure", { meta: nudge });
      return episode(i, i < 200 + 720 ? "success" : "failure");
    });
    const result = computeRunResult("run_x", episodes, context, "http://x", { interventions: "on_stall" });
    assert.equal(result.n, 1000);
    assert.equal(result.success_rate, 0.72); // unassisted: the true rate of the policy on its own
    assert.deepEqual(result.ci95, betaBinomialRate([{ k: 720, n: 1000 }]).ci);
    assert.deepEqual(result.assisted, { n: 1000, success_rate: 0.82, ci95: wilsonInterval(820, 1000), interval_method: "wilson" });
    assert.deepEqual(result.failure_clusters, { intervened: 100, unclassified: 180 });
    // Without the intervened episodes the rate would be 720 / 800 = 0.9: conditioned on not stalling, biased upward.
    assert.equal(computeRunResult("run_x", episodes, context, "http://x").assisted, undefined, "no assisted rate where interventions are off");
  });

  it("reports the episodes per cell", () => {
    const episodes = [episode(0, "success"), episode(1, "failure", { cell_id: "so101-c" }), episode(2, "success", { cell_id: "so101-c" })];
    const result = computeRunResult("run_x", episodes, context, "http://x");
    assert.deepEqual(result.cells.by_cell, [
      { cell: "so101-b", n: 1, successes: 1, success_rate: 1 },
      { cell: "so101-c", n: 2, successes: 1, success_rate: 0.5 },
    ]);
    assert.equal(result.cells.clusters, 2);
    assert.deepEqual(result.ci95, betaBinomialRate([{ k: 1, n: 1 }, { k: 1, n: 2 }]).ci);
    // Unbalanced cells: the rate on these cells weighs each cell once.
    assert.equal(result.cells.these_cells.interval_method, "stratified-wilson");
    assert.equal(result.cells.these_cells.success_rate, 0.75);
  });

  it("computes the model-level interval with the prior it is given, and records it", () => {
    const prior = { ...DEFAULT_HEADLINE_PRIOR, icc: { family: "beta" as const, parameters: { a: 2, b: 30 } }, source: "fleet", fitted_on_runs: 41, fitted_at: "2026-11-20T00:00:00Z" };
    const episodes = [episode(0, "success"), episode(1, "failure", { cell_id: "so101-c" }), episode(2, "success", { cell_id: "so101-c" })];
    const result = computeRunResult("run_x", episodes, context, "http://x", { headlinePrior: prior });
    assert.deepEqual(result.cells.prior, prior);
    assert.deepEqual(result.ci95, betaBinomialRate([{ k: 1, n: 1 }, { k: 1, n: 2 }], { prior }).ci);
    assert.match(result.cells.statement.at(-1)!, /\(ICC ~ Beta\(2, 30\), fleet, fitted on 41 runs on 2026-11-20\)/);
  });

  it("counts only finished episodes in n", () => {
    const result = computeRunResult("run_x", [episode(0, "success"), episode(1, "failure", { status: "pending", outcome: null })], context, "http://x");
    assert.equal(result.n, 1);
    assert.equal(result.success_rate, 1);
    assert.deepEqual(result.failure_clusters, {});
  });

  it("a run with no finished episode reports n 0 and the uninformative interval", () => {
    const result = computeRunResult("run_x", [], context, "http://x");
    assert.equal(result.n, 0);
    assert.equal(result.success_rate, 0);
    assert.deepEqual(result.ci95, [0, 1]);
  });

  it("computes per-stage rates from the episodes' evaluations, in stage order", () => {
    const evaluation = (reached: boolean, grasped: boolean, lifted: boolean) => JSON.stringify({ stages: { reached, grasped, lifted }, predicates: { lifted } });
    const stages = stageRates([
      { evaluation: evaluation(true, true, true) },
      { evaluation: evaluation(true, true, false) },
      { evaluation: evaluation(true, false, false) },
      { evaluation: evaluation(false, false, false) },
      { evaluation: null },
      { evaluation: "not json" },
    ].map((extra, i) => episode(i, "success", extra)));
    assert.deepEqual(Object.keys(stages), ["reached", "grasped", "lifted"]);
    assert.deepEqual(stages.reached, { n: 4, success_rate: 0.75, ci95: wilsonInterval(3, 4), interval_method: "wilson" });
    assert.deepEqual(stages.grasped, { n: 4, success_rate: 0.5, ci95: wilsonInterval(2, 4), interval_method: "wilson" });
    assert.deepEqual(stages.lifted, { n: 4, success_rate: 0.25, ci95: wilsonInterval(1, 4), interval_method: "wilson" });
  });
});
