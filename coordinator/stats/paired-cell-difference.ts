/**
 * The model-level difference of a paired compare blocked by cell: both episodes of a pair ran on the
 * same cell (the scheduler keeps them there), so each cell gives a within-cell paired difference, and
 * the model-level claim is about the mean of those differences over the population of cells
 * (docs/statistics.md, "Paired compare: the difference within cells").
 *
 * Estimand. δ = E_g[θ_A,g − θ_B,g] = μ_A − μ_B: the difference a new cell of the robot model shows on
 * average, where θ_·,g is a policy's success rate on cell g.
 *
 * Model (a normal random-effects model of the per-cell differences, as in a meta-analysis of few
 * studies: Friede et al. 2017, Röver 2020). Cell g ran n_g complete pairs, b_g won by A alone and c_g
 * by B alone; its paired difference d_g = (b_g − c_g)/n_g has sampling variance v_g = s²/n_g, with s²
 * the within-cell variance of one pair's difference pooled over the cells (one pseudo-discordant pair
 * added so that it is never 0). d_g ~ Normal(δ_g, v_g), δ_g ~ Normal(δ, τ²): τ is how much the
 * policies' difference varies from cell to cell.
 *
 * Prior. δ flat on [−1, 1]. τ² = ρ_A σ_A² + ρ_B σ_B², with ρ_A, ρ_B each policy's ICC, independent, each under the
 * run's headline ICC prior (Beta(1, 9) by default, or the fleet-fitted one the run recorded), and
 * σ² = p̂(1 − p̂) from each policy's pooled rate (half a success and half a failure added): the
 * between-cell variance of θ_A,g − θ_B,g when each policy's cell rates have its ICC and the cell
 * effects of the two policies are independent, the largest it can be for those ICCs (the same
 * model as the unpaired rule's, each arm with its own ρ). Cell effects shared by the two policies (a cell that is hard for
 * both) cancel in the within-cell difference, which is what blocking by cell buys.
 *
 * Computation, deterministic. ρ_A and ρ_B are each gridded by {@link PAIRED_CELL_GRID}.iccBins bins of
 * equal prior mass, each at its median (24 × 24 points of τ²). Given τ, δ's posterior is Normal(δ̂_τ, 1/W_τ) (W_τ = Σ 1/(v_g + τ²), δ̂_τ the
 * weighted mean) and τ's posterior weight is p(τ) W_τ^(−1/2) Π (v_g + τ²)^(−1/2) exp(−½ Σ (d_g − δ̂_τ)²/(v_g + τ²));
 * δ's posterior is the mixture over the grid, each component truncated to [−1, 1] (its mass there
 * multiplies its weight). The interval's bounds solve the mixture's CDF by bisection; the grid's sizes are {@link PAIRED_CELL_GRID}. About a millisecond for a
 * handful of cells (the cost grows with the cells × 576 grid points).
 */

import { betaQuantile } from "./special-functions.js";
import { DEFAULT_HEADLINE_PRIOR, type HeadlinePrior } from "./beta-binomial-rate.js";
import { erfc, zForConfidence } from "./wilson.js";

/** Name results carry for this interval. */
export const PAIRED_CELL_DIFFERENCE_METHOD = "paired-cell-random-effects-posterior";

/** Grid sizes, exported so the docs and tests can state them. */
export const PAIRED_CELL_GRID = Object.freeze({ iccBins: 24, bisectionSteps: 26 });

/**
 * The interval for a claim at level `ci` is the posterior's central 1 − (1 − ci)·0.6 (97% for 95%):
 * the level calibrated by simulation so that the false-difference rate stays within 1 − ci at ICC up to
 * 0.1 on 2–8 cells (scripts/bench/stats-paired-cells.ts). At 95% the plain posterior interval claims a
 * difference 5–6.5% of the time at ICC 0.1 on 3–8 cells: with few cells the data say little about τ and
 * the prior, whose median ICC is 0.067, pulls it below an ICC of 0.1.
 */
export const CALIBRATED_TAIL_SHARE = 0.6;

/** One cell's complete pairs (both episodes on this cell). */
export interface CellPairCounts {
  /** Complete pairs on the cell. */
  n: number;
  /** Pairs only A succeeded in. */
  onlyA: number;
  /** Pairs only B succeeded in. */
  onlyB: number;
  /** Pairs both succeeded in (only for the prior's scale S; 0 when unknown). */
  both: number;
}

export interface PairedCellDifference {
  /** Posterior mean of δ. */
  diff: number;
  /** Equal-tailed posterior interval of δ at the calibrated level (see {@link CALIBRATED_TAIL_SHARE}). */
  ci: [number, number];
  /** P(δ > 0 | data). */
  probability_a_greater: number;
  method: typeof PAIRED_CELL_DIFFERENCE_METHOD;
  /** Cells with at least one complete pair. */
  clusters: number;
  /** Posterior median of τ, the cell-to-cell standard deviation of the difference. */
  tau_median: number;
  prior: HeadlinePrior;
}

export interface PairedCellDifferenceOptions {
  ci?: number;
  /** The headline prior whose ICC prior scales τ's; DEFAULT_HEADLINE_PRIOR unless given. */
  prior?: HeadlinePrior;
}

const normalCdf = (x: number) => 0.5 * erfc(-x / Math.SQRT2);
const normalDensity = (x: number) => Math.exp(-0.5 * x * x) / Math.sqrt(2 * Math.PI);

/** See the module comment. Cells with n = 0 are ignored; with no pair at all the interval is [−1, 1]. */
export function pairedCellDifference(cells: readonly CellPairCounts[], options: PairedCellDifferenceOptions = {}): PairedCellDifference {
  const ci = options.ci ?? 0.95;
  zForConfidence(ci); // validates ci
  const prior = options.prior ?? DEFAULT_HEADLINE_PRIOR;
  cells.forEach((c, i) => {
    for (const [name, value] of [["n", c.n], ["onlyA", c.onlyA], ["onlyB", c.onlyB], ["both", c.both]] as const) {
      if (!Number.isInteger(value) || value < 0) throw new RangeError(`cell ${i}: ${name} must be a non-negative integer; got ${value}`);
    }
    if (c.onlyA + c.onlyB + c.both > c.n) throw new RangeError(`cell ${i}: onlyA + onlyB + both must be at most n=${c.n}; got ${c.onlyA + c.onlyB + c.both}`);
  });
  const used = cells.filter((c) => c.n > 0);
  const none: PairedCellDifference = {
    diff: 0, ci: [-1, 1], probability_a_greater: 0.5, method: PAIRED_CELL_DIFFERENCE_METHOD, clusters: 0, tau_median: NaN, prior,
  };
  if (used.length === 0) return none;

  const total = used.reduce((s, c) => ({ n: s.n + c.n, a: s.a + c.onlyA + c.both, b: s.b + c.onlyB + c.both }), { n: 0, a: 0, b: 0 });
  const pA = (total.a + 0.5) / (total.n + 1);
  const pB = (total.b + 0.5) / (total.n + 1);
  const varA = pA * (1 - pA);
  const varB = pB * (1 - pB);

  const d = used.map((c) => (c.onlyA - c.onlyB) / c.n);
  // Σ over pairs of (x − d_g)², x in {−1, 0, 1}: (b + c) − n d² per cell; plus one pseudo-discordant pair.
  const within = used.reduce((s, c, g) => s + c.onlyA + c.onlyB - c.n * d[g] ** 2, 0);
  const s2 = (within + 1) / (total.n - used.length + 1);
  const v = used.map((c) => s2 / c.n);

  // τ² = ρ_A σ_A² + ρ_B σ_B² on a grid of (ρ_A, ρ_B), each in bins of equal prior mass at their medians.
  const { a, b } = prior.icc.parameters;
  const side = PAIRED_CELL_GRID.iccBins;
  const rhos = Array.from({ length: side }, (_, j) => betaQuantile((j + 0.5) / side, a, b));
  const bins = side * side;
  const centres = new Float64Array(bins);
  const precisions = new Float64Array(bins);
  const logWeights = new Float64Array(bins);
  const taus = new Float64Array(bins);
  let max = -Infinity;
  for (let j = 0; j < bins; j++) {
    const tau2 = rhos[Math.floor(j / side)] * varA + rhos[j % side] * varB;
    taus[j] = Math.sqrt(tau2);
    let w = 0;
    let wd = 0;
    let logDet = 0;
    for (let g = 0; g < d.length; g++) {
      const wg = 1 / (v[g] + tau2);
      w += wg;
      wd += wg * d[g];
      logDet += Math.log(v[g] + tau2);
    }
    const centre = wd / w;
    let q = 0;
    for (let g = 0; g < d.length; g++) q += (d[g] - centre) ** 2 / (v[g] + tau2);
    centres[j] = centre;
    precisions[j] = Math.sqrt(w);
    // δ's prior is flat on [−1, 1]: the normal's mass there multiplies τ's weight.
    const inside = normalCdf((1 - centre) * precisions[j]) - normalCdf((-1 - centre) * precisions[j]);
    logWeights[j] = -0.5 * (logDet + Math.log(w) + q) + Math.log(Math.max(inside, 1e-300));
    if (logWeights[j] > max) max = logWeights[j];
  }
  const weights = new Float64Array(bins);
  let sum = 0;
  for (let j = 0; j < bins; j++) sum += weights[j] = Math.exp(logWeights[j] - max);
  for (let j = 0; j < bins; j++) weights[j] /= sum;

  // The mixture of normals truncated to [−1, 1]: component j's CDF is (Φ(x) − Φ(−1)) / (Φ(1) − Φ(−1)) in its own scale.
  const low = new Float64Array(bins);
  const mass = new Float64Array(bins);
  let mean = 0;
  for (let j = 0; j < bins; j++) {
    const zLow = (-1 - centres[j]) * precisions[j];
    const zHigh = (1 - centres[j]) * precisions[j];
    low[j] = normalCdf(zLow);
    mass[j] = Math.max(normalCdf(zHigh) - low[j], 1e-300);
    mean += weights[j] * (centres[j] + (normalDensity(zLow) - normalDensity(zHigh)) / (mass[j] * precisions[j]));
  }
  // Components with a negligible weight cannot move a quantile: the CDF sums the others.
  const kept = Array.from({ length: bins }, (_, j) => j).filter((j) => weights[j] > 1e-12);
  const cdf = (x: number) => {
    let p = 0;
    for (const j of kept) p += (weights[j] * Math.min(1, Math.max(0, normalCdf((x - centres[j]) * precisions[j]) - low[j]))) / mass[j];
    return p;
  };
  const quantile = (q: number) => {
    let lo = -1;
    let hi = 1;
    for (let i = 0; i < PAIRED_CELL_GRID.bisectionSteps; i++) {
      const mid = (lo + hi) / 2;
      if (cdf(mid) < q) lo = mid;
      else hi = mid;
    }
    return (lo + hi) / 2;
  };
  const order = Array.from(taus.keys()).sort((x, y) => taus[x] - taus[y]);
  let cumulative = 0;
  let tauMedian = taus[order[order.length - 1]];
  for (const j of order) {
    cumulative += weights[j];
    if (cumulative >= 0.5) {
      tauMedian = taus[j];
      break;
    }
  }
  const tail = ((1 - ci) * CALIBRATED_TAIL_SHARE) / 2;
  return {
    diff: Math.min(1, Math.max(-1, mean)),
    ci: [quantile(tail), quantile(1 - tail)],
    probability_a_greater: Math.min(1, Math.max(0, 1 - cdf(0))),
    method: PAIRED_CELL_DIFFERENCE_METHOD,
    clusters: used.length,
    tau_median: tauMedian,
    prior,
  };
}
