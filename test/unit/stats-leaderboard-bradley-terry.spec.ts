import assert from "node:assert/strict";
import { comparisonFromPairedCounts, fitBradleyTerry, type PairwiseComparison } from "../../coordinator/stats/bradley-terry.js";
import { simulateBradleyTerryCoverage } from "../../coordinator/stats/bradley-terry-simulation.js";
import { tallyPairs } from "../../coordinator/stats/paired-difference.js";
import { mulberry32 } from "../../coordinator/stats/simulation.js";

const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} vs ${expected}`);

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

describe("Bradley-Terry fit", () => {
  it("gives the closed-form answer for two policies when the prior is negligible", () => {
    // 30 wins to 10: θ_a - θ_b = ln 3, each ± ln 3 / 2 around the mean; Var(θ_a - θ_b) =
    // 1 / (40 · 0.75 · 0.25), and θ_a - mean = (θ_a - θ_b) / 2.
    const fit = fitBradleyTerry([{ a: "a", b: "b", winsA: 30, winsB: 10, ties: 17 }], { priorTies: 1e-6 });
    assert.ok(fit.converged);
    const [a, b] = fit.policies;
    assert.deepEqual([a.id, b.id], ["a", "b"]);
    close(a.log_strength, Math.log(3) / 2, 1e-6, "a");
    close(b.log_strength, -Math.log(3) / 2, 1e-6, "b");
    close(a.se!, Math.sqrt(1 / 7.5) / 2, 1e-6, "se");
    close(a.ci95![0], Math.log(3) / 2 - 1.959964 * Math.sqrt(1 / 7.5) / 2, 1e-5, "lower");
    close(a.elo, 1000 + (400 / Math.LN10) * (Math.log(3) / 2), 1e-4, "elo");
    assert.deepEqual([a.wins, a.losses, a.ties, b.wins, b.losses, b.ties], [30, 10, 17, 10, 30, 17]);
  });

  it("is a stationary point of the penalised likelihood", () => {
    const comparisons: PairwiseComparison[] = [
      { a: "p", b: "q", winsA: 12, winsB: 5, ties: 30 },
      { a: "q", b: "r", winsA: 9, winsB: 9, ties: 20 },
      { a: "p", b: "r", winsA: 15, winsB: 2, ties: 25 },
      { a: "r", b: "s", winsA: 4, winsB: 7, ties: 10 },
    ];
    const fit = fitBradleyTerry(comparisons);
    // The reported strengths are centred; the fit itself has the virtual policy at 0, so undo the
    // centring by the one shift that zeroes the prior's total score, then check every score is 0.
    const theta = new Map(fit.policies.map((p) => [p.id, p.log_strength]));
    const ids = [...theta.keys()];
    const priorScore = (shift: number) => ids.reduce((sum, id) => sum + 0.5 - sigmoid(theta.get(id)! + shift), 0);
    let low = -10;
    let high = 10;
    for (let i = 0; i < 200; i++) {
      const mid = (low + high) / 2;
      if (priorScore(mid) > 0) low = mid;
      else high = mid;
    }
    for (const id of ids) {
      const t = theta.get(id)! + low;
      let score = 0.5 - sigmoid(t); // half a win of one virtual game, minus its expectation
      for (const c of comparisons) {
        if (c.a !== id && c.b !== id) continue;
        const [mine, theirs, other] = c.a === id ? [c.winsA, c.winsB, c.b] : [c.winsB, c.winsA, c.a];
        score += mine - (mine + theirs) * sigmoid(t - theta.get(other)! - low);
      }
      close(score, 0, 1e-8, `score of ${id}`);
    }
  });

  it("recovers known strengths from many simulated outcomes", () => {
    const truth = [-1.2, -0.4, 0, 0.5, 1.1];
    const mean = truth.reduce((s, t) => s + t, 0) / truth.length;
    const random = mulberry32(2024);
    const comparisons: PairwiseComparison[] = [];
    for (let i = 0; i < truth.length; i++) {
      for (let j = i + 1; j < truth.length; j++) {
        const c = { a: `p${i}`, b: `p${j}`, winsA: 0, winsB: 0, ties: 0 };
        for (let e = 0; e < 3000; e++) {
          if (random() < 0.4) c.ties++;
          else if (random() < sigmoid(truth[i] - truth[j])) c.winsA++;
          else c.winsB++;
        }
        comparisons.push(c);
      }
    }
    const fit = fitBradleyTerry(comparisons);
    assert.deepEqual(fit.policies.map((p) => p.id), ["p4", "p3", "p2", "p1", "p0"]);
    for (const p of fit.policies) {
      const expected = truth[Number(p.id.slice(1))] - mean;
      close(p.log_strength, expected, 0.1, p.id);
      assert.ok(p.ci95![0] <= expected && expected <= p.ci95![1], `${p.id}: ${p.ci95} misses ${expected}`);
      assert.ok(p.se! < 0.05, `${p.id} se ${p.se}`);
    }
  });

  it("covers the true strengths at about the nominal rate (200 seeded replications)", () => {
    const result = simulateBradleyTerryCoverage({ strengths: [-1, -0.5, 0, 0.3, 0.7, 1.2], episodesPerPair: 40, tieRate: 0.5 }, 200, 99);
    assert.ok(result.coverage >= 0.9 && result.coverage <= 0.99, `coverage ${result.coverage}`);
    assert.ok(Math.abs(result.strongestBias) < 0.1, `bias of the strongest ${result.strongestBias}`);
  });

  it("reports disconnected components, each centred on its own", () => {
    const fit = fitBradleyTerry([
      { a: "c", b: "d", winsA: 2, winsB: 6, ties: 1 },
      { a: "a", b: "b", winsA: 7, winsB: 3, ties: 0 },
      { a: "e", b: "b", winsA: 4, winsB: 4, ties: 2 },
      // Only ties: no decisive episode links f to anyone.
      { a: "f", b: "a", winsA: 0, winsB: 0, ties: 9 },
    ]);
    assert.deepEqual(fit.components, [["a", "b", "e"], ["c", "d"], ["f"]]);
    const byId = new Map(fit.policies.map((p) => [p.id, p]));
    assert.deepEqual(["a", "b", "e", "c", "d", "f"].map((id) => byId.get(id)!.component), [0, 0, 0, 1, 1, 2]);
    for (const [index, ids] of fit.components.entries()) {
      const sum = ids.reduce((s, id) => s + byId.get(id)!.log_strength, 0);
      close(sum, 0, 1e-9, `component ${index} sums to zero`);
    }
    assert.ok(byId.get("d")!.log_strength > byId.get("c")!.log_strength);
    const f = byId.get("f")!;
    assert.deepEqual([f.log_strength, f.se, f.ci95, f.elo_ci95, f.ties], [0, null, null, null, 9]);
    assert.deepEqual(fit.policies.map((p) => p.id), ["a", "e", "b", "d", "c", "f"]);
  });

  it("gives a policy that won every decisive episode a finite strength with a wide interval", () => {
    const fit = fitBradleyTerry([
      { a: "champ", b: "x", winsA: 10, winsB: 0, ties: 12 },
      { a: "champ", b: "y", winsA: 8, winsB: 0, ties: 15 },
      { a: "x", b: "y", winsA: 11, winsB: 9, ties: 20 },
    ]);
    assert.ok(fit.converged);
    const [champ, ...rest] = fit.policies;
    assert.equal(champ.id, "champ");
    assert.ok(Number.isFinite(champ.log_strength) && champ.log_strength > 1.5, `champ ${champ.log_strength}`);
    assert.ok(Number.isFinite(champ.ci95![1]));
    const width = (p: typeof champ) => p.ci95![1] - p.ci95![0];
    for (const p of rest) assert.ok(width(champ) > 1.5 * width(p), `champ ${width(champ)} vs ${p.id} ${width(p)}`);
    // A stronger prior pulls it in.
    const firm = fitBradleyTerry(
      [
        { a: "champ", b: "x", winsA: 10, winsB: 0, ties: 12 },
        { a: "champ", b: "y", winsA: 8, winsB: 0, ties: 15 },
        { a: "x", b: "y", winsA: 11, winsB: 9, ties: 20 },
      ],
      { priorTies: 4 },
    );
    assert.ok(firm.policies[0].log_strength < champ.log_strength);
  });

  it("does not depend on the order of the comparisons or on which side is a", () => {
    const random = mulberry32(8);
    const ids = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
    const comparisons: PairwiseComparison[] = [];
    for (let r = 0; r < 25; r++) {
      const i = Math.floor(random() * ids.length);
      const j = (i + 1 + Math.floor(random() * (ids.length - 1))) % ids.length;
      comparisons.push({ a: ids[i], b: ids[j], winsA: Math.floor(random() * 6), winsB: Math.floor(random() * 6), ties: Math.floor(random() * 6) });
    }
    const expected = fitBradleyTerry(comparisons);
    for (let shuffle = 0; shuffle < 4; shuffle++) {
      const shuffled = comparisons.map((c) => (random() < 0.5 ? c : { a: c.b, b: c.a, winsA: c.winsB, winsB: c.winsA, ties: c.ties }));
      for (let i = shuffled.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
      }
      assert.deepEqual(fitBradleyTerry(shuffled), expected);
    }
  });

  it("takes a paired compare run's table: only-A and only-B are wins, the rest ties", () => {
    const pairs = [
      { a: true, b: false },
      { a: true, b: false },
      { a: false, b: true },
      { a: true, b: true },
      { a: false, b: false },
    ];
    assert.deepEqual(comparisonFromPairedCounts("pi0", "octo", tallyPairs(pairs)), { a: "pi0", b: "octo", winsA: 2, winsB: 1, ties: 2 });
  });

  it("rejects outcomes it cannot fit, saying which", () => {
    assert.throws(() => fitBradleyTerry([{ a: "x", b: "x", winsA: 1, winsB: 0, ties: 0 }]), /comparison 0: a policy cannot be compared with itself \("x"\)/);
    assert.throws(() => fitBradleyTerry([{ a: "x", b: "y", winsA: -1, winsB: 0, ties: 0 }]), /comparison 0: winsA must be a non-negative integer; got -1/);
    assert.throws(() => fitBradleyTerry([{ a: "", b: "y", winsA: 1, winsB: 0, ties: 0 }]), /comparison 0: a must be a non-empty policy id/);
    assert.throws(() => fitBradleyTerry([], { priorTies: 0 }), /priorTies must be a positive number; got 0/);
    const empty = fitBradleyTerry([]);
    assert.deepEqual([empty.policies, empty.components, empty.converged], [[], [], true]);
  });
});
