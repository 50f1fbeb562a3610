import assert from "node:assert/strict";
import { AssayError } from "../../coordinator/errors/assay-error.js";
import { MAX_EPISODES, parseEpisodesSpec, requestedConfidence } from "../../coordinator/runs/episodes-spec.js";
import { computeRunResult } from "../../coordinator/runs/result-summary.js";
import { betaBinomialRate } from "../../coordinator/stats/beta-binomial-rate.js";
import { wilsonInterval } from "../../coordinator/stats/wilson.js";
import { episodeRecordOf } from "../../coordinator/store/episodes-repo.js";

function rejects(value: unknown): AssayError {
  try {
    parseEpisodesSpec(value);
  } catch (error) {
    assert.ok(error instanceof AssayError);
    assert.equal(error.code, "episodes_invalid");
    return error;
  }
  assert.fail(`accepted ${JSON.stringify(value)}`);
}

describe("episodes spec", () => {
  it("accepts positive integers up to the maximum", () => {
    assert.deepEqual(parseEpisodesSpec(20), { kind: "count", count: 20 });
    assert.deepEqual(parseEpisodesSpec(1), { kind: "count", count: 1 });
    assert.equal(parseEpisodesSpec(MAX_EPISODES).count, MAX_EPISODES);
  });

  it("sizes auto(ci=0.95, moe=0.05) to 381 episodes, whitespace tolerant", () => {
    assert.deepEqual(parseEpisodesSpec("auto(ci=0.95, moe=0.05)"), { kind: "auto", ci: 0.95, moe: 0.05, count: 381 });
    assert.equal(parseEpisodesSpec(" auto( ci = 0.95 ,moe=0.05 ) ").count, 381);
    assert.equal(parseEpisodesSpec("auto(ci=.9,moe=.1)").count > 0, true);
  });

  it("rejects auto(ci=2) with the exact documented message", () => {
    assert.equal(rejects("auto(ci=2)").message, 'episodes must be a positive integer or auto(ci=<0..1>, moe=<0..1>); got "auto(ci=2)"');
  });

  it("rejects zero, negatives, fractions, too many, and other types", () => {
    assert.equal(rejects(0).message, "episodes must be a positive integer or auto(ci=<0..1>, moe=<0..1>); got 0");
    rejects(-5);
    rejects(2.5);
    assert.match(rejects(MAX_EPISODES + 1).message, /at most 10000/);
    rejects("20");
    rejects(undefined);
    rejects(null);
    rejects({ auto: true });
  });

  it("rejects ci or moe outside (0, 1), saying which", () => {
    assert.match(rejects("auto(ci=1, moe=0.05)").message, /ci must be strictly between 0 and 1/);
    assert.match(rejects("auto(ci=0.95, moe=0)").message, /moe must be strictly between 0 and 1/);
    assert.match(rejects("auto(ci=0.95, moe=1.5)").message, /got "auto\(ci=0.95, moe=1.5\)"/);
    assert.match(rejects("auto(ci=0.999, moe=0.001)").message, /at most 10000/);
  });
});

describe("auto(ci, moe) sizing, as docs/statistics.md states it", () => {
  it("sizes n as the smallest n whose Wilson half-width at p = 0.5 is at most moe (the values the docs quote)", () => {
    const sized = (spec: string) => parseEpisodesSpec(spec).count;
    assert.equal(sized("auto(ci=0.95, moe=0.05)"), 381);
    assert.equal(sized("auto(ci=0.90, moe=0.05)"), 268);
    assert.equal(sized("auto(ci=0.99, moe=0.05)"), 657);
    assert.equal(sized("auto(ci=0.95, moe=0.10)"), 93);
    assert.equal(sized("auto(ci=0.90, moe=0.10)"), 65);
    // At that n the half-width at an observed rate of 0.5 is within moe; at the next even n below it
    // (where 0.5 can be observed) it is not.
    const half = (n: number, ci: number) => { const [l, u] = wilsonInterval(n / 2, n, ci); return (u - l) / 2; };
    assert.ok(half(268, 0.9) <= 0.05 && half(266, 0.9) > 0.05);
  });

  it("a run sized at a confidence other than 95% also reports the interval at that confidence", () => {
    assert.equal(requestedConfidence({ episodes: "auto(ci=0.9, moe=0.1)" }), 0.9);
    assert.equal(requestedConfidence({ episodes_per_cell: "auto(ci=0.99, moe=0.05)" }), 0.99);
    assert.equal(requestedConfidence({ episodes: "auto(ci=0.95, moe=0.05)" }), undefined);
    assert.equal(requestedConfidence({ episodes: 20 }), undefined);
    const episodes = Array.from({ length: 10 }, (_, i) => episodeRecordOf({
      id: `e${i}`, run_id: "r", idx: i, status: "done", attempt: 1, seed: i, cell_id: "c", outcome: i < 7 ? "success" : "failure", failure_cluster: null,
      duration_s: 20, reset_s: 4, replay_spec: null, meta: null, evaluation: null, interruptions: "[]", assigned_at: null, started_at: null, finished_at: null,
    }));
    const context = { tier: "soak", environmentClass: "standard", priority: "standard" } as const;
    const at90 = computeRunResult("r", episodes, context, "http://x", { requestedCi: 0.9 });
    assert.deepEqual(at90.ci95, betaBinomialRate([{ k: 7, n: 10 }], { ci: 0.95 }).ci);
    assert.deepEqual(at90.ci_requested, { ci: 0.9, interval: betaBinomialRate([{ k: 7, n: 10 }], { ci: 0.9 }).ci, interval_method: "beta-binomial-posterior" });
    assert.ok(at90.ci_requested!.interval[0] > at90.ci95[0] && at90.ci_requested!.interval[1] < at90.ci95[1], "a 90% interval is narrower");
    assert.equal(computeRunResult("r", episodes, context, "http://x").ci_requested, undefined);
  });
});
