/**
 * The paired compare's model-level difference (coordinator/stats/paired-cell-difference.ts) computed
 * independently, from the model alone, for the unit test and the integration test of a real run:
 * from the pairs' own outcomes (x = a − b in {−1, 0, 1}), the posterior of (δ, τ²) on a plain grid:
 * δ on 2000 equal steps over [−1, 1], τ² = ρ_A σ_A² + ρ_B σ_B² with ρ_A, ρ_B each on 400 equal steps in ρ
 * weighted by their exact Beta(1, 9) mass 1 − (1 − ρ)^9 (the default prior only), the resulting τ²
 * values binned into 600 steps; the likelihood Π Normal(d_g; δ, v_g + τ²) evaluated at every grid
 * point (no closed form for δ given τ). Nothing is shared with the code under test.
 */

/** One complete pair: the cell both episodes ran on, and each policy's outcome. */
export interface ReferencePair {
  cell: string;
  a: boolean;
  b: boolean;
}

/** Equal-tailed interval of δ at posterior level `level` (0.97 is the 95% claim's), and P(δ > 0). */
export function pairedCellReference(pairs: readonly ReferencePair[], level = 0.97): { ci: [number, number]; probabilityAGreater: number; mean: number } {
  const byCell = new Map<string, number[]>();
  for (const p of pairs) byCell.set(p.cell, [...(byCell.get(p.cell) ?? []), Number(p.a) - Number(p.b)]);
  const groups = [...byCell.values()];
  const d = groups.map((xs) => xs.reduce((s, x) => s + x, 0) / xs.length);
  let squares = 0;
  groups.forEach((xs, g) => xs.forEach((x) => (squares += (x - d[g]) ** 2)));
  const n = pairs.length;
  const s2 = (squares + 1) / (n - groups.length + 1);
  const v = groups.map((xs) => s2 / xs.length);
  const pA = (pairs.filter((p) => p.a).length + 0.5) / (n + 1);
  const pB = (pairs.filter((p) => p.b).length + 0.5) / (n + 1);
  const varA = pA * (1 - pA);
  const varB = pB * (1 - pB);

  const steps = 400;
  const rhoMass = Array.from({ length: steps }, (_, i) => (1 - (i / steps)) ** 9 - (1 - (i + 1) / steps) ** 9);
  const tauBins = 600;
  const tauMax = varA + varB;
  const tauMass = new Float64Array(tauBins);
  const tauSum = new Float64Array(tauBins);
  for (let i = 0; i < steps; i++) {
    for (let j = 0; j < steps; j++) {
      const t = ((i + 0.5) / steps) * varA + ((j + 0.5) / steps) * varB;
      const bin = Math.min(tauBins - 1, Math.floor((t / tauMax) * tauBins));
      const m = rhoMass[i] * rhoMass[j];
      tauMass[bin] += m;
      tauSum[bin] += m * t;
    }
  }
  const deltas = 2000;
  const delta = (k: number) => -1 + (2 * (k + 0.5)) / deltas;
  const post = new Float64Array(deltas);
  const logs: number[] = [];
  const used: Array<{ tau2: number; mass: number }> = [];
  for (let t = 0; t < tauBins; t++) if (tauMass[t] > 0) used.push({ tau2: tauSum[t] / tauMass[t], mass: tauMass[t] });
  let max = -Infinity;
  for (const { tau2, mass } of used) {
    for (let k = 0; k < deltas; k++) {
      let l = Math.log(mass);
      for (let g = 0; g < d.length; g++) {
        const s = v[g] + tau2;
        l += -0.5 * Math.log(s) - ((d[g] - delta(k)) ** 2) / (2 * s);
      }
      logs.push(l);
      if (l > max) max = l;
    }
  }
  let index = 0;
  for (let u = 0; u < used.length; u++) for (let k = 0; k < deltas; k++) post[k] += Math.exp(logs[index++] - max);
  const total = post.reduce((s, x) => s + x, 0);
  const quantile = (q: number) => {
    let cumulative = 0;
    for (let k = 0; k < deltas; k++) {
      const m = post[k] / total;
      if (cumulative + m >= q) return -1 + (2 * (k + (q - cumulative) / m)) / deltas;
      cumulative += m;
    }
    return 1;
  };
  const tail = (1 - level) / 2;
  let above = 0;
  let mean = 0;
  for (let k = 0; k < deltas; k++) {
    if (delta(k) > 0) above += post[k] / total;
    mean += (delta(k) * post[k]) / total;
  }
  return { ci: [quantile(tail), quantile(1 - tail)], probabilityAGreater: above, mean };
}
