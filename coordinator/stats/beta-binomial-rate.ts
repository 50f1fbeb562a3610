/**
 * The model-level success rate of episodes run on several physical cells: a beta-binomial model
 * with a stated prior on the between-cell correlation, its posterior computed on a grid.
 *
 * Model (docs/statistics.md, "The headline"). Cell g's success rate θ_g is drawn from a Beta
 * distribution with mean μ and intra-cell correlation ρ (a + b = 1/ρ − 1); the k_g successes of its
 * n_g episodes are Binomial(n_g, θ_g). Marginally k_g is beta-binomial:
 *
 *   p(k_g | μ, ρ) ∝ B(k_g + μs, n_g − k_g + (1−μ)s) / B(μs, (1−μ)s),   s = 1/ρ − 1
 *
 * μ is the estimand: the rate of a new cell of this model (the mean over the population of cells).
 * Priors: μ ~ Beta(1/2, 1/2) (Jeffreys), ρ ~ Beta(1, 9) by default (mean 0.10, 95th percentile
 * 0.28), or a prior passed in (item 2 of issue 25 fits one from the fleet). The headline is the
 * equal-tailed posterior interval of μ (`interval_method: "beta-binomial-posterior"`).
 *
 * Computation, deterministic. The ratio of Beta functions is a product of rising factorials,
 * ln Γ(x + k) − ln Γ(x) = Σ_{j<k} ln(x + j), summed per distinct count (or by log-gamma when that is
 * cheaper), which is exact for every ρ in (0, 1) and tends to the binomial as ρ → 0. μ is gridded in
 * u with μ = sin²(πu/2), under which the Jeffreys prior is uniform (the arcsine law), so the prior's
 * infinite density at 0 and 1 costs nothing; ρ is gridded in bins uniform in logit(ρ) over
 * [−14, 12] (ρ from 8e−7 to 0.999994), each weighted by its exact prior mass, plus a bin [0, 8e−7]
 * evaluated at the binomial limit and one above. A coarse pass (48 μ points × 28 ρ bins) finds where
 * the posterior lies; a fine pass (160 μ points over that range × each ρ bin with mass above 1e−10
 * split in 3) gives the interval. Quantiles interpolate the posterior CDF linearly within a μ
 * step. The tests check the bounds against an independent computation to 0.001. As for Jeffreys'
 * interval (Brown, Cai & DasGupta 2001), the lower bound is 0 when no episode succeeded and the
 * upper bound 1 when none failed.
 */

import { betaQuantile, logBeta, logGamma, regularizedIncompleteBeta } from "./special-functions.js";
import { zForConfidence } from "./wilson.js";

/** A Beta distribution's parameters as results record them. */
export interface BetaParameters {
  a: number;
  b: number;
}

/**
 * The prior a headline was computed with; results record it whole so that a result never
 * changes after it is issued, whatever the fleet learns later.
 */
export interface HeadlinePrior {
  /** Prior of the model-level rate μ. */
  rate: { family: "beta"; parameters: BetaParameters };
  /** Prior of the intra-cell correlation ρ. */
  icc: { family: "beta"; parameters: BetaParameters };
  /** "default" (this module's), or where a fitted prior came from. */
  source: string;
  /** Runs a fitted prior was fitted on; null for the default. */
  fitted_on_runs: number | null;
  /** When a fitted prior was fitted (ISO 8601); null for the default. */
  fitted_at: string | null;
}

/** The documented default: μ ~ Beta(1/2, 1/2), ρ ~ Beta(1, 9). */
export const DEFAULT_HEADLINE_PRIOR: HeadlinePrior = Object.freeze({
  rate: Object.freeze({ family: "beta" as const, parameters: Object.freeze({ a: 0.5, b: 0.5 }) }),
  icc: Object.freeze({ family: "beta" as const, parameters: Object.freeze({ a: 1, b: 9 }) }),
  source: "default",
  fitted_on_runs: null,
  fitted_at: null,
});

/** Name results carry for the beta-binomial posterior interval. */
export const BETA_BINOMIAL_INTERVAL_METHOD = "beta-binomial-posterior";

/**
 * The ICC's posterior keeps more than this share of its prior variance: the cells have removed less
 * than half of what the prior leaves open about how much cells differ, so the model-level interval
 * rests mostly on the prior.
 */
export const PRIOR_DOMINATED_VARIANCE_RATIO = 0.5;

/** Posterior summary of the model-level rate; field names are the wire names where they go on the wire. */
export interface BetaBinomialRate {
  /** Equal-tailed posterior interval of μ at the confidence asked. */
  ci: [number, number];
  interval_method: typeof BETA_BINOMIAL_INTERVAL_METHOD;
  /** Cells with at least one episode. */
  clusters: number;
  /** Posterior mean and variance of μ. */
  mean: number;
  variance: number;
  /** mean(1 − mean) / variance: the independent episodes the posterior of μ is worth (0 with no episodes). */
  effective_n: number;
  /** Posterior median and 95th percentile of the ICC ρ. */
  icc: { median: number; upper95: number };
  /** Posterior over prior variance of ρ. */
  icc_variance_ratio: number;
  /** One cell or none, or icc_variance_ratio > PRIOR_DOMINATED_VARIANCE_RATIO: the interval rests mostly on the prior. */
  rests_on_prior: boolean;
  prior: HeadlinePrior;
}

/** Grid sizes (exported so the docs and tests can state them). */
export const GRID = Object.freeze({
  coarseRate: 48,
  fineRate: 160,
  iccLogitLow: -14,
  iccLogitHigh: 12,
  coarseIccBins: 26,
  iccSplit: 3,
  /** Bins (coarse points) with less than this share of the posterior are left out of the fine pass. */
  negligible: 1e-10,
});

/** One bin of the ρ grid: its representative ρ (0 = binomial limit), its prior mass and its edges. */
interface IccBin {
  rho: number;
  low: number;
  high: number;
  logMass: number;
}

const logistic = (x: number) => 1 / (1 + Math.exp(-x));

function betaCdf(x: number, p: BetaParameters): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  return regularizedIncompleteBeta(x, p.a, p.b);
}

/** ρ bins with edges uniform in logit from `lowLogit` to `highLogit` in `count` steps, plus the end bins when asked. */
function iccBins(prior: BetaParameters, lowLogit: number, highLogit: number, count: number, withZero: boolean, withTop: boolean): IccBin[] {
  const bins: IccBin[] = [];
  const step = (highLogit - lowLogit) / count;
  const mass = (low: number, high: number) => Math.log(Math.max(0, betaCdf(high, prior) - betaCdf(low, prior)));
  if (withZero) {
    const high = logistic(lowLogit);
    bins.push({ rho: 0, low: 0, high, logMass: mass(0, high) });
  }
  for (let i = 0; i < count; i++) {
    const low = logistic(lowLogit + i * step);
    const high = logistic(lowLogit + (i + 1) * step);
    bins.push({ rho: logistic(lowLogit + (i + 0.5) * step), low, high, logMass: mass(low, high) });
  }
  if (withTop) {
    const low = logistic(highLogit);
    bins.push({ rho: logistic(highLogit + step / 2), low, high: 1, logMass: mass(low, 1) });
  }
  return bins;
}

/** ln Γ(x) for x > 0: Stirling's series from x = 10 (absolute error below 1e-12), else {@link logGamma}. */
function fastLogGamma(x: number): number {
  if (x < 10) return logGamma(x);
  const r = 1 / x;
  const r2 = r * r;
  return (x - 0.5) * Math.log(x) - x + 0.9189385332046728
    + r * (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 * (1 / 1680 - r2 / 1188))));
}

/**
 * Σ_g [ln Γ(x + c_g) − ln Γ(x)] over the counts c_g, as a function of x > 0: by a sum of logs over
 * j < max c (weighted by how many counts exceed j) when that is short, else by log-gamma per
 * distinct count.
 */
function risingLogSum(counts: readonly number[]): (x: number) => number {
  const positive = counts.filter((c) => c > 0);
  if (positive.length === 0) return () => 0;
  const distinct = new Map<number, number>();
  for (const c of positive) distinct.set(c, (distinct.get(c) ?? 0) + 1);
  const max = Math.max(...positive);
  if (max <= 4 * (distinct.size + 1)) {
    const exceeding = new Float64Array(max);
    for (const c of positive) for (let j = 0; j < c; j++) exceeding[j] += 1;
    return (x) => {
      let sum = 0;
      for (let j = 0; j < max; j++) sum += exceeding[j] * Math.log(x + j);
      return sum;
    };
  }
  const values = Float64Array.from(distinct.keys());
  const times = Float64Array.from(distinct.values());
  const total = positive.length;
  return (x) => {
    let sum = -total * fastLogGamma(x);
    for (let i = 0; i < values.length; i++) sum += times[i] * fastLogGamma(x + values[i]);
    return sum;
  };
}

/**
 * ln p(data | μ, ρ) up to a constant, for the cells' counts, as `(ρ) => (μ) => ...` so that what
 * depends on ρ alone is computed once per ρ (ρ = 0 is the binomial limit). The constant depends on
 * the counts only, so likelihoods of one run at different (μ, ρ) compare; the fleet's ICC fit
 * (icc-prior-fit.ts) uses it so that both compute the same model.
 */
export function logLikelihood(cells: ReadonlyArray<{ k: number; n: number }>): (rho: number) => (mu: number) => number {
  const successes = risingLogSum(cells.map((c) => c.k));
  const failures = risingLogSum(cells.map((c) => c.n - c.k));
  const totals = risingLogSum(cells.map((c) => c.n));
  const k = cells.reduce((sum, c) => sum + c.k, 0);
  const n = cells.reduce((sum, c) => sum + c.n, 0);
  return (rho) => {
    if (rho === 0) return (mu) => (k > 0 ? k * Math.log(mu) : 0) + (n > k ? (n - k) * Math.log1p(-mu) : 0);
    const s = 1 / rho - 1;
    const total = totals(s);
    return (mu) => successes(mu * s) + failures((1 - mu) * s) - total;
  };
}

/** μ at grid coordinate u (μ = sin²(πu/2), under which the Jeffreys prior of μ is uniform in u). */
export const rateOf = (u: number) => Math.sin((Math.PI * u) / 2) ** 2;

/** ln of the prior density of u, where μ = sin²(πu/2); constant for Beta(1/2, 1/2). */
function logRatePrior(prior: BetaParameters): (u: number) => number {
  const constant = -logBeta(prior.a, prior.b) + Math.log(Math.PI / 2);
  return (u) => {
    const s = Math.sin((Math.PI * u) / 2);
    const c = Math.cos((Math.PI * u) / 2);
    // ln[μ^(a−1) (1−μ)^(b−1) · dμ/du], dμ/du = π s c; written in s and c so nothing cancels near 0 or 1.
    return constant + (2 * prior.a - 1) * Math.log(s) + (2 * prior.b - 1) * Math.log(c);
  };
}

/** Posterior weights on the grid: `weights[i * bins.length + r]`, normalized to sum 1. */
function posteriorGrid(
  us: Float64Array, bins: readonly IccBin[], logLik: (rho: number) => (mu: number) => number, logPrior: (u: number) => number,
): Float64Array {
  const logs = new Float64Array(us.length * bins.length);
  const mus = us.map(rateOf);
  const priors = us.map(logPrior);
  let max = -Infinity;
  for (let r = 0; r < bins.length; r++) {
    const atRho = logLik(bins[r].rho);
    const logMass = bins[r].logMass;
    for (let i = 0; i < us.length; i++) {
      const value = priors[i] + logMass + atRho(mus[i]);
      logs[i * bins.length + r] = value;
      if (value > max) max = value;
    }
  }
  let total = 0;
  for (let j = 0; j < logs.length; j++) {
    logs[j] = Math.exp(logs[j] - max);
    total += logs[j];
  }
  for (let j = 0; j < logs.length; j++) logs[j] /= total;
  return logs;
}

/** Midpoints of `count` equal steps over [low, high]. */
function midpoints(low: number, high: number, count: number): Float64Array {
  const step = (high - low) / count;
  return Float64Array.from({ length: count }, (_, i) => low + (i + 0.5) * step);
}

/** The q-quantile of a piecewise-uniform distribution with `mass[i]` on [edges[i], edges[i+1]]. */
function quantile(mass: ArrayLike<number>, edges: ArrayLike<number>, q: number): number {
  let cumulative = 0;
  for (let i = 0; i < mass.length; i++) {
    if (cumulative + mass[i] >= q && mass[i] > 0) {
      return edges[i] + ((q - cumulative) / mass[i]) * (edges[i + 1] - edges[i]);
    }
    cumulative += mass[i];
  }
  return edges[mass.length];
}

/**
 * The q-quantile of ρ from the posterior mass of each bin; within a bin the posterior is taken to
 * follow the prior (the likelihood varies little across one bin), so the quantile inverts the
 * prior's CDF there.
 */
function iccQuantile(mass: ArrayLike<number>, bins: readonly IccBin[], prior: BetaParameters, q: number): number {
  let cumulative = 0;
  for (let r = 0; r < bins.length; r++) {
    if (cumulative + mass[r] >= q && mass[r] > 0) {
      const share = (q - cumulative) / mass[r];
      const low = betaCdf(bins[r].low, prior);
      const high = betaCdf(bins[r].high, prior);
      if (!(high > low)) return bins[r].low + share * (bins[r].high - bins[r].low);
      return Math.min(bins[r].high, Math.max(bins[r].low, betaQuantile(low + share * (high - low), prior.a, prior.b)));
    }
    cumulative += mass[r];
  }
  return bins[bins.length - 1].high;
}

/**
 * The coarse pass: the posterior on 48 μ points × 28 ρ bins, to find the μ range (in u) that holds
 * all but a negligible share of it, widened by a step each side, and the ρ bins that hold more than a
 * negligible share, each split in `GRID.iccSplit` for the fine pass.
 */
function locatePosterior(
  logLik: (rho: number) => (mu: number) => number, logPrior: (u: number) => number, iccPrior: BetaParameters,
): { uLow: number; uHigh: number; fineBins: IccBin[] } {
  const coarseBins = iccBins(iccPrior, GRID.iccLogitLow, GRID.iccLogitHigh, GRID.coarseIccBins, true, true);
  const coarseUs = midpoints(0, 1, GRID.coarseRate);
  const coarse = posteriorGrid(coarseUs, coarseBins, logLik, logPrior);
  const rateMass = new Float64Array(coarseUs.length);
  const binMass = new Float64Array(coarseBins.length);
  for (let i = 0; i < coarseUs.length; i++) {
    for (let r = 0; r < coarseBins.length; r++) {
      rateMass[i] += coarse[i * coarseBins.length + r];
      binMass[r] += coarse[i * coarseBins.length + r];
    }
  }
  let first = rateMass.findIndex((m) => m > GRID.negligible);
  let last = rateMass.length - 1 - [...rateMass].reverse().findIndex((m) => m > GRID.negligible);
  first = Math.max(0, first - 1);
  last = Math.min(rateMass.length - 1, last + 1);
  const uLow = first / GRID.coarseRate;
  const uHigh = (last + 1) / GRID.coarseRate;

  const step = (GRID.iccLogitHigh - GRID.iccLogitLow) / GRID.coarseIccBins;
  const fineBins: IccBin[] = [];
  coarseBins.forEach((bin, r) => {
    if (binMass[r] <= GRID.negligible) return;
    if (r === 0 || r === coarseBins.length - 1) fineBins.push(bin);
    else {
      const low = GRID.iccLogitLow + (r - 1) * step;
      fineBins.push(...iccBins(iccPrior, low, low + step, GRID.iccSplit, false, false));
    }
  });
  return { uLow, uHigh, fineBins };
}

/** The fine-pass posterior of (u, ρ) for the cells' counts under `prior`. */
function finePosterior(used: ReadonlyArray<{ k: number; n: number }>, prior: HeadlinePrior) {
  const logLik = logLikelihood(used);
  const logPrior = logRatePrior(prior.rate.parameters);
  const { uLow, uHigh, fineBins } = locatePosterior(logLik, logPrior, prior.icc.parameters);
  const fineUs = midpoints(uLow, uHigh, GRID.fineRate);
  const fine = posteriorGrid(fineUs, fineBins, logLik, logPrior);
  return { uLow, uHigh, fineUs, fineBins, fine };
}

/**
 * The marginal posterior of μ as masses on equal steps in u (μ = sin²(πu/2)) over [uLow, uHigh]:
 * `mass[i]` lies on u in [uLow + i·step, uLow + (i+1)·step], spread evenly in u within the step (the
 * same reading the headline's quantiles make). Used by the two-sample difference
 * (beta-binomial-difference.ts).
 */
export interface RatePosterior {
  uLow: number;
  uHigh: number;
  mass: Float64Array;
  /** Posterior mean of μ. */
  mean: number;
}

/** {@link RatePosterior} of the model-level rate from per-cell counts (cells with n = 0 ignored). */
export function betaBinomialRatePosterior(clusters: ReadonlyArray<{ k: number; n: number }>, prior: HeadlinePrior = DEFAULT_HEADLINE_PRIOR): RatePosterior {
  checkBeta("rate", prior.rate.parameters);
  checkBeta("icc", prior.icc.parameters);
  clusters.forEach(({ k, n }, i) => {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`cluster ${i}: n must be a non-negative integer; got ${n}`);
    if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError(`cluster ${i}: k must be an integer in 0..${n}; got ${k}`);
  });
  const { uLow, uHigh, fineUs, fineBins, fine } = finePosterior(clusters.filter((c) => c.n > 0), prior);
  const mass = new Float64Array(fineUs.length);
  let mean = 0;
  for (let i = 0; i < fineUs.length; i++) {
    for (let r = 0; r < fineBins.length; r++) mass[i] += fine[i * fineBins.length + r];
    mean += mass[i] * rateOf(fineUs[i]);
  }
  return { uLow, uHigh, mass, mean };
}

/** Options of {@link betaBinomialRate}. */
export interface BetaBinomialRateOptions {
  /** Confidence of the interval; 0.95 unless given. */
  ci?: number;
  /** The prior; {@link DEFAULT_HEADLINE_PRIOR} unless given. */
  prior?: HeadlinePrior;
}

function checkBeta(name: string, p: BetaParameters): void {
  if (!(Number.isFinite(p.a) && p.a > 0 && Number.isFinite(p.b) && p.b > 0)) {
    throw new RangeError(`${name} prior needs Beta parameters a, b > 0; got a=${p.a}, b=${p.b}`);
  }
}

/**
 * Posterior of the model-level rate μ from per-cell counts (`k` successes of `n` episodes per
 * cell; cells with n = 0 are ignored); see the module comment. With no episodes it is [0, 1].
 */
export function betaBinomialRate(clusters: ReadonlyArray<{ k: number; n: number }>, options: BetaBinomialRateOptions = {}): BetaBinomialRate {
  return betaBinomialRateAndPosterior(clusters, options).rate;
}

/** {@link betaBinomialRate} and {@link betaBinomialRatePosterior} from one computation of the grid. */
export function betaBinomialRateAndPosterior(
  clusters: ReadonlyArray<{ k: number; n: number }>, options: BetaBinomialRateOptions = {},
): { rate: BetaBinomialRate; posterior: RatePosterior } {
  const ci = options.ci ?? 0.95;
  const prior = options.prior ?? DEFAULT_HEADLINE_PRIOR;
  zForConfidence(ci); // validates ci
  checkBeta("rate", prior.rate.parameters);
  checkBeta("icc", prior.icc.parameters);
  clusters.forEach(({ k, n }, i) => {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`cluster ${i}: n must be a non-negative integer; got ${n}`);
    if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError(`cluster ${i}: k must be an integer in 0..${n}; got ${k}`);
  });
  const used = clusters.filter((c) => c.n > 0);
  const iccPrior = prior.icc.parameters;
  const { uLow, uHigh, fineUs, fineBins, fine } = finePosterior(used, prior);

  const marginal = new Float64Array(fineUs.length);
  const iccMass = new Float64Array(fineBins.length);
  let mean = 0;
  let square = 0;
  for (let i = 0; i < fineUs.length; i++) {
    const mu = rateOf(fineUs[i]);
    for (let r = 0; r < fineBins.length; r++) {
      const w = fine[i * fineBins.length + r];
      marginal[i] += w;
      iccMass[r] += w;
    }
    mean += marginal[i] * mu;
    square += marginal[i] * mu * mu;
  }
  const variance = Math.max(0, square - mean * mean);
  const uEdges = Float64Array.from({ length: fineUs.length + 1 }, (_, i) => uLow + (i * (uHigh - uLow)) / fineUs.length);
  const tail = (1 - ci) / 2;
  const interval: [number, number] = [rateOf(quantile(marginal, uEdges, tail)), rateOf(quantile(marginal, uEdges, 1 - tail))];

  let iccMean = 0;
  let iccSquare = 0;
  fineBins.forEach((bin, r) => {
    const centre = (bin.low + bin.high) / 2;
    iccMean += iccMass[r] * centre;
    iccSquare += iccMass[r] * centre * centre;
  });
  const { a, b } = iccPrior;
  const varianceRatio = Math.max(0, iccSquare - iccMean * iccMean) / ((a * b) / ((a + b) ** 2 * (a + b + 1)));
  // Boundary rule of Brown, Cai & DasGupta (2001) for the Jeffreys interval: no successes at all
  // gives a lower bound of exactly 0, no failures an upper bound of exactly 1.
  const k = used.reduce((sum, c) => sum + c.k, 0);
  const n = used.reduce((sum, c) => sum + c.n, 0);
  if (k === 0) interval[0] = 0;
  if (k === n) interval[1] = 1;
  const rate: BetaBinomialRate = {
    ci: interval,
    interval_method: BETA_BINOMIAL_INTERVAL_METHOD,
    clusters: used.length,
    mean,
    variance,
    effective_n: n === 0 ? 0 : (mean * (1 - mean)) / variance,
    icc: { median: iccQuantile(iccMass, fineBins, iccPrior, 0.5), upper95: iccQuantile(iccMass, fineBins, iccPrior, 0.95) },
    icc_variance_ratio: varianceRatio,
    rests_on_prior: used.length <= 1 || varianceRatio > PRIOR_DOMINATED_VARIANCE_RATIO,
    prior,
  };
  return { rate, posterior: { uLow, uHigh, mass: marginal, mean } };
}
