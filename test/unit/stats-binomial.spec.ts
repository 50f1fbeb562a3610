import assert from "node:assert/strict";
import { binomialCdf, binomialPmf, binomialUpperTail, clopperPearson } from "../../coordinator/stats/binomial.js";
import { betaQuantile, regularizedIncompleteBeta } from "../../coordinator/stats/special-functions.js";

describe("binomial distribution", () => {
  it("reproduces Binomial(10, 0.3) table values", () => {
    assert.equal(binomialPmf(3, 10, 0.3).toFixed(10), "0.2668279320");
    assert.equal(binomialCdf(3, 10, 0.3).toFixed(10), "0.6496107184");
    assert.ok(Math.abs(binomialCdf(1, 10, 0.5) - 11 / 1024) < 1e-15);
  });

  it("keeps full precision at n = 100000", () => {
    let total = 0;
    for (let k = 0; k <= 100000; k++) total += binomialPmf(k, 100000, 0.3);
    assert.ok(Math.abs(total - 1) < 1e-12, `pmf sums to ${total}`);
    // Symmetric tails of Binomial(1e5, 1/2) agree to many digits, and are tiny but not zero.
    const lower = binomialCdf(49000, 100000, 0.5);
    const upper = binomialUpperTail(51000, 100000, 0.5);
    assert.ok(lower > 1e-11 && lower < 1e-9, `lower tail ${lower}`);
    assert.ok(Math.abs(lower / upper - 1) < 1e-9);
    assert.ok(Math.abs(binomialCdf(49999, 100000, 0.5) + binomialUpperTail(50000, 100000, 0.5) - 1) < 1e-12);
  });

  it("handles the edges of the support and of p", () => {
    assert.equal(binomialCdf(-1, 10, 0.4), 0);
    assert.equal(binomialCdf(10, 10, 0.4), 1);
    assert.equal(binomialPmf(0, 5, 0), 1);
    assert.equal(binomialPmf(5, 5, 1), 1);
    assert.equal(binomialUpperTail(0, 5, 0.2), 1);
    assert.throws(() => binomialPmf(1, 5, 1.2), /p must be in \[0, 1\]/);
  });
});

describe("incomplete beta", () => {
  it("matches closed forms", () => {
    // I_0.5(2, 3) = 11/16; I_x(1, 1) = x; I_x(a, 1) = x^a.
    assert.ok(Math.abs(regularizedIncompleteBeta(0.5, 2, 3) - 11 / 16) < 1e-14);
    assert.ok(Math.abs(regularizedIncompleteBeta(0.3, 1, 1) - 0.3) < 1e-14);
    assert.ok(Math.abs(regularizedIncompleteBeta(0.9, 7, 1) - 0.9 ** 7) < 1e-14);
    assert.ok(Math.abs(betaQuantile(0.9 ** 7, 7, 1) - 0.9) < 1e-12);
  });
});

describe("Clopper-Pearson interval", () => {
  it("matches published exact limits", () => {
    const table: Array<[number, number, string, string]> = [
      [0, 10, "0.0000", "0.3085"],
      [5, 10, "0.1871", "0.8129"],
      // Fagerland, Lydersen & Laake (2017), ch. 8: 13 of 16 -> 0.5435 to 0.9595.
      [13, 16, "0.5435", "0.9595"],
      [10, 10, "0.6915", "1.0000"],
    ];
    for (const [k, n, low, high] of table) {
      const [l, h] = clopperPearson(k, n);
      assert.deepEqual([l.toFixed(4), h.toFixed(4)], [low, high], `${k}/${n}`);
    }
  });

  it("is the inverse of the binomial tails", () => {
    const [lower, upper] = clopperPearson(7, 40, 0.9);
    assert.ok(Math.abs(binomialUpperTail(7, 40, lower) - 0.05) < 1e-9);
    assert.ok(Math.abs(binomialCdf(7, 40, upper) - 0.05) < 1e-9);
  });

  it("rejects counts that cannot be", () => {
    assert.throws(() => clopperPearson(11, 10), /k must be an integer in 0..10/);
    assert.throws(() => clopperPearson(1, 10, 1.5), /confidence must be in/);
  });
});
