/**
 * The ICC prior the fleet teaches: a Beta(a, b) for the intra-cell correlation ρ of one robot model
 * and environment class, fitted from the per-cell counts of the fleet's completed multi-cell runs
 * (docs/statistics.md, "The prior learns from the fleet"). Pure: counts in, a prior out.
 *
 * Method: empirical Bayes by marginal likelihood (Turner, Thompson & Spiegelhalter 2005 build ICC
 * priors from the ICCs of earlier studies; this is their idea done by maximum marginal likelihood).
 * Each qualifying run j (at least 2 cells with episodes) has its own ρ_j, drawn from the prior being
 * fitted, and its own rate μ_j ~ Beta(1/2, 1/2). Its likelihood of ρ, L_j(ρ) = ∫ p(counts_j | μ, ρ)
 * p(μ) dμ, uses the headline's own beta-binomial model (beta-binomial-rate.ts `logLikelihood`) on
 * a grid: μ on 16 points uniform in u (μ = sin²(πu/2)), refined to 20 points over the peak where it
 * is narrow (`runLogLikelihoods`), ρ in `FIT.iccBins` bins
 * uniform in logit(ρ) over [`FIT.iccLogitLow`, `FIT.iccLogitHigh`] plus the bins below and above,
 * each weighted by its exact mass under the candidate Beta. (a, b) maximises Σ_j ln Σ_bins L_j · mass,
 * over mean m = a/(a+b) and concentration c = a + b (Nelder-Mead in logit m, ln c, from the default).
 *
 * Then, so that a handful of runs cannot swing it and it never claims cells are identical:
 * - shrinkage: with N runs, m and ln c move from the default's towards the fit's by N/(N + `shrinkRuns`);
 * - floor: mean at least `floorMean` and 95th percentile at least `floorUpper95` (the concentration
 *   is lowered until it is), so the prior always leaves room for cells that differ;
 * - minimum: below `minRuns` qualifying runs the default stands.
 */
import { DEFAULT_HEADLINE_PRIOR, logLikelihood, rateOf, type BetaParameters, type HeadlinePrior } from "./beta-binomial-rate.js";
import { betaQuantile, regularizedIncompleteBeta } from "./special-functions.js";

/** The fit's documented constants (docs/statistics.md quotes them; the tests pin them). */
export const ICC_PRIOR_FIT = Object.freeze({
  /** Qualifying runs (completed, at least 2 cells with episodes) before a fitted prior replaces the default. */
  minRuns: 10,
  /** Pseudo-runs the default counts for in the shrinkage. */
  shrinkRuns: 10,
  /** The fitted prior's mean of ρ is at least this. */
  floorMean: 0.02,
  /** The fitted prior's 95th percentile of ρ is at least this. */
  floorUpper95: 0.05,
  /** Cells a run needs to say anything about ρ. */
  minCells: 2,
});

const FIT = Object.freeze({ coarseRate: 16, fineRate: 20, narrowDrop: 12, iccBins: 24, iccLogitLow: -9, iccLogitHigh: 3 });

/** The counts of one run on one robot model and environment class: k successes of n episodes per cell. */
export type RunCells = ReadonlyArray<{ k: number; n: number }>;

/** What {@link fitIccPrior} needs besides the runs. */
export interface IccPriorFitOptions {
  /** When the fit is made (ISO 8601), recorded as `fitted_at`. */
  fittedAt: string;
  /** The prior to fall back on and shrink towards; DEFAULT_HEADLINE_PRIOR unless given. */
  fallback?: HeadlinePrior;
}

const logistic = (x: number) => 1 / (1 + Math.exp(-x));
const logit = (p: number) => Math.log(p / (1 - p));

/** Edges of the ρ bins: 0, then uniform in logit, then 1. */
function iccEdges(): number[] {
  const edges = [0];
  const step = (FIT.iccLogitHigh - FIT.iccLogitLow) / FIT.iccBins;
  for (let i = 0; i <= FIT.iccBins; i++) edges.push(logistic(FIT.iccLogitLow + i * step));
  edges.push(1);
  return edges;
}

/** ln of the midpoint rule for ∫ e^{f(u)} du over [low, high] in `steps` steps (log-sum-exp). */
function logIntegral(f: (u: number) => number, low: number, high: number, steps: number): { value: number; logs: Float64Array } {
  const h = (high - low) / steps;
  const logs = Float64Array.from({ length: steps }, (_, i) => f(low + (i + 0.5) * h));
  let max = -Infinity;
  for (const v of logs) if (v > max) max = v;
  let sum = 0;
  for (const v of logs) sum += Math.exp(v - max);
  return { value: max + Math.log(sum * h), logs };
}

/**
 * ln L_j(ρ) at each bin's representative ρ (the binomial limit for the lowest), rescaled so the max
 * is 0. The integral over μ (Jeffreys: uniform in u) is a midpoint rule on `FIT.coarseRate` points;
 * where the integrand is a narrow peak (its values `FIT.narrowDrop` below the top two coarse steps
 * either side of it), it is redone on `FIT.fineRate` points over those four steps.
 */
function runLogLikelihoods(cells: RunCells, edges: readonly number[]): Float64Array {
  const logLik = logLikelihood(cells);
  const out = new Float64Array(edges.length - 1);
  for (let r = 0; r < out.length; r++) {
    const rho = r === 0 ? 0 : r === out.length - 1 ? (edges[r] + 1) / 2 : logistic(logit(edges[r]) / 2 + logit(edges[r + 1]) / 2);
    const atRho = logLik(rho);
    const f = (u: number) => atRho(rateOf(u));
    const coarse = logIntegral(f, 0, 1, FIT.coarseRate);
    let best = 0;
    for (let i = 1; i < coarse.logs.length; i++) if (coarse.logs[i] > coarse.logs[best]) best = i;
    const low = Math.max(0, best - 2);
    const high = Math.min(FIT.coarseRate - 1, best + 2);
    const top = coarse.logs[best];
    const narrow = (low === 0 || coarse.logs[low] < top - FIT.narrowDrop) && (high === FIT.coarseRate - 1 || coarse.logs[high] < top - FIT.narrowDrop);
    out[r] = narrow ? logIntegral(f, low / FIT.coarseRate, (high + 1) / FIT.coarseRate, FIT.fineRate).value : coarse.value;
  }
  const top = Math.max(...out);
  for (let r = 0; r < out.length; r++) out[r] -= top;
  return out;
}

function binMasses(p: BetaParameters, edges: readonly number[]): Float64Array {
  const cdf = edges.map((x) => (x <= 0 ? 0 : x >= 1 ? 1 : regularizedIncompleteBeta(x, p.a, p.b)));
  return Float64Array.from({ length: edges.length - 1 }, (_, r) => Math.max(0, cdf[r + 1] - cdf[r]));
}

/** Σ_j ln Σ_r L_j(ρ_r) mass_r(a, b), each L_j given relative to its maximum. */
function marginalLogLikelihood(runs: readonly Float64Array[], p: BetaParameters, edges: readonly number[]): number {
  const mass = binMasses(p, edges);
  let total = 0;
  for (const lik of runs) {
    let sum = 0;
    for (let r = 0; r < mass.length; r++) sum += mass[r] * lik[r];
    total += Math.log(Math.max(sum, 1e-300));
  }
  return total;
}

const fromMeanConcentration = (x: number, y: number): BetaParameters => {
  const m = logistic(x);
  const c = Math.exp(y);
  return { a: m * c, b: (1 - m) * c };
};

/**
 * Minimises f over the plane by Nelder-Mead from `start` with steps `scale`; deterministic. A generator that
 * yields after each evaluation of f, so a caller may give the event loop a turn between them ({@link drain},
 * {@link drainInSlices}).
 */
function* nelderMead(f: (x: number, y: number) => number, start: [number, number], scale: number, iterations: number): Generator<void, [number, number], void> {
  const evaluations: Array<{ p: [number, number]; v: number }> = [];
  function* at(p: [number, number]): Generator<void, { p: [number, number]; v: number }, void> {
    const point = { p, v: f(p[0], p[1]) };
    yield;
    return point;
  }
  for (const p of [start, [start[0] + scale, start[1]], [start[0], start[1] + scale]] as Array<[number, number]>) evaluations.push(yield* at(p));
  let simplex = evaluations;
  for (let i = 0; i < iterations; i++) {
    simplex.sort((u, w) => u.v - w.v);
    const [best, mid, worst] = simplex;
    if (Math.abs(worst.v - best.v) < 1e-9 && Math.hypot(worst.p[0] - best.p[0], worst.p[1] - best.p[1]) < 1e-6) break;
    const centre: [number, number] = [(best.p[0] + mid.p[0]) / 2, (best.p[1] + mid.p[1]) / 2];
    const towards = (t: number): [number, number] => [centre[0] + t * (worst.p[0] - centre[0]), centre[1] + t * (worst.p[1] - centre[1])];
    const reflected = yield* at(towards(-1));
    if (reflected.v < best.v) {
      const expanded = yield* at(towards(-2));
      simplex = [best, mid, expanded.v < reflected.v ? expanded : reflected];
    } else if (reflected.v < mid.v) {
      simplex = [best, mid, reflected];
    } else {
      const contracted = yield* at(towards(reflected.v < worst.v ? -0.5 : 0.5));
      if (contracted.v < Math.min(worst.v, reflected.v)) simplex = [best, mid, contracted];
      else {
        const halfway = (q: { p: [number, number] }): [number, number] => [(best.p[0] + q.p[0]) / 2, (best.p[1] + q.p[1]) / 2];
        const shrunkMid = yield* at(halfway(mid));
        const shrunkWorst = yield* at(halfway(worst));
        simplex = [best, shrunkMid, shrunkWorst];
      }
    }
  }
  simplex.sort((u, w) => u.v - w.v);
  return simplex[0].p;
}

/** Runs a stepwise computation to its end at once. */
function drain<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Runs a stepwise computation, giving the event loop a turn whenever a slice has used `sliceMs`. */
async function drainInSlices<T>(steps: Generator<void, T, void>, sliceMs: number): Promise<T> {
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}

/** Lowers the concentration (mean kept) until the 95th percentile is at least `floorUpper95`. */
function withFloor(p: BetaParameters): BetaParameters {
  const m = Math.max(ICC_PRIOR_FIT.floorMean, p.a / (p.a + p.b));
  let c = p.a + p.b;
  const upper = (conc: number) => betaQuantile(0.95, m * conc, (1 - m) * conc);
  if (upper(c) < ICC_PRIOR_FIT.floorUpper95) {
    // The 95th percentile grows as the concentration falls (mean fixed, well below 0.05): bisect ln c.
    let low = Math.log(Math.min(c, 1));
    let high = Math.log(c);
    while (upper(Math.exp(low)) < ICC_PRIOR_FIT.floorUpper95 && low > -20) low -= 2;
    for (let i = 0; i < 60; i++) {
      const mid = (low + high) / 2;
      if (upper(Math.exp(mid)) >= ICC_PRIOR_FIT.floorUpper95) low = mid;
      else high = mid;
    }
    c = Math.exp(low);
  }
  return { a: m * c, b: (1 - m) * c };
}

/** Runs that say something about ρ: their cells with episodes, when there are at least two. */
export function qualifyingRuns(runs: readonly RunCells[]): RunCells[] {
  return runs.map((cells) => cells.filter((c) => c.n > 0)).filter((cells) => cells.length >= ICC_PRIOR_FIT.minCells);
}

/**
 * The ICC prior fitted from `runs` (each a run's per-cell counts on one robot model and environment
 * class), or the fallback when fewer than `ICC_PRIOR_FIT.minRuns` of them qualify. The rate prior
 * stays the fallback's. See the module comment for the method, shrinkage and floor.
 */
export function fitIccPrior(runs: readonly RunCells[], options: IccPriorFitOptions): HeadlinePrior {
  return drain(fitSteps(runs, options));
}

/**
 * {@link fitIccPrior}, the same numbers, computed in slices of at most about `sliceMs` of CPU with the event loop
 * given a turn between them: a refit over hundreds of runs takes hundreds of ms (each run's likelihood about 1 ms,
 * the optimiser tens of ms), and must not hold the loop that answers the API and the fleet.
 */
export function fitIccPriorInSlices(runs: readonly RunCells[], options: IccPriorFitOptions, sliceMs = 4): Promise<HeadlinePrior> {
  return drainInSlices(fitSteps(runs, options), sliceMs);
}

/** The fit as steps: one per run's likelihood, one per evaluation of the optimiser's objective. */
function* fitSteps(runs: readonly RunCells[], options: IccPriorFitOptions): Generator<void, HeadlinePrior, void> {
  runs.forEach((cells, j) => cells.forEach(({ k, n }, i) => {
    if (!Number.isInteger(n) || n < 0 || !Number.isInteger(k) || k < 0 || k > n) throw new RangeError(`run ${j}, cell ${i}: need integers 0 <= k <= n; got k=${k}, n=${n}`);
  }));
  const used = qualifyingRuns(runs);
  if (used.length < ICC_PRIOR_FIT.minRuns) return options.fallback ?? DEFAULT_HEADLINE_PRIOR;
  const edges = iccEdges();
  // Each run's likelihood relative to its maximum, in linear scale once (the optimiser reads it hundreds of times).
  const likelihoods: Float64Array[] = [];
  for (const cells of used) {
    likelihoods.push(runLogLikelihoods(cells, edges).map(Math.exp));
    yield;
  }
  return yield* fitFromLikelihoods(likelihoods, edges, options);
}

/** The optimisation, shrinkage and floor over the runs' likelihoods (each relative to its maximum, linear scale). */
function* fitFromLikelihoods(likelihoods: readonly Float64Array[], edges: readonly number[], options: IccPriorFitOptions): Generator<void, HeadlinePrior, void> {
  const fallback = options.fallback ?? DEFAULT_HEADLINE_PRIOR;
  const base = fallback.icc.parameters;
  const start: [number, number] = [logit(base.a / (base.a + base.b)), Math.log(base.a + base.b)];
  // ln c kept within [ln 0.5, ln 2000]: beyond it the likelihood is flat and the optimiser wanders.
  const objective = (x: number, y: number) => -marginalLogLikelihood(likelihoods, fromMeanConcentration(x, Math.min(Math.log(2000), Math.max(Math.log(0.5), y))), edges);
  const [x, y] = yield* nelderMead(objective, start, 0.5, 200);
  const weight = likelihoods.length / (likelihoods.length + ICC_PRIOR_FIT.shrinkRuns);
  const clampedY = Math.min(Math.log(2000), Math.max(Math.log(0.5), y));
  // The mean shrinks on its own scale (a fit at the boundary, mean → 0, moves it only by the weight).
  const mean = weight * logistic(x) + (1 - weight) * logistic(start[0]);
  const shrunk = fromMeanConcentration(logit(mean), start[1] + weight * (clampedY - start[1]));
  const parameters = withFloor(shrunk);
  return {
    rate: fallback.rate,
    icc: { family: "beta", parameters: { a: round(parameters.a), b: round(parameters.b) } },
    source: "fleet",
    fitted_on_runs: likelihoods.length,
    fitted_at: options.fittedAt,
  };
}

/** Six significant digits: what a result records, and enough to recompute it. */
function round(x: number): number {
  return Number(x.toPrecision(6));
}
