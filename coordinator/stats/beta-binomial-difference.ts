/**
 * The difference of two model-level success rates, μ_A − μ_B, each arm on its own cells: the
 * two-sample rule of unpaired compare and transfer (docs/statistics.md, "Two model-level rates").
 *
 * Model. Each arm is the headline's beta-binomial model (beta-binomial-rate.ts): its cells' rates
 * drawn from a Beta with mean μ and ICC ρ, its own (μ, ρ), with the same prior (μ ~ Beta(1/2, 1/2),
 * ρ ~ the prior passed in). The arms share no cell and no parameter, so their posteriors are
 * independent and the posterior of D = μ_A − μ_B is the convolution of the two marginal posteriors.
 *
 * Computation, deterministic. Each arm's marginal posterior of μ (its fine grid in u, mass spread
 * evenly in u within a step) is re-binned onto 2000 equal steps in μ by exact overlap in u; within a
 * μ step it is taken as uniform. The difference of two uniforms on steps of width h is triangular, so
 * D's density is piecewise linear with knots at multiples of h, the knot value g_j = Σ_i a_i b_{i−j} / h;
 * its CDF is piecewise quadratic and the quantiles solve that quadratic exactly. P(μ_A > μ_B) is
 * 1 − CDF(0). The reported interval is the equal-tailed one.
 */

import { betaBinomialRatePosterior, DEFAULT_HEADLINE_PRIOR, type HeadlinePrior, type RatePosterior } from "./beta-binomial-rate.js";
import { zForConfidence } from "./wilson.js";

/** Name results carry for this interval. */
export const BETA_BINOMIAL_DIFFERENCE_METHOD = "beta-binomial-posterior-difference";

/** Equal steps in μ the two marginals are re-binned onto. */
export const DIFFERENCE_STEPS = 2000;

export interface RateDifference {
  /** Posterior mean of μ_A − μ_B. */
  diff: number;
  /** Equal-tailed posterior interval of μ_A − μ_B at the confidence asked. */
  ci: [number, number];
  /** Posterior probability that μ_A > μ_B. */
  probability_a_greater: number;
  method: typeof BETA_BINOMIAL_DIFFERENCE_METHOD;
  /** Posterior means of each arm's model-level rate. */
  mean_a: number;
  mean_b: number;
}

export interface RateDifferenceOptions {
  /** Confidence of the interval; 0.95 unless given. */
  ci?: number;
  /** Prior of both arms; DEFAULT_HEADLINE_PRIOR unless given. */
  prior?: HeadlinePrior;
  /** Prior of arm B when it differs (e.g. recorded by an earlier run); `prior` unless given. */
  priorB?: HeadlinePrior;
}

const NEGLIGIBLE_TAIL = 1e-12;

/** A marginal posterior in u re-binned onto `steps` equal steps in μ (exact overlap in u). */
export function massOnRateSteps(posterior: RatePosterior, steps = DIFFERENCE_STEPS): Float64Array {
  const { uLow, uHigh, mass } = posterior;
  const du = (uHigh - uLow) / mass.length;
  const cumulative = new Float64Array(mass.length + 1);
  for (let i = 0; i < mass.length; i++) cumulative[i + 1] = cumulative[i] + mass[i];
  const cdf = (u: number) => {
    if (u <= uLow) return 0;
    if (u >= uHigh) return cumulative[mass.length];
    const x = (u - uLow) / du;
    const i = Math.min(mass.length - 1, Math.floor(x));
    return cumulative[i] + (x - i) * mass[i];
  };
  const out = new Float64Array(steps);
  let previous = 0;
  for (let j = 0; j < steps; j++) {
    const edge = (j + 1) / steps;
    const next = cdf((2 / Math.PI) * Math.asin(Math.sqrt(Math.min(1, edge))));
    out[j] = Math.max(0, next - previous);
    previous = next;
  }
  return out;
}

/**
 * The distribution of X − Y for X, Y independent with `a[i]`, `b[i]` of their mass spread evenly on
 * [i·h, (i+1)·h]: knots d_j = j·h for j = −(M−1)..(M−1) (index j + M − 1), the density at each knot
 * and the CDF there.
 */
function differenceOfSteps(a: Float64Array, b: Float64Array): { density: Float64Array; cdf: Float64Array; h: number; offset: number } {
  const m = a.length;
  const h = 1 / m;
  const offset = m - 1;
  const density = new Float64Array(2 * m - 1);
  // Tails holding less than 1e-12 of the mass are left out of the sum (they cannot move a quantile).
  const support = (x: Float64Array) => {
    let lo = 0;
    let hi = x.length - 1;
    let tail = 0;
    while (lo < hi && tail + x[lo] < NEGLIGIBLE_TAIL) tail += x[lo++];
    tail = 0;
    while (hi > lo && tail + x[hi] < NEGLIGIBLE_TAIL) tail += x[hi--];
    return [lo, hi];
  };
  const [aLo, aHi] = support(a);
  const [bLo, bHi] = support(b);
  for (let i = aLo; i <= aHi; i++) {
    const ai = a[i];
    if (ai === 0) continue;
    for (let l = bLo; l <= bHi; l++) density[i - l + offset] += (ai * b[l]) / h;
  }
  const cdf = new Float64Array(density.length);
  // The knot at −(M−1)·h has no mass below it except the triangle from −M·h, whose density is 0 at −M·h.
  cdf[0] = (density[0] * h) / 2;
  for (let j = 1; j < density.length; j++) cdf[j] = cdf[j - 1] + (h * (density[j - 1] + density[j])) / 2;
  return { density, cdf, h, offset };
}

/** The q-quantile of the piecewise-linear density (knots from −M·h, where density and CDF are 0). */
function differenceQuantile(d: ReturnType<typeof differenceOfSteps>, q: number): number {
  const { density, cdf, h, offset } = d;
  const total = cdf[cdf.length - 1] + (density[density.length - 1] * h) / 2;
  const target = q * total;
  // Segment j runs from knot j−1 to knot j (knot −1 is −M·h with density 0, CDF 0).
  for (let j = 0; j <= density.length; j++) {
    const c0 = j === 0 ? 0 : cdf[j - 1];
    const g0 = j === 0 ? 0 : density[j - 1];
    const g1 = j === density.length ? 0 : density[j];
    const c1 = c0 + (h * (g0 + g1)) / 2;
    if (c1 < target && j < density.length) continue;
    // Solve c0 + g0 t + (g1 − g0) t² / (2h) = target for t in [0, h].
    const need = target - c0;
    const slope = (g1 - g0) / h;
    let t: number;
    if (Math.abs(slope) < 1e-12 * Math.max(1, Math.abs(g0))) t = g0 > 0 ? need / g0 : 0;
    else {
      const disc = Math.max(0, g0 * g0 + 2 * slope * need);
      t = (Math.sqrt(disc) - g0) / slope;
    }
    const start = (j - 1 - offset) * h;
    return start + Math.min(h, Math.max(0, t));
  }
  return 1;
}

/**
 * Posterior of μ_A − μ_B from each arm's per-cell counts (`k` successes of `n` episodes per cell;
 * cells with n = 0 ignored); see the module comment.
 */
export function betaBinomialDifference(
  cellsA: ReadonlyArray<{ k: number; n: number }>, cellsB: ReadonlyArray<{ k: number; n: number }>, options: RateDifferenceOptions = {},
): RateDifference {
  const prior = options.prior ?? DEFAULT_HEADLINE_PRIOR;
  return differenceOfPosteriors(armPosterior(cellsA, prior), armPosterior(cellsB, options.priorB ?? prior), options.ci ?? 0.95);
}

/** One arm's marginal posterior of μ and its mass on the difference's steps: computed once, used in any number of differences. */
export interface ArmPosterior {
  mean: number;
  steps: Float64Array;
}

/** The posterior of an arm's model-level rate from its per-cell counts under `prior`. */
export function armPosterior(cells: ReadonlyArray<{ k: number; n: number }>, prior: HeadlinePrior = DEFAULT_HEADLINE_PRIOR): ArmPosterior {
  const posterior = betaBinomialRatePosterior(cells, prior);
  return { mean: posterior.mean, steps: massOnRateSteps(posterior) };
}

/** {@link betaBinomialDifference} of two arms' posteriors computed beforehand (several differences over the same arms). */
export function differenceOfPosteriors(postA: ArmPosterior, postB: ArmPosterior, ci = 0.95): RateDifference {
  zForConfidence(ci); // validates ci
  const d = differenceOfSteps(postA.steps, postB.steps);
  const tail = (1 - ci) / 2;
  const total = d.cdf[d.cdf.length - 1] + (d.density[d.density.length - 1] * d.h) / 2;
  const below = d.cdf[d.offset] / total; // CDF at D = 0
  const clamp = (x: number) => Math.min(1, Math.max(-1, x));
  return {
    diff: postA.mean - postB.mean,
    ci: [clamp(differenceQuantile(d, tail)), clamp(differenceQuantile(d, 1 - tail))],
    probability_a_greater: Math.min(1, Math.max(0, 1 - below)),
    method: BETA_BINOMIAL_DIFFERENCE_METHOD,
    mean_a: postA.mean,
    mean_b: postB.mean,
  };
}
