import assert from "node:assert/strict";
import { AssayError } from "../../coordinator/errors/assay-error.js";
import { MAX_EPISODES, parseEpisodesSpec } from "../../coordinator/runs/episodes-spec.js";

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
