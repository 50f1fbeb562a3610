import assert from "node:assert/strict";
import { DEFAULT_HEADLINE_PRIOR } from "../../coordinator/stats/beta-binomial-rate.js";
import { fitIccPrior, fitIccPriorInSlices, ICC_PRIOR_FIT, type RunCells } from "../../coordinator/stats/icc-prior-fit.js";
import { betaQuantile } from "../../coordinator/stats/special-functions.js";
import { binomialSample, cellRateSample, gammaSample, mulberry32 } from "../../coordinator/stats/simulation.js";

const fittedAt = "2026-11-27T21:00:00.000Z";

/** Runs on `cells` cells of `episodes` each; each run's ICC drawn from Beta(a, b), its rate uniform on [0.2, 0.8]. */
function simulatedRuns(count: number, cells: number, episodes: number, icc: { a: number; b: number } | 0, seed: number): RunCells[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () => {
    const mean = 0.2 + 0.6 * random();
    let rho = 0;
    if (icc !== 0) {
      const x = gammaSample(random, icc.a);
      rho = x / (x + gammaSample(random, icc.b));
    }
    return Array.from({ length: cells }, () => ({ k: binomialSample(random, episodes, cellRateSample(random, mean, rho)), n: episodes }));
  });
}

const meanOf = (p: { a: number; b: number }) => p.a / (p.a + p.b);

describe("stats: the ICC prior fitted from the fleet (icc-prior-fit.ts)", () => {
  it("recovers the mean of a known ICC distribution from 200 simulated runs within 0.03", () => {
    const truth = { a: 2, b: 18 }; // mean 0.10
    const prior = fitIccPrior(simulatedRuns(200, 4, 30, truth, 7), { fittedAt });
    assert.equal(prior.source, "fleet");
    assert.equal(prior.fitted_on_runs, 200);
    assert.equal(prior.fitted_at, fittedAt);
    assert.deepEqual(prior.rate, DEFAULT_HEADLINE_PRIOR.rate, "the rate prior stays Jeffreys'");
    const fitted = prior.icc.parameters;
    assert.ok(Math.abs(meanOf(fitted) - 0.1) <= 0.03, `fitted mean ${meanOf(fitted)} (a=${fitted.a}, b=${fitted.b})`);
  });

  it("learns a small ICC when the fleet's cells barely differ, and a large one when they differ a lot", () => {
    const small = fitIccPrior(simulatedRuns(200, 4, 30, { a: 1, b: 99 }, 11), { fittedAt }).icc.parameters; // mean 0.01
    const large = fitIccPrior(simulatedRuns(200, 4, 30, { a: 6, b: 14 }, 12), { fittedAt }).icc.parameters; // mean 0.30
    assert.ok(meanOf(small) < 0.06, `small: fitted mean ${meanOf(small)}`);
    assert.ok(Math.abs(meanOf(large) - 0.3) <= 0.05, `large: fitted mean ${meanOf(large)}`);
  });

  it(`keeps the default below ${ICC_PRIOR_FIT.minRuns} qualifying runs; single-cell runs do not qualify`, () => {
    const few = simulatedRuns(ICC_PRIOR_FIT.minRuns - 1, 3, 20, { a: 1, b: 9 }, 3);
    assert.equal(fitIccPrior(few, { fittedAt }), DEFAULT_HEADLINE_PRIOR);
    const oneCell = simulatedRuns(50, 1, 20, { a: 1, b: 9 }, 4);
    assert.equal(fitIccPrior([...few, ...oneCell], { fittedAt }), DEFAULT_HEADLINE_PRIOR);
    const enough = fitIccPrior(simulatedRuns(ICC_PRIOR_FIT.minRuns, 3, 20, { a: 1, b: 9 }, 3), { fittedAt });
    assert.equal(enough.source, "fleet");
    assert.equal(enough.fitted_on_runs, ICC_PRIOR_FIT.minRuns);
  });

  it("never claims cells are identical: the floor holds when every run shows ICC 0", () => {
    const prior = fitIccPrior(simulatedRuns(400, 8, 50, 0, 5), { fittedAt });
    const { a, b } = prior.icc.parameters;
    assert.ok(meanOf({ a, b }) >= ICC_PRIOR_FIT.floorMean - 1e-6, `mean ${meanOf({ a, b })}`);
    assert.ok(betaQuantile(0.95, a, b) >= ICC_PRIOR_FIT.floorUpper95 - 1e-4, `95th percentile ${betaQuantile(0.95, a, b)}`);
  });

  it("with few runs stays near the default (shrinkage)", () => {
    const prior = fitIccPrior(simulatedRuns(ICC_PRIOR_FIT.minRuns, 4, 30, 0, 9), { fittedAt });
    const { a, b } = prior.icc.parameters;
    assert.ok(meanOf({ a, b }) > 0.02 && meanOf({ a, b }) < 0.1, `mean ${meanOf({ a, b })}: halfway at most from the default's 0.10`);
  });

  it("in slices gives the same prior, and the event loop a turn while it fits", async () => {
    const runs = simulatedRuns(60, 4, 20, { a: 2, b: 18 }, 11);
    let turns = 0;
    let fitting = true;
    const tick = () => {
      if (!fitting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const sliced = await fitIccPriorInSlices(runs, { fittedAt: "2026-11-27T00:00:00.000Z" }, 0);
    fitting = false;
    assert.deepEqual(sliced, fitIccPrior(runs, { fittedAt: "2026-11-27T00:00:00.000Z" }));
    // With slices of 0 ms every run's likelihood and every evaluation of the optimiser gives the loop a turn.
    assert.ok(turns >= 60, `the loop had ${turns} turns during the fit`);
  });

  it("is deterministic and rejects impossible counts, quoting them", () => {
    const runs = simulatedRuns(30, 3, 20, { a: 1, b: 9 }, 21);
    assert.deepEqual(fitIccPrior(runs, { fittedAt }), fitIccPrior(runs, { fittedAt }));
    assert.throws(() => fitIccPrior([[{ k: 5, n: 3 }]], { fittedAt }), /k=5, n=3/);
  });
});
