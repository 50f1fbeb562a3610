/**
 * Kind transfer's gap (issue 10, item 7; issue 25, item 4): its `ci` is the model-level posterior
 * difference, each side on its own cells (`claim: "model"`); beside it the claim about these cells:
 * measured in the same run with shared seeds, the paired interval over complete seed pairs; taken
 * from an earlier run, the unpaired interval, and the result says the source is not matched on
 * perturbations or interventions. A source run without per-cell counts gives the unpaired interval
 * alone, labelled as about these cells.
 */
import assert from "node:assert/strict";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { kindModule } from "../../coordinator/kinds/registry.js";
import { pairedDifferenceInterval } from "../../coordinator/stats/paired-difference.js";
import { newcombeDifference } from "../../coordinator/stats/two-proportions.js";
import { betaBinomialDifference } from "../../coordinator/stats/beta-binomial-difference.js";
import { episodeRecordOf, type EpisodeRecord } from "../../coordinator/store/episodes-repo.js";
import type { RunRecord } from "../../coordinator/store/runs-repo.js";

const pins = loadFirmwarePins();
const unit = (role: string, robot: string, model: string, firmware: string) => ({
  key: role, role, robot, model, firmware, environment: "tabletop@1", task: "pick-cube@v1", policy: { type: "container", image: "assay/ref-policy:expert" },
});

function run(baseline: { run_id: string; n: number; success_rate: number; completed: string; by_cell?: Array<{ k: number; n: number }> } | null): RunRecord {
  const units = [unit("target", "fr3@5.9.0", "fr3", "5.9.0"), ...(baseline ? [] : [unit("source", "so101@3.11", "so101", "3.11")])];
  return {
    id: "run_t", accountId: "acct", kind: "transfer", status: "completed", created: "", completed: "", request: {},
    resolvedPins: { robot: "fr3@5.9.0", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
    plan: { model: "fr3", firmware: "5.9.0", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20, kind: { transfer: { source: "so101@3.11", source_baseline: baseline } } },
    result: null, statusCode: null, statusMessage: null, idempotencyKey: null, priority: "standard", episodesTotal: 8, units, kindState: null,
  };
}

function episode(idx: number, unitIndex: number, seed: number, success: boolean, cell = "c"): EpisodeRecord {
  return episodeRecordOf({
    id: `e${idx}`, run_id: "run_t", idx, status: "done", attempt: 1, seed, cell_id: cell, outcome: success ? "success" : "failure", failure_cluster: null,
    duration_s: 10, reset_s: 2, replay_spec: null, meta: null, evaluation: null, interruptions: "[]", assigned_at: null, started_at: null, finished_at: null,
    unit: unitIndex, assign: null,
  });
}

describe("kind transfer: the gap", () => {
  const transfer = kindModule("transfer");
  const ctx = { db: undefined as never, pins, baseUrl: "http://x" };

  it("measured here with shared seeds: the model-level gap over each side's cells, and the paired interval over complete seed pairs about these cells", async () => {
    const target = [true, true, false, true, true];
    const source = [true, false, false, true];
    const episodes = [
      // The target robot's episodes ran on cells t1 and t2, the source's on s1 and s2.
      ...target.map((ok, i) => episode(2 * i, 0, 100 + i, ok, i % 2 === 0 ? "t1" : "t2")),
      // The fifth seed's source episode never finished: that pair is incomplete and left out.
      ...source.map((ok, i) => episode(2 * i + 1, 1, 100 + i, ok, i % 2 === 0 ? "s1" : "s2")),
    ];
    const gap = (await transfer.result(ctx, run(null), episodes) as { gap: Record<string, any> }).gap;
    const model = betaBinomialDifference([{ k: 2, n: 3 }, { k: 2, n: 2 }], [{ k: 1, n: 2 }, { k: 1, n: 2 }]);
    const expected = pairedDifferenceInterval({ both: 2, onlyA: 1, onlyB: 0, neither: 1 }, 0.95);
    assert.equal(gap.paired, true);
    assert.equal(gap.matched, true);
    assert.equal(gap.pairs, 4);
    assert.equal(gap.claim, "model");
    assert.deepEqual(gap.ci, model.ci);
    assert.equal(gap.diff, model.diff);
    assert.equal(gap.probability_a_greater, model.probability_a_greater);
    assert.equal(gap.method, "beta-binomial-posterior-difference");
    assert.match(gap.statement, /^Model-level difference target − source \(new cells of the robot model\)/);
    assert.equal(gap.these_cells.claim, "these_cells");
    assert.equal(gap.these_cells.diff, expected.diff);
    assert.deepEqual(gap.these_cells.ci, expected.ci);
    assert.equal(gap.these_cells.method, expected.method);
    // The sides' own rates still count every finished episode.
    assert.equal(gap.target.n, 5);
    assert.equal(gap.source.n, 4);
  });

  it("source from an earlier run with per-cell counts: the model-level gap, Newcombe's about these cells, and the result says it is unmatched", async () => {
    const episodes = [true, false, true, true].map((ok, i) => episode(i, 0, 100 + i, ok));
    const baseline = { run_id: "run_prev", n: 10, success_rate: 0.5, completed: "", by_cell: [{ k: 3, n: 5 }, { k: 2, n: 5 }] };
    const gap = (await transfer.result(ctx, run(baseline), episodes) as { gap: Record<string, any> }).gap;
    const model = betaBinomialDifference([{ k: 3, n: 4 }], baseline.by_cell);
    const expected = newcombeDifference(3, 4, 5, 10, 0.95);
    assert.equal(gap.paired, false);
    assert.equal(gap.matched, false);
    assert.equal(gap.claim, "model");
    assert.deepEqual(gap.ci, model.ci);
    assert.match(gap.statement, /A side ran on one cell, so the interval rests on the prior/);
    assert.match(gap.note, /run_prev: its episodes are not matched to this run's on perturbations \(seeds\) or interventions/);
    assert.equal(gap.these_cells.diff, expected.diff);
    assert.deepEqual(gap.these_cells.ci, expected.ci);
    assert.equal(gap.source.run_id, "run_prev");
  });

  it("source from an earlier run without per-cell counts: unpaired Newcombe, labelled as about these cells", async () => {
    const episodes = [true, false, true, true].map((ok, i) => episode(i, 0, 100 + i, ok));
    const gap = (await transfer.result(ctx, run({ run_id: "run_prev", n: 10, success_rate: 0.5, completed: "" }), episodes) as { gap: Record<string, any> }).gap;
    const expected = newcombeDifference(3, 4, 5, 10, 0.95);
    assert.equal(gap.claim, "these_cells");
    assert.match(gap.statement, /^About these cells: /);
    assert.equal(gap.paired, false);
    assert.equal(gap.matched, false);
    assert.match(gap.note, /run_prev: its episodes are not matched to this run's on perturbations \(seeds\) or interventions/);
    assert.equal(gap.diff, expected.diff);
    assert.deepEqual(gap.ci, expected.ci);
    assert.equal(gap.source.run_id, "run_prev");
  });
});
