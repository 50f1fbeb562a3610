/**
 * FinishesInFlight (fleet/finishes-in-flight.ts): the finish of a run that leaves last asks for the run's completion;
 * a finish that committed nothing (its one statement did not apply) asks only for one that committed and left meanwhile.
 */
import assert from "node:assert/strict";
import { FinishesInFlight } from "../../coordinator/fleet/finishes-in-flight.js";

describe("finishes in flight", () => {
  it("asks when the last finish leaves, and after one that committed nothing only if a committed one left meanwhile", () => {
    const finishes = new FinishesInFlight();
    finishes.enter("run_a");
    finishes.enter("run_a");
    assert.equal(finishes.leave("run_a"), false, "another finish is still under way");
    assert.equal(finishes.leave("run_a", false), true, "the committed finish that left first is owed its question");
    assert.equal(finishes.has("run_a"), false);

    finishes.enter("run_b");
    assert.equal(finishes.leave("run_b", false), false, "nothing committed, nothing to ask");
    finishes.enter("run_b");
    finishes.enter("run_b");
    assert.equal(finishes.leave("run_b", false), false);
    assert.equal(finishes.leave("run_b"), true);
  });
});
