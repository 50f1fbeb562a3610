/**
 * Kind transfer's gap (issue 10, item 7): measured in the same run with shared seeds it is the
 * paired interval over complete seed pairs; taken from an earlier run it is the unpaired interval,
 * and the result says the source is not matched on perturbations or interventions.
 */
import assert from "node:assert/strict";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { kindModule } from "../../coordinator/kinds/registry.js";
import { pairedDifferenceInterval } from "../../coordinator/stats/paired-difference.js";
import { newcombeDifference } from "../../coordinator/stats/two-proportions.js";
import { episodeRecordOf, type EpisodeRecord } from "../../coordinator/store/episodes-repo.js";
import type { RunRecord } from "../../coordinator/store/runs-repo.js";

const pins = loadFirmwarePins();
const unit = (role: string, robot: string, model: string, firmware: string) => ({
  key: role, role, robot, model, firmware, environment: "tabletop@1", task: "pick-cube@v1", policy: { type: "container", image: "assay/ref-policy:expert" },
});

function run(baseline: { run_id: string; n: number; success_rate: number; completed: string } | null): RunRecord {
  const units = [unit("target", "fr3@5.9.0", "fr3", "5.9.0"), ...(baseline ? [] : [unit("source", "so101@3.11", "so101", "3.11")])];
  return {
    id: "run_t", accountId: "acct", kind: "transfer", status: "completed", created: "", completed: "", request: {},
    resolvedPins: { robot: "fr3@5.9.0", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
    plan: { model: "fr3", firmware: "5.9.0", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20, kind: { transfer: { source: "so101@3.11", source_baseline: baseline } } },
    result: null, statusCode: null, statusMessage: null, idempotencyKey: null, priority: "standard", episodesTotal: 8, units, kindState: null,
  };
}

function episode(idx: number, unitIndex: number, seed: number, success: boolean): EpisodeRecord {
  return episodeRecordOf({
    id: `e${idx}`, run_id: "run_t", idx, status: "done", attempt: 1, seed, cell_id: "c", outcome: success ? "success" : "failure", failure_cluster: null,
    duration_s: 10, reset_s: 2, replay_spec: null, meta: null, evaluation: null, interruptions: "[]", assigned_at: null, started_at: null, finished_at: null,
    unit: unitIndex, assign: null,
  });
}

describe("kind transfer: the gap", () => {
  const transfer = kindModule("transfer");
  const ctx = { db: undefined as never, pins, baseUrl: "http://x" };

  it("measured here with shared seeds: the paired interval over complete seed pairs", () => {
    const target = [true, true, false, true, true];
    const source = [true, false, false, true];
    const episodes = [
      ...target.map((ok, i) => episode(2 * i, 0, 100 + i, ok)),
      // The fifth seed's source episode never finished: that pair is incomplete and left out.
      ...source.map((ok, i) => episode(2 * i + 1, 1, 100 + i, ok)),
    ];
    const gap = (transfer.result(ctx, run(null), episodes) as { gap: Record<string, any> }).gap;
    const expected = pairedDifferenceInterval({ both: 2, onlyA: 1, onlyB: 0, neither: 1 }, 0.95);
    assert.equal(gap.paired, true);
    assert.equal(gap.matched, true);
    assert.equal(gap.pairs, 4);
    assert.equal(gap.diff, expected.diff);
    assert.deepEqual(gap.ci, expected.ci);
    assert.equal(gap.method, expected.method);
    // The sides' own rates still count every finished episode.
    assert.equal(gap.target.n, 5);
    assert.equal(gap.source.n, 4);
  });

  it("source from an earlier run: unpaired, and the result says it is unmatched", () => {
    const episodes = [true, false, true, true].map((ok, i) => episode(i, 0, 100 + i, ok));
    const gap = (transfer.result(ctx, run({ run_id: "run_prev", n: 10, success_rate: 0.5, completed: "" }), episodes) as { gap: Record<string, any> }).gap;
    const expected = newcombeDifference(3, 4, 5, 10, 0.95);
    assert.equal(gap.paired, false);
    assert.equal(gap.matched, false);
    assert.match(gap.note, /run_prev: its episodes are not matched to this run's on perturbations \(seeds\) or interventions/);
    assert.equal(gap.diff, expected.diff);
    assert.deepEqual(gap.ci, expected.ci);
    assert.equal(gap.source.run_id, "run_prev");
  });
});
