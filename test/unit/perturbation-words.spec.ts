import { strict as assert } from "node:assert";
import { requestedPerturbationWords } from "../../coordinator/reports/perturbation-words.js";

describe("the PDF's requested perturbation schedule in words", () => {
  it("names each field with its unit, lists arrays, and keeps fields it does not know", () => {
    assert.equal(
      requestedPerturbationWords({ lighting: ["nominal", "dim"], distractors: "standard", layout_jitter_mm: 20, seed: 7, camera_shift_deg: 2 }),
      "lighting nominal, dim; distractors standard; layout jitter 20 mm; seed 7; camera shift 2 deg",
    );
  });

  it("says so when nothing was asked, and gives an eval run's schedules per unit", () => {
    assert.equal(requestedPerturbationWords(null), "none (the task's nominal conditions)");
    assert.equal(requestedPerturbationWords({}), "none (the task's nominal conditions)");
    assert.equal(
      requestedPerturbationWords([{ unit: "pick", lighting: ["bright"] }, { unit: "place" }]),
      "unit pick: lighting bright; unit place: nominal",
    );
  });

  it("is bounded however large the request", () => {
    const words = requestedPerturbationWords({ lighting: new Array(500).fill("nominal") });
    assert.equal(words.length, 600);
    assert.ok(words.endsWith("…"));
  });
});
