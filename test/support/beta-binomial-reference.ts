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
  const logBeta = (a: number, b: number) => logGamma(a) + logGamma(b) - logGamma(a + b);
  const cdf = (x: number) => -Math.expm1(9 * Math.log1p(-x));
  const edges = [0, ...Array.from({ length: bins }, (_, i) => Math.exp(Math.log(1e-9) * (1 - i / (bins - 1))))];
  const mass = new Float64Array(steps);
  const iccMass = new Float64Array(edges.length - 1);
  const logs: number[] = [];
  let max = -Infinity;
  for (let i = 0; i < steps; i++) {
    const lo = i / steps;
    const hi = (i + 1) / steps;
    const mu = (lo + hi) / 2;
    const logPrior = Math.log((2 / Math.PI) * (Math.asin(Math.sqrt(hi)) - Math.asin(Math.sqrt(lo))));
    for (let r = 0; r + 1 < edges.length; r++) {
      const rho = r === 0 ? edges[1] / 2 : Math.sqrt(edges[r] * edges[r + 1]);
      const s = 1 / rho - 1;
      let value = logPrior + Math.log(cdf(edges[r + 1]) - cdf(edges[r]));
      for (const c of cells) value += logBeta(c.k + mu * s, c.n - c.k + (1 - mu) * s) - logBeta(mu * s, (1 - mu) * s);
      logs.push(value);
      if (value > max) max = value;
    }
  }
  const perStep = edges.length - 1;
  let total = 0;
  logs.forEach((value, j) => {
    const w = Math.exp(value - max);
    mass[Math.floor(j / perStep)] += w;
    iccMass[j % perStep] += w;
    total += w;
  });
  return { mass, iccMass, edges, total };
}
