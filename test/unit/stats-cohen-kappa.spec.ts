import assert from "node:assert/strict";
import { cohenKappa } from "../../coordinator/stats/cohen-kappa.js";

const close = (actual: number | null | undefined, expected: number, tol: number, what: string) =>
  assert.ok(actual !== null && actual !== undefined && Math.abs(actual - expected) < tol, `${what}: ${actual} vs ${expected}`);

describe("Cohen's kappa with its Fleiss, Cohen & Everitt (1969) interval", () => {
  it("reproduces the published worked example (statpsych ci.kappa(.05, 31, 12, 4, 58), after Fleiss & Paik 2003)", () => {
    // f00 = 31 (both no), f01 = 12 (y no, x yes), f10 = 4 (y yes, x no), f11 = 58 (both yes); rater A = y, B = x.
    // Published: Cohen kappa 0.6756757, SE 0.07344761, 95% CI [0.5317210, 0.8196303].
    const k = cohenKappa({ both: 58, onlyA: 4, onlyB: 12, neither: 31 });
    close(k.kappa, 0.6756757, 1e-7, "kappa");
    close(k.se, 0.07344761, 1e-8, "SE");
    close(k.ci?.[0], 0.531721, 1e-6, "lower");
    close(k.ci?.[1], 0.8196303, 1e-6, "upper");
    close(k.agreement_rate, 89 / 105, 1e-12, "observed agreement");
  });

  it("gives kappa 0.4 on the 20/5/10/15 table (Wikipedia's worked example) and is symmetric in the raters", () => {
    const k = cohenKappa({ both: 20, onlyA: 5, onlyB: 10, neither: 15 });
    close(k.kappa, 0.4, 1e-12, "kappa");
    const swapped = cohenKappa({ both: 20, onlyA: 10, onlyB: 5, neither: 15 });
    close(swapped.se, k.se!, 1e-12, "SE with the raters swapped");
  });

  it("has no kappa when one rater gave one answer throughout, or with no items; clips the interval to [-1, 1]", () => {
    assert.equal(cohenKappa({ both: 10, onlyA: 0, onlyB: 0, neither: 0 }).kappa, null);
    assert.deepEqual(cohenKappa({ both: 0, onlyA: 0, onlyB: 0, neither: 0 }), { n: 0, agreement_rate: null, kappa: null, se: null, ci: null });
    const perfect = cohenKappa({ both: 3, onlyA: 0, onlyB: 0, neither: 2 });
    assert.equal(perfect.kappa, 1);
    assert.ok(perfect.ci![1] <= 1 && perfect.ci![0] >= -1);
  });
});
