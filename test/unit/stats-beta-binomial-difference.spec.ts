/**
 * The model-level difference of two rates, each arm on its own cells (issue 25, item 4):
 * coordinator/stats/beta-binomial-difference.ts against Monte Carlo draws from the two posteriors,
 * each computed independently (test/support/beta-binomial-reference.ts) and sampled separately here;
 * and the values docs/statistics.md ("Two model-level rates") quotes.
 */
import assert from "node:assert/strict";
import { betaBinomialDifference } from "../../coordinator/stats/beta-binomial-difference.js";
import { mulberry32 } from "../../protocol/prng.js";
import { referenceRateMass, type Cells } from "../support/beta-binomial-reference.js";

const STEPS = 1500;

/** N draws of μ from the independent posterior: inverse CDF over equal μ steps, uniform within a step. */
function draws(cells: Cells, count: number, seed: number): Float64Array {
  const mass = referenceRateMass(cells, STEPS);
  const cumulative = new Float64Array(STEPS + 1);
  for (let i = 0; i < STEPS; i++) cumulative[i + 1] = cumulative[i] + mass[i];
  const random = mulberry32(seed);
  const out = new Float64Array(count);
  for (let j = 0; j < count; j++) {
    const u = random() * cumulative[STEPS];
    let lo = 0;
    let hi = STEPS;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] <= u) lo = mid;
      else hi = mid;
    }
    out[j] = (lo + (u - cumulative[lo]) / (mass[lo] || 1)) / STEPS;
  }
  return out;
}

function monteCarlo(a: Cells, b: Cells): { ci: [number, number]; pA: number; mean: number } {
  const count = 200_000;
  const x = draws(a, count, 11);
  const y = draws(b, count, 23);
  const d = Float64Array.from(x, (v, i) => v - y[i]).sort();
  let greater = 0;
  let sum = 0;
  for (const v of d) { if (v > 0) greater += 1; sum += v; }
  return { ci: [d[Math.floor(0.025 * count)], d[Math.floor(0.975 * count)]], pA: greater / count, mean: sum / count };
}

const c = (...pairs: Array<[number, number]>): Cells => pairs.map(([k, n]) => ({ k, n }));

const EXAMPLES: Array<{ name: string; a: Cells; b: Cells; ci: [number, number]; pA: number }> = [
  { name: "expert 7/7, 6/6, 7/7 vs novice 4/7, 3/6, 4/7", a: c([7, 7], [6, 6], [7, 7]), b: c([4, 7], [3, 6], [4, 7]), ci: [0.1738, 0.6769], pA: 0.9990 },
  { name: "0.7 vs 0.5 at 200 episodes on three cells each", a: c([47, 67], [46, 67], [47, 66]), b: c([34, 67], [33, 67], [33, 66]), ci: [0.0012, 0.3637], pA: 0.9755 },
  { name: "one cell each: 3/4 vs 5/10", a: c([3, 4]), b: c([5, 10]), ci: [-0.4040, 0.6706], pA: 0.7348 },
  { name: "unequal cells: 9/10, 30/40, 3/5 vs 20/30, 10/20", a: c([9, 10], [30, 40], [3, 5]), b: c([20, 30], [10, 20]), ci: [-0.1306, 0.4471], pA: 0.8716 },
];

describe("beta-binomial posterior difference (two arms, each on its own cells)", () => {
  for (const example of EXAMPLES) {
    it(`${example.name}: interval and P(A > B) match Monte Carlo draws from the two independent posteriors`, function () {
      this.timeout(20_000);
      const got = betaBinomialDifference(example.a, example.b);
      const mc = monteCarlo(example.a, example.b);
      // Monte Carlo standard error of a 2.5% quantile from 200 000 draws is below 0.001 here.
      assert.ok(Math.abs(got.ci[0] - mc.ci[0]) <= 0.004, `lower ${got.ci[0]} vs Monte Carlo ${mc.ci[0]}`);
      assert.ok(Math.abs(got.ci[1] - mc.ci[1]) <= 0.004, `upper ${got.ci[1]} vs Monte Carlo ${mc.ci[1]}`);
      assert.ok(Math.abs(got.probability_a_greater - mc.pA) <= 0.004, `P(A > B) ${got.probability_a_greater} vs ${mc.pA}`);
      assert.ok(Math.abs(got.diff - mc.mean) <= 0.002, `mean ${got.diff} vs ${mc.mean}`);
      assert.equal(got.method, "beta-binomial-posterior-difference");
    });
    it(`${example.name}: the values docs/statistics.md quotes`, () => {
      const got = betaBinomialDifference(example.a, example.b);
      assert.ok(Math.abs(got.ci[0] - example.ci[0]) < 5e-5, `lower ${got.ci[0]}`);
      assert.ok(Math.abs(got.ci[1] - example.ci[1]) < 5e-5, `upper ${got.ci[1]}`);
      assert.ok(Math.abs(got.probability_a_greater - example.pA) < 5e-5, `P(A > B) ${got.probability_a_greater}`);
    });
  }

  it("is antisymmetric: swapping the arms negates the interval and complements P(A > B)", () => {
    const ab = betaBinomialDifference(c([9, 10], [30, 40]), c([20, 30], [10, 20]));
    const ba = betaBinomialDifference(c([20, 30], [10, 20]), c([9, 10], [30, 40]));
    assert.ok(Math.abs(ab.ci[0] + ba.ci[1]) < 1e-9 && Math.abs(ab.ci[1] + ba.ci[0]) < 1e-9);
    assert.ok(Math.abs(ab.probability_a_greater + ba.probability_a_greater - 1) < 1e-9);
  });

  it("identical arms: centred on 0 with P(A > B) = 1/2", () => {
    const d = betaBinomialDifference(c([0, 10], [0, 10]), c([0, 10], [0, 10]));
    assert.ok(Math.abs(d.ci[0] + d.ci[1]) < 1e-9);
    assert.ok(Math.abs(d.probability_a_greater - 0.5) < 1e-9);
    assert.equal(d.diff, 0);
  });

  it("refuses counts that are not counts", () => {
    assert.throws(() => betaBinomialDifference(c([5, 4]), c([1, 2])), RangeError);
    assert.throws(() => betaBinomialDifference(c([1, 2]), c([1, 2]), { ci: 1.5 }), RangeError);
  });
});
