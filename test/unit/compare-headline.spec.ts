/**
 * A compare's and a transfer's answer up front (issue 28, item 1): the headline states the difference
 * with its direction, interval and test, the claim in one sentence that never says more than the
 * interval, each side's rate with its Wilson interval and n, and numbers rounded for people.
 */
import assert from "node:assert/strict";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { kindModule } from "../../coordinator/kinds/registry.js";
import { compareHeadline, differenceSentence, points } from "../../coordinator/runs/compare-headline.js";
import { episodeRecordOf } from "../../coordinator/store/episodes-repo.js";
import type { RunRecord } from "../../coordinator/store/runs-repo.js";

const units = (a: [number, number], b: [number, number]) => [
  { key: "policy:expert", policy_name: "expert", robot: "so101@3.11", result: { n: a[1], success_rate: a[0] / a[1], ci95: [0.8427, 1] } },
  { key: "policy:novice", policy_name: "novice", robot: "so101@3.11", result: { n: b[1], success_rate: b[0] / b[1], ci95: [0.4, 0.86] } },
];

/** No number in the JSON carries float noise or more digits than people read. */
function assertRounded(value: unknown): void {
  const long = JSON.stringify(value).match(/-?\d+\.\d{7,}/g);
  assert.equal(long, null, `numbers with float noise: ${long}`);
}

describe("compare headline", () => {
  it("paired compare, difference shown: the sentence, the test about these cells, each policy's rate with its Wilson interval and n", () => {
    const headline = compareHeadline({
      units: units([20, 20], [14, 20]),
      comparison: {
        a: "expert", b: "novice", paired: true, claim: "model", diff: 0.30000000000000004, ci: [0.11534, 0.46111], ci_level: 0.95,
        method: "paired-cell-random-effects-posterior", probability_a_greater: 0.99712,
        these_cells: { claim: "these_cells", diff: 0.30000000000000004, ci: [0.10117, 0.51592], ci_level: 0.95, method: "newcombe-paired" },
        mcnemar: { b: 6, c: 0, n_discordant: 6, p_value: 0.03125 },
      },
    })!;
    assert.deepEqual(headline.difference, {
      of: "expert - novice", diff: 0.3, ci: [0.1153, 0.4611], ci_level: 0.95, method: "paired-cell-random-effects-posterior",
      claim: "model", shown: "a_higher", probability_a_greater: 0.9971,
    });
    assert.deepEqual(headline.these_cells, { diff: 0.3, ci: [0.1012, 0.5159], ci_level: 0.95, method: "newcombe-paired", shown: "a_higher" });
    assert.deepEqual(headline.test, { method: "mcnemar-exact", p_value: 0.03125, n_discordant: 6 });
    assert.deepEqual(headline.arms.map((a) => [a.label, a.n, a.successes, a.success_rate, a.wilson95]), [
      ["expert", 20, 20, 1, [0.8389, 1]],
      ["novice", 20, 14, 0.7, [0.481, 0.8545]],
    ]);
    assert.equal(headline.sentence, "Policy expert's success rate is higher than novice's by 30 points (95% interval 12 to 46) for a new cell of the robot model.");
    assert.deepEqual(headline.lines, [
      headline.sentence,
      "Method: paired within-cell differences, cell random effect; P(expert better) = 0.997. On these cells alone: expert - novice +30 points "
        + "(95% interval +10 to +52, Newcombe's paired interval); exact McNemar test on 6 discordant pairs: p = 0.031.",
      "expert: 100% (20 of 20; 95% Wilson interval 83.9% to 100%); novice: 70% (14 of 20; 95% Wilson interval 48.1% to 85.5%).",
    ]);
    assertRounded(headline);
  });

  it("an interval that contains 0: no difference was shown, whatever the point estimate", () => {
    const headline = compareHeadline({
      units: units([7, 10], [5, 10]),
      comparison: {
        a: "expert", b: "novice", paired: false, claim: "model", diff: 0.18734, ci: [-0.22141, 0.56233], ci_level: 0.95,
        method: "beta-binomial-posterior-difference", probability_a_greater: 0.812,
        these_cells: { claim: "these_cells", diff: 0.2, ci: [-0.2, 0.52], ci_level: 0.95, method: "newcombe-hybrid-score" },
      },
    })!;
    assert.equal(headline.difference.shown, "none");
    assert.equal(headline.test, null);
    assert.equal(headline.sentence,
      "No difference between expert and novice was shown for a new cell of the robot model: expert - novice is +19 points, 95% interval -22 to +56, which includes 0.");
    assert.doesNotMatch(headline.lines.join(" "), /higher than/);
  });

  it("B better: the sentence names B first, the difference keeps the result's direction (A - B)", () => {
    const headline = compareHeadline({
      units: units([3, 20], [15, 20]),
      comparison: { a: "expert", b: "novice", claim: "model", diff: -0.6, ci: [-0.81, -0.31], ci_level: 0.95, method: "beta-binomial-posterior-difference", probability_a_greater: 0.0004 },
    })!;
    assert.equal(headline.difference.diff, -0.6);
    assert.equal(headline.difference.shown, "b_higher");
    assert.equal(headline.sentence, "Policy novice's success rate is higher than expert's by 60 points (95% interval 31 to 81) for a new cell of the robot model.");
  });

  it("transfer: target - source, the source's rate and n beside the target's", () => {
    const headline = compareHeadline({
      units: [{ role: "target", robot: "so101@3.11", result: { n: 10, success_rate: 0.2, ci95: [0.03, 0.5] } }],
      gap: {
        source: { robot: "so100@1.0", run_id: "run_s", n: 10, success_rate: 0.9 }, target: { robot: "so101@3.11", n: 10, success_rate: 0.2 },
        diff: -0.7, ci: [-0.8709, -0.3321], ci_level: 0.95, method: "newcombe-hybrid-score", claim: "these_cells",
      },
    })!;
    assert.equal(headline.difference.of, "target - source");
    assert.equal(headline.these_cells, null);
    assert.equal(headline.sentence,
      "The policy's success rate on the source so100@1.0 is higher than on the target so101@3.11 by 70 points (95% interval 33 to 87) on the cells and conditions these episodes ran on.");
    assert.deepEqual(headline.arms.map((a) => [a.label, a.robot, a.successes, a.n, a.ci95]), [["target", "so101@3.11", 2, 10, [0.03, 0.5]], ["source", "so100@1.0", 9, 10, null]]);
  });

  it("a bound that rounds to 0 keeps its digits, so the words never contradict the interval", () => {
    assert.equal(points(0.004), "0.4");
    assert.equal(points(-0.00004), "-0.004");
    assert.equal(points(0.3), "30");
    assert.equal(differenceSentence({
      a: { short: "a", subject: "A's rate", than: "a's" }, b: { short: "b", subject: "B's rate", than: "b's" }, diff: 0.2, ci: [0.003, 0.4], ci_level: 0.95, claim: "model",
    }), "A's rate is higher than b's by 20 points (95% interval 0.3 to 40) for a new cell of the robot model.");
  });

  it("a compare run's Result carries it as result.headline, from its own comparison", async () => {
    const pins = loadFirmwarePins();
    const unit = (name: string) => ({
      key: `policy:${name}`, policy_name: name, robot: "so101@3.11", model: "so101", firmware: "3.11", environment: "tabletop@1", task: "pick-cube@v1",
      policy: { type: "container", image: `assay/ref-policy:${name}` },
    });
    const run: RunRecord = {
      id: "run_c", accountId: "acct", kind: "compare", status: "completed", created: "", completed: "", request: {},
      resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
      plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20, kind: { compare: { paired: true } } },
      result: null, statusCode: null, statusMessage: null, idempotencyKey: null, priority: "standard", episodesTotal: 20, units: [unit("expert"), unit("novice")], kindState: null,
    };
    // 10 pairs on one cell: expert succeeds in all, novice in 7 (pairs 0-2 failed).
    const episodes = Array.from({ length: 20 }, (_, i) => episodeRecordOf({
      id: `e${i}`, run_id: "run_c", idx: i, status: "done", attempt: 1, seed: 100 + (i >> 1), cell_id: "a",
      outcome: i % 2 === 0 || i >= 6 ? "success" : "failure", failure_cluster: null, duration_s: 10, reset_s: 2, replay_spec: null, meta: null, evaluation: null,
      interruptions: "[]", assigned_at: null, started_at: null, finished_at: `2026-11-28T00:00:${String(i).padStart(2, "0")}Z`, unit: i % 2,
      assign: JSON.stringify({ pair: i >> 1, order: i % 2, block: "cell" }),
    }));
    const result = await kindModule("compare").result({ db: undefined as never, pins, baseUrl: "http://x" }, run, episodes) as Record<string, any>;
    assert.deepEqual(result.headline, compareHeadline(result));
    assert.equal(result.headline!.these_cells!.diff, 0.3);
    assert.equal(result.comparison.these_cells.diff, 0.3);
    assert.equal(result.headline!.test!.n_discordant, 3);
    assert.deepEqual(result.headline!.arms.map((a: { successes: number; n: number }) => [a.successes, a.n]), [[10, 10], [7, 10]]);
    assertRounded(result.headline);
  });
});
