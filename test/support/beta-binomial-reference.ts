/**
 * The headline's posterior computed independently of coordinator/stats/beta-binomial-rate.ts, for the
 * unit tests and the integration tests that check a real run's headline. Only the log-gamma function
 * is shared (tested on its own in stats-binomial.spec.ts).
 */
import { logGamma } from "../../coordinator/stats/special-functions.js";

/** Per-cell counts. */
export type Cells = Array<{ k: number; n: number }>;

/**
 * An independent computation of the same posterior, written here from the model alone: μ on 1500
 * equal steps in μ (not in u), each weighted by its exact Jeffreys prior mass (2/π)(asin √hi − asin √lo);
 * ρ on 300 bins equally spaced in ln ρ from 1e−9 to 1 (plus [0, 1e−9]), each weighted by its exact
 * Beta(1, 9) mass 1 − (1 − ρ)^9; the likelihood as the beta-binomial pmf through log-gamma at the
 * bin's geometric centre. Returns the equal-tailed 95% interval of μ, and ρ's median and 95th percentile.
 */
export function referenceOf(cells: Cells, steps = 1500, bins = 300): { ci: [number, number]; icc: [number, number] } {
  const { mass, iccMass, edges, total } = referenceGrid(cells, steps, bins);
  const perStep = edges.length - 1;
  const iccQuantile = (p: number) => {
    let cumulative = 0;
    for (let r = 0; r < perStep; r++) {
      const m = iccMass[r] / total;
      if (cumulative + m >= p) return edges[r] + ((p - cumulative) / m) * (edges[r + 1] - edges[r]);
      cumulative += m;
    }
    return 1;
  };
  const quantile = (p: number) => {
    let cumulative = 0;
    for (let i = 0; i < steps; i++) {
      const m = mass[i] / total;
      if (cumulative + m >= p) return (i + (p - cumulative) / m) / steps;
      cumulative += m;
    }
    return 1;
  };
  return { ci: [quantile(0.025), quantile(0.975)], icc: [iccQuantile(0.5), iccQuantile(0.95)] };
}

/**
 * The marginal posterior of μ on `steps` equal steps in μ (normalized masses), from the same
 * independent grid as {@link referenceOf}.
 */
export function referenceRateMass(cells: Cells, steps = 1500, bins = 300): Float64Array {
  const { mass, total } = referenceGrid(cells, steps, bins);
  return mass.map((m) => m / total);
}

/** P(μ ≤ x | data) from the same independent grid (x a multiple of 1/steps; default prior). */
export function referenceProbabilityBelow(cells: Cells, x: number, steps = 1500, bins = 300): number {
  const { mass, total } = referenceGrid(cells, steps, bins);
  let below = 0;
  for (let i = 0; i < Math.round(x * steps); i++) below += mass[i];
  return below / total;
}

function referenceGrid(cells: Cells, steps: number, bins: number) {
  const cdf = (x: number) => -Math.expm1(9 * Math.log1p(-x));
  const edges = [0, ...Array.from({ length: bins }, (_, i) => Math.exp(Math.log(1e-9) * (1 - i / (bins - 1))))];
  const perStep = edges.length - 1;
  // The same sum as Σ_cells [ln B(k + μs, n − k + (1 − μ)s) − ln B(μs, (1 − μ)s)], regrouped: equal cells
  // counted once with their multiplicity, and the terms that depend on ρ alone (ln Γ(s), ln Γ(n + s)) or on
  // the grid point alone (ln Γ(μs) + ln Γ((1 − μ)s)) computed once instead of once per cell.
  const distinct = new Map<string, { k: number; n: number; times: number }>();
  for (const c of cells) {
    const key = `${c.k}/${c.n}`;
    const seen = distinct.get(key);
    if (seen) seen.times++;
    else distinct.set(key, { k: c.k, n: c.n, times: 1 });
  }
  const groups = [...distinct.values()];
  const rhoOf = (r: number) => (r === 0 ? edges[1] / 2 : Math.sqrt(edges[r] * edges[r + 1]));
  // Per ρ bin: the prior's log mass plus the terms that do not depend on μ.
  const perBin = new Float64Array(perStep);
  for (let r = 0; r < perStep; r++) {
    const s = 1 / rhoOf(r) - 1;
    let value = Math.log(cdf(edges[r + 1]) - cdf(edges[r])) + cells.length * logGamma(s);
    for (const g of groups) value -= g.times * logGamma(g.n + s);
    perBin[r] = value;
  }
  const mass = new Float64Array(steps);
  const iccMass = new Float64Array(perStep);
  const logs = new Float64Array(steps * perStep);
  let max = -Infinity;
  for (let i = 0; i < steps; i++) {
    const lo = i / steps;
    const hi = (i + 1) / steps;
    const mu = (lo + hi) / 2;
    const logPrior = Math.log((2 / Math.PI) * (Math.asin(Math.sqrt(hi)) - Math.asin(Math.sqrt(lo))));
    for (let r = 0; r < perStep; r++) {
      const s = 1 / rhoOf(r) - 1;
      const a = mu * s;
      const b = (1 - mu) * s;
      let value = logPrior + perBin[r] - cells.length * (logGamma(a) + logGamma(b));
      for (const g of groups) value += g.times * (logGamma(g.k + a) + logGamma(g.n - g.k + b));
      logs[i * perStep + r] = value;
      if (value > max) max = value;
    }
  }
  let total = 0;
  for (let j = 0; j < logs.length; j++) {
    const w = Math.exp(logs[j] - max);
    mass[Math.floor(j / perStep)] += w;
    iccMass[j % perStep] += w;
    total += w;
  }
  return { mass, iccMass, edges, total };
}
