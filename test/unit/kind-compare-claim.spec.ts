/**
 * Kind compare's comparison says what it is about (issue 25, item 4): unpaired, the model-level
 * posterior difference with each policy on its own cells (`claim: "model"`) and Newcombe's interval
 * about these cells beside it; paired and blocked by cell, the model-level difference from the
 * within-cell differences with the paired interval about these cells beside it; paired runs planned
 * before blocking, the paired interval, labelled as about these cells.
 */
import assert from "node:assert/strict";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { kindModule } from "../../coordinator/kinds/registry.js";
import { betaBinomialDifference } from "../../coordinator/stats/beta-binomial-difference.js";
import { newcombeDifference } from "../../coordinator/stats/two-proportions.js";
import { pairedCellDifference } from "../../coordinator/stats/paired-cell-difference.js";
import { pairedDifferenceInterval } from "../../coordinator/stats/paired-difference.js";
import { episodeRecordOf, type EpisodeRecord } from "../../coordinator/store/episodes-repo.js";
import type { RunRecord } from "../../coordinator/store/runs-repo.js";

const pins = loadFirmwarePins();
const unit = (name: string) => ({
  key: `policy:${name}`, policy_name: name, robot: "so101@3.11", model: "so101", firmware: "3.11", environment: "tabletop@1", task: "pick-cube@v1",
  policy: { type: "container", image: `assay/ref-policy:${name}` },
});

function run(paired: boolean): RunRecord {
  return {
    id: "run_c", accountId: "acct", kind: "compare", status: "completed", created: "", completed: "", request: {},
    resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
    plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20, kind: { compare: { paired } } },
    result: null, statusCode: null, statusMessage: null, idempotencyKey: null, priority: "standard", episodesTotal: 24, units: [unit("expert"), unit("novice")], kindState: null,
  };
}

function episode(idx: number, unitIndex: number, success: boolean, cell: string, pair: number, block = false): EpisodeRecord {
  return episodeRecordOf({
    id: `e${idx}`, run_id: "run_c", idx, status: "done", attempt: 1, seed: 100 + idx, cell_id: cell, outcome: success ? "success" : "failure", failure_cluster: null,
    duration_s: 10, reset_s: 2, replay_spec: null, meta: null, evaluation: null, interruptions: "[]", assigned_at: null, started_at: null, finished_at: null,
    unit: unitIndex, assign: JSON.stringify({ pair, order: unitIndex, ...(block ? { block: "cell" } : {}) }),
  });
}

// Expert 6/6 on cell a, 5/6 on cell b; novice 3/6 on cell a, 4/6 on cell c.
const outcomes: Array<[number, boolean, string]> = [
  ...[1, 1, 1, 1, 1, 1].map((ok, i) => [0, ok === 1, "a"] as [number, boolean, string]),
  ...[1, 1, 0, 1, 1, 1].map((ok) => [0, ok === 1, "b"] as [number, boolean, string]),
  ...[1, 0, 1, 0, 1, 0].map((ok) => [1, ok === 1, "a"] as [number, boolean, string]),
  ...[1, 1, 0, 1, 0, 1].map((ok) => [1, ok === 1, "c"] as [number, boolean, string]),
];

describe("kind compare: what the comparison is about", () => {
  const compare = kindModule("compare");
  const ctx = { db: undefined as never, pins, baseUrl: "http://x" };
  const episodes = outcomes.map(([u, ok, cell], i) => episode(i, u, ok, cell, i % 12));

  it("unpaired: the model-level posterior difference over each policy's own cells, Newcombe's about these cells beside it", async () => {
    const comparison = (await compare.result(ctx, run(false), episodes) as { comparison: Record<string, any> }).comparison;
    const model = betaBinomialDifference([{ k: 6, n: 6 }, { k: 5, n: 6 }], [{ k: 3, n: 6 }, { k: 4, n: 6 }]);
    assert.equal(comparison.paired, false);
    assert.equal(comparison.claim, "model");
    assert.equal(comparison.method, "beta-binomial-posterior-difference");
    assert.deepEqual(comparison.ci, model.ci);
    assert.equal(comparison.diff, model.diff);
    assert.equal(comparison.probability_a_greater, model.probability_a_greater);
    assert.equal(comparison.ci_level, 0.95);
    assert.match(comparison.statement, /^Model-level difference expert − novice \(new cells of the robot model\): .* each side on its own cells \(2 and 2\); P\(expert better\) = /);
    const these = newcombeDifference(11, 12, 7, 12, 0.95);
    assert.equal(comparison.these_cells.claim, "these_cells");
    assert.deepEqual(comparison.these_cells.ci, these.ci);
    assert.equal(comparison.these_cells.diff, these.diff);
  });

  it("paired and blocked by cell: the model-level claim from the within-cell differences, the paired interval about these cells beside it", async () => {
    // Pairs 0-5 on cell a, 6-11 on cell b; expert wins pairs 0-2 alone on a, 6 and 8 alone on b, novice 10 alone.
    const ok: Array<[boolean, boolean]> = [
      [true, false], [true, false], [true, false], [true, true], [true, true], [false, false],
      [true, false], [true, true], [true, false], [true, true], [false, true], [false, false],
    ];
    const blocked = ok.flatMap(([a, b], pair) => [episode(2 * pair, 0, a, pair < 6 ? "a" : "b", pair, true), episode(2 * pair + 1, 1, b, pair < 6 ? "a" : "b", pair, true)]);
    const comparison = (await compare.result(ctx, run(true), blocked) as { comparison: Record<string, any> }).comparison;
    const expected = pairedCellDifference([{ n: 6, both: 2, onlyA: 3, onlyB: 0 }, { n: 6, both: 2, onlyA: 2, onlyB: 1 }]);
    assert.equal(comparison.paired, true);
    assert.equal(comparison.claim, "model");
    assert.equal(comparison.method, "paired-cell-random-effects-posterior");
    assert.deepEqual(comparison.ci, expected.ci);
    assert.equal(comparison.diff, expected.diff);
    assert.equal(comparison.probability_a_greater, expected.probability_a_greater);
    assert.deepEqual(comparison.by_cell, [
      { cell: "a", pairs: 6, both: 2, only_a: 3, only_b: 0, diff: 0.5 },
      { cell: "b", pairs: 6, both: 2, only_a: 2, only_b: 1, diff: 1 / 6 },
    ]);
    assert.equal(comparison.split_pairs, 0);
    assert.match(comparison.statement, /^Model-level difference expert − novice \(new cells of the robot model\): .*within each of 2 cells/);
    assert.equal(comparison.these_cells.claim, "these_cells");
    assert.equal(comparison.these_cells.method, "newcombe-paired");
    assert.deepEqual(comparison.these_cells.ci, pairedDifferenceInterval({ both: 4, onlyA: 5, onlyB: 1, neither: 2 }, 0.95).ci);
    assert.deepEqual([comparison.pairs, comparison.only_a, comparison.only_b, comparison.mcnemar.n_discordant], [12, 5, 1, 6]);
  });

  it("paired, planned before blocking by cell: the paired interval, labelled as about these cells", async () => {
    const comparison = (await compare.result(ctx, run(true), episodes) as { comparison: Record<string, any> }).comparison;
    assert.equal(comparison.paired, true);
    assert.equal(comparison.claim, "these_cells");
    assert.match(comparison.statement, /^About these cells: the paired interval over complete pairs/);
    assert.equal(comparison.method, "newcombe-paired");
  });
});
