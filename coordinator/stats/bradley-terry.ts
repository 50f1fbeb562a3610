/**
 * Bradley-Terry strengths of the policies on a leaderboard from paired compare runs (Bradley &
 * Terry 1952, Biometrika 39:324-345), as RoboArena ranks generalist policies from pairwise A/B
 * evaluations (Atreya et al. 2025, arXiv:2506.18123).
 *
 * Model: P(i beats j) = γ_i / (γ_i + γ_j), log-strength θ_i = ln γ_i; θ_i - θ_j is the log-odds
 * that i beats j. Reported with sum-to-zero over each connected component (0 = the component's
 * mean policy) and on an Elo-like scale, 1000 + 400 θ / ln 10 (400 points = odds 10:1).
 *
 * Outcomes: in a paired episode, success against failure is a win; both succeeding or both failing
 * is a tie. Ties are excluded from the likelihood: the fit is the conditional likelihood of the
 * decisive episodes, which is the strength part of Davidson's (1970) tie model (under it,
 * P(i beats j | not a tie) = γ_i / (γ_i + γ_j)) without its assumption that one parameter governs
 * every pair's tie rate. That assumption fails for robot episodes, where the tie rate follows the
 * absolute success rates (two 95% policies tie 90% of the time, two 50% policies half), so it would
 * bias strengths. Counting a tie as half a win each would instead pull every pair towards 1/2 by
 * its tie rate and make the binomial intervals too wide. Ties are counted and reported.
 *
 * Regularisation: each policy also plays `priorTies` (default 1) virtual tied games, half a win and
 * half a loss each, against a virtual policy of log-strength 0 (virtual draws as a prior, as in
 * Coulom's Bayeselo). Without them a policy that won or lost every decisive episode has no finite
 * maximum-likelihood strength (Zermelo 1929; Ford 1957); with them every policy gets a finite
 * estimate: the posterior mode under a prior with log-density (priorTies / 2)·ln(σ(θ)(1 - σ(θ))),
 * which is weak (standard deviation π ≈ 3.1 on θ at priorTies = 1).
 *
 * Fit: Hunter's (2004, Ann. Statist. 32:384-406) MM algorithm, cyclic: each policy in turn
 * γ_i <- W_i / Σ_j N_ij / (γ_i + γ_j), with the virtual games in W_i and N_i0. The data fix only
 * differences of log-strengths, so after each sweep the common level is set by an exact 1-D
 * maximisation (only the prior depends on it; MM alone crawls along that direction). Both steps
 * increase the strictly concave penalised likelihood, so the fit converges to its unique maximum.
 *
 * Intervals: Wald, from the observed information of the penalised log-likelihood at the mode (the
 * Laplace approximation to the posterior): Var(θ_i - mean θ) from its inverse; 95% intervals
 * θ_i ± 1.96 se. Coverage was checked by seeded simulation (docs/leaderboards.md).
 *
 * Components: policies linked by decisive episodes, directly or through others, form a component;
 * strengths are comparable only within one. A policy with no decisive episode is a component of its
 * own, with strength 0 and no interval.
 */

import type { PairedCounts } from "./paired-difference.js";
import { zForConfidence } from "./wilson.js";

/** Outcomes of the paired episodes of policies a and b (one paired compare run, or several). */
export interface PairwiseComparison {
  a: string;
  b: string;
  /** Paired episodes a succeeded in and b failed. */
  winsA: number;
  /** Paired episodes b succeeded in and a failed. */
  winsB: number;
  /** Paired episodes with the same outcome for both. */
  ties: number;
}

/** Options of {@link fitBradleyTerry}. */
export interface BradleyTerryOptions {
  /** Virtual tied games of each policy against a virtual policy of strength 0. Default 1; > 0. */
  priorTies?: number;
  /** MM stops when no log-strength moves by more than this in a sweep. Default 1e-10. */
  tolerance?: number;
  /** MM sweeps at most. Default 100 000. */
  maxIterations?: number;
}

/** One policy's strength; field names are the wire names. */
export interface PolicyStrength {
  id: string;
  /** Index into {@link BradleyTerryFit.components}. */
  component: number;
  /** θ, natural-log scale, relative to the component's mean (sum-to-zero). */
  log_strength: number;
  /** Standard error of log_strength; null for a policy alone in its component. */
  se: number | null;
  ci95: [number, number] | null;
  /** 1000 + 400 θ / ln 10. */
  elo: number;
  elo_ci95: [number, number] | null;
  /** Decisive paired episodes won and lost, and ties, over all opponents. */
  wins: number;
  losses: number;
  ties: number;
}

/** A Bradley-Terry fit; field names are the wire names. */
export interface BradleyTerryFit {
  /** By component, then log_strength descending, then id. */
  policies: PolicyStrength[];
  /** Policy ids per component (each sorted); largest component first, then by first id. */
  components: string[][];
  model: "bradley-terry";
  ties: "excluded";
  prior_ties: number;
  fit_method: "mm-hunter-2004";
  interval_method: "wald-penalized-observed-information";
  iterations: number;
  converged: boolean;
}

const ELO_PER_LOG_UNIT = 400 / Math.LN10;
const ELO_CENTRE = 1000;

/**
 * A paired compare run's table as a pairwise comparison: only-A successes are A's wins, only-B
 * successes B's, both or neither ties.
 */
export function comparisonFromPairedCounts(a: string, b: string, counts: PairedCounts): PairwiseComparison {
  return { a, b, winsA: counts.onlyA, winsB: counts.onlyB, ties: counts.both + counts.neither };
}

interface Tally {
  ids: string[];
  /** wins[i][j]: decisive wins of i over j (dense; boards have at most a few hundred policies). */
  wins: number[][];
  ties: number[];
}

function tally(comparisons: ReadonlyArray<PairwiseComparison>): Tally {
  comparisons.forEach((c, i) => {
    for (const side of ["a", "b"] as const) {
      if (typeof c[side] !== "string" || c[side] === "") throw new RangeError(`comparison ${i}: ${side} must be a non-empty policy id; got ${JSON.stringify(c[side])}`);
    }
    if (c.a === c.b) throw new RangeError(`comparison ${i}: a policy cannot be compared with itself (${JSON.stringify(c.a)})`);
    for (const field of ["winsA", "winsB", "ties"] as const) {
      if (!Number.isInteger(c[field]) || c[field] < 0) throw new RangeError(`comparison ${i}: ${field} must be a non-negative integer; got ${c[field]}`);
    }
  });
  const ids = [...new Set(comparisons.flatMap((c) => [c.a, c.b]))].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const index = new Map(ids.map((id, i) => [id, i]));
  const wins = ids.map(() => new Array<number>(ids.length).fill(0));
  const ties = new Array<number>(ids.length).fill(0);
  for (const c of comparisons) {
    const a = index.get(c.a)!;
    const b = index.get(c.b)!;
    wins[a][b] += c.winsA;
    wins[b][a] += c.winsB;
    ties[a] += c.ties;
    ties[b] += c.ties;
  }
  return { ids, wins, ties };
}

/** Connected components of the graph whose edges are pairs with a decisive episode. */
function components(t: Tally): number[][] {
  const m = t.ids.length;
  const parent = t.ids.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i])));
  for (let i = 0; i < m; i++) {
    for (let j = i + 1; j < m; j++) {
      if (t.wins[i][j] + t.wins[j][i] > 0) parent[Math.max(find(i), find(j))] = Math.min(find(i), find(j));
    }
  }
  const groups = new Map<number, number[]>();
  for (let i = 0; i < m; i++) {
    const root = find(i);
    if (!groups.has(root)) groups.set(root, []);
    groups.get(root)!.push(i);
  }
  // Members are in id order (indices are); the first member is the smallest id.
  return [...groups.values()].sort((x, y) => y.length - x.length || x[0] - y[0]);
}

/**
 * The common shift s of all log-strengths that maximises the prior's term (the likelihood does not
 * change): Σ_i ln σ(θ_i + s) + ln(1 - σ(θ_i + s)), concave in s with derivative Σ_i (1 - 2σ(θ_i + s)).
 * Newton steps capped at 1 (Newton overshoots on tanh-like slopes far from the root); a shift that
 * does not improve the term is not taken, so the fit's ascent stays monotone.
 */
function bestShift(gamma: readonly number[]): number {
  const term = (shift: number) => gamma.reduce((sum, g) => sum - Math.log1p(g * Math.exp(shift)) - Math.log1p(1 / (g * Math.exp(shift))), 0);
  let shift = 0;
  for (let step = 0; step < 50; step++) {
    let slope = 0;
    let curvature = 0;
    for (const g of gamma) {
      const p = (g * Math.exp(shift)) / (g * Math.exp(shift) + 1);
      slope += 1 - 2 * p;
      curvature += 2 * p * (1 - p);
    }
    if (!(curvature > 0)) break;
    const move = Math.max(-1, Math.min(1, slope / curvature));
    shift += move;
    if (Math.abs(move) < 1e-13) break;
  }
  return term(shift) > term(0) ? shift : 0;
}

/** Cholesky inverse of a symmetric positive definite matrix (small: one component's policies). */
function invertSpd(matrix: number[][]): number[][] {
  const n = matrix.length;
  const lower = matrix.map(() => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = matrix[i][j];
      for (let k = 0; k < j; k++) sum -= lower[i][k] * lower[j][k];
      if (i === j) {
        if (!(sum > 0)) throw new Error("Bradley-Terry information matrix is not positive definite");
        lower[i][i] = Math.sqrt(sum);
      } else {
        lower[i][j] = sum / lower[j][j];
      }
    }
  }
  // Inverse of L, then (L⁻¹)ᵀ L⁻¹.
  const inverse = matrix.map(() => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    inverse[i][i] = 1 / lower[i][i];
    for (let j = i + 1; j < n; j++) {
      let sum = 0;
      for (let k = i; k < j; k++) sum -= lower[j][k] * inverse[k][i];
      inverse[j][i] = sum / lower[j][j];
    }
  }
  const result = matrix.map(() => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = 0;
      for (let k = i; k < n; k++) sum += inverse[k][i] * inverse[k][j];
      result[i][j] = result[j][i] = sum;
    }
  }
  return result;
}

/**
 * Fits Bradley-Terry strengths to pairwise outcomes; see the module comment for the model, ties,
 * regularisation, fit, intervals and components. Several comparisons of one pair add up; the
 * result does not depend on the order of `comparisons` or on which policy of a pair is `a`.
 */
export function fitBradleyTerry(comparisons: ReadonlyArray<PairwiseComparison>, options: BradleyTerryOptions = {}): BradleyTerryFit {
  const { priorTies = 1, tolerance = 1e-10, maxIterations = 100000 } = options;
  if (!(priorTies > 0 && Number.isFinite(priorTies))) throw new RangeError(`priorTies must be a positive number; got ${priorTies}`);
  if (!(tolerance > 0)) throw new RangeError(`tolerance must be positive; got ${tolerance}`);
  if (!Number.isInteger(maxIterations) || maxIterations < 1) throw new RangeError(`maxIterations must be a positive integer; got ${maxIterations}`);
  const t = tally(comparisons);
  const m = t.ids.length;
  const half = priorTies / 2; // virtual wins, and losses, against the strength-0 policy
  const decisive = t.wins.map((row, i) => row.map((w, j) => w + t.wins[j][i]));
  const totalWins = t.wins.map((row) => row.reduce((sum, w) => sum + w, 0));
  const opponents = decisive.map((row) => row.flatMap((d, j) => (d > 0 ? [j] : [])));

  // Cyclic MM (Hunter 2004, §3): the virtual policy is fixed at γ = 1, which also pins the scale.
  const gamma = new Array<number>(m).fill(1);
  let iterations = 0;
  let converged = m === 0;
  while (!converged && iterations < maxIterations) {
    iterations++;
    let largestStep = 0;
    for (let i = 0; i < m; i++) {
      let denominator = priorTies / (gamma[i] + 1);
      for (const j of opponents[i]) denominator += decisive[i][j] / (gamma[i] + gamma[j]);
      const next = (totalWins[i] + half) / denominator;
      largestStep = Math.max(largestStep, Math.abs(Math.log(next / gamma[i])));
      gamma[i] = next;
    }
    // The data fix only differences of log-strengths; their common level is held by the weak prior
    // alone, along which MM crawls. Maximise exactly along that direction too (a concave 1-D
    // problem: Newton on the shift), which keeps the ascent monotone.
    const shift = bestShift(gamma);
    if (shift !== 0) for (let i = 0; i < m; i++) gamma[i] *= Math.exp(shift);
    converged = largestStep + Math.abs(shift) < tolerance;
  }
  const theta = gamma.map(Math.log);

  const z = zForConfidence(0.95);
  const groups = components(t);
  const policies: PolicyStrength[] = [];
  groups.forEach((members, component) => {
    const mean = members.reduce((sum, i) => sum + theta[i], 0) / members.length;
    let variances: number[] | null = null;
    if (members.length > 1) {
      // Observed information of the penalised log-likelihood, restricted to this component.
      const position = new Map(members.map((i, p) => [i, p]));
      const information = members.map(() => new Array<number>(members.length).fill(0));
      members.forEach((i, p) => {
        const pi0 = gamma[i] / (gamma[i] + 1);
        information[p][p] += priorTies * pi0 * (1 - pi0);
        for (const j of opponents[i]) {
          const q = position.get(j)!;
          const pij = gamma[i] / (gamma[i] + gamma[j]);
          const w = decisive[i][j] * pij * (1 - pij);
          information[p][p] += w;
          information[p][q] -= w;
        }
      });
      const covariance = invertSpd(information);
      const size = members.length;
      const rowMeans = covariance.map((row) => row.reduce((sum, v) => sum + v, 0) / size);
      const grandMean = rowMeans.reduce((sum, v) => sum + v, 0) / size;
      // Var(θ_i - mean θ) = Σ_ii - 2 mean_j Σ_ij + mean_jk Σ_jk.
      variances = covariance.map((row, p) => Math.max(0, row[p] - 2 * rowMeans[p] + grandMean));
    }
    const ranked = members
      .map((i, p) => ({ i, theta: theta[i] - mean, se: variances ? Math.sqrt(variances[p]) : null }))
      .sort((x, y) => y.theta - x.theta || x.i - y.i);
    for (const { i, theta: centred, se } of ranked) {
      const ci: [number, number] | null = se === null ? null : [centred - z * se, centred + z * se];
      const elo = (v: number) => ELO_CENTRE + ELO_PER_LOG_UNIT * v;
      policies.push({
        id: t.ids[i],
        component,
        log_strength: centred,
        se,
        ci95: ci,
        elo: elo(centred),
        elo_ci95: ci && [elo(ci[0]), elo(ci[1])],
        wins: totalWins[i],
        losses: t.wins.reduce((sum, row) => sum + row[i], 0),
        ties: t.ties[i],
      });
    }
  });

  return {
    policies,
    components: groups.map((members) => members.map((i) => t.ids[i])),
    model: "bradley-terry",
    ties: "excluded",
    prior_ties: priorTies,
    fit_method: "mm-hunter-2004",
    interval_method: "wald-penalized-observed-information",
    iterations,
    converged,
  };
}
