/**
 * A leaderboard's identity is what it pins (coordinator/leaderboards/published-results.ts): results
 * that differ in the suite or task revision, the firmware, the environment, the perturbation
 * revision or settings, or the instruction set never share a board.
 */
import assert from "node:assert/strict";
import { boardIdOf, publishedPolicyName, type BoardPins } from "../../coordinator/leaderboards/published-results.js";

const BASE: BoardPins = {
  kind: "task", subject: "pick-cube@v1", robot: "so101@3.11", environment: "tabletop@1", perturbation_rev: "assay-perturb@1",
  perturbation: { layout_jitter_mm: 10 }, instructions: "sampled",
};

describe("leaderboard identity", () => {
  it("names the same pins with the same id, in any key order", () => {
    const reordered = Object.fromEntries(Object.entries(BASE).reverse()) as unknown as BoardPins;
    assert.equal(boardIdOf(reordered), boardIdOf(BASE));
    assert.match(boardIdOf(BASE), /^lb_[0-9a-f]{20}$/);
  });

  it("gives every pin that makes results incomparable its own board", () => {
    const variants: Array<Partial<BoardPins>> = [
      { subject: "pick-cube@v2" }, { robot: "so101@3.10" }, { environment: "tabletop@2" }, { perturbation_rev: "assay-perturb@2" },
      { perturbation: { layout_jitter_mm: 20 } }, { perturbation: null }, { instructions: "held_out" }, { kind: "suite" },
    ];
    const ids = new Set([boardIdOf(BASE), ...variants.map((v) => boardIdOf({ ...BASE, ...v }))]);
    assert.equal(ids.size, variants.length + 1);
  });

  it("publishes a policy under its given name, else its image, its hf, or a plain label", () => {
    assert.equal(publishedPolicyName({ image: "acme/picker:3" }, " picker v3 "), "picker v3");
    assert.equal(publishedPolicyName({ image: "acme/picker:3" }, undefined), "acme/picker:3");
    assert.equal(publishedPolicyName({ hf: "acme/act-cube" }, undefined), "acme/act-cube");
    assert.equal(publishedPolicyName({ url: "wss://secret.example/token" }, undefined), "endpoint policy", "an endpoint's URL is never published");
  });
});
