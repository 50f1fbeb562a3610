/**
 * A sequential test of "the model-level success rate μ is at least the target" that models cells
 * (issue 25 item 4; docs/statistics.md, "Threshold over cells"): the headline's beta-binomial model
 * (cell rates θ_g ~ Beta with mean μ and ICC ρ; μ ~ Beta(1/2, 1/2) and ρ ~ the run's ICC prior), its
 * posterior updated after every episode, and a boundary on the posterior probability calibrated by
 * simulation.
 *
 * Rule. After each episode, q = P(μ ≤ target | data). Pass once q ≤ γ; fail once P(μ ≥ target | data)
 * ≤ γ; at `maxEpisodes` without either, "inconclusive". γ = α · {@link CELL_THRESHOLD_GAMMA_SHARE}: the
 * boundary was chosen by simulation (scripts/bench/stats-cell-threshold.ts) so that the false-pass rate
 * at μ = target stays ≤ α with ICC 0, 0.05 and 0.1 on 1–4 cells, looking after every episode, at the
 * settings listed there; it is not a guarantee for every setting, as Ville's inequality is for
 * the cell-blind test (sequential-threshold.ts), which assumes independent episodes and so does not
 * hold when cells differ.
 *
 * Computation, deterministic and incremental. μ on {@link CELL_THRESHOLD_GRID}.rate midpoints in u
 * (μ = sin²(πu/2)), ρ on .icc bins of equal prior mass at their medians. An episode on cell g (k_g of n_g
 * before it) multiplies the likelihood at (μ, ρ) by (μs + k_g)/(s + n_g) on a success and
 * ((1−μ)s + n_g − k_g)/(s + n_g) on a failure (s = 1/ρ − 1): the beta-binomial's sequential form, so one
 * update costs one logarithm per grid point (96 × 24), about 0.1 ms.
 */

import { betaQuantile, logBeta } from "./special-functions.js";
import { DEFAULT_HEADLINE_PRIOR, rateOf, type HeadlinePrior } from "./beta-binomial-rate.js";
import type { ThresholdDecision, ThresholdStopReason } from "./sequential-threshold.js";

/** Name results carry for this test. */
export const CELL_THRESHOLD_METHOD = "beta-binomial-posterior-sequential";

/** Grid sizes (docs and tests state them). */
export const CELL_THRESHOLD_GRID = Object.freeze({ rate: 96, icc: 24 });

/** γ = α × this share: the boundary on the posterior probability, calibrated by simulation. */
export const CELL_THRESHOLD_GAMMA_SHARE = 0.15;

export interface CellThresholdOptions {
  target: number;
  /** Largest false-pass rate aimed at (1 − ci). */
  alpha: number;
  maxEpisodes: number;
  /** The run's headline prior; DEFAULT_HEADLINE_PRIOR unless given. */
  prior?: HeadlinePrior;
  /** Override of γ (the bench's calibration only). */
  gamma?: number;
}

export interface CellThresholdState {
  n: number;
  successes: number;
  /** successes / n (0 with no episode). */
  success_rate: number;
  cells: number;
  /** P(μ ≤ target | data) after the last episode. */
  probability_below: number;
  /** The false-pass rate aimed at. */
  alpha: number;
  /** The boundary on the posterior probability (alpha × the calibrated share). */
  gamma: number;
  decision: ThresholdDecision;
  /** Why it stopped; null while it continues. */
  reason: Exclude<ThresholdStopReason, "final_look"> | null;
  test_method: typeof CELL_THRESHOLD_METHOD;
}

export interface CellThresholdTest {
  /** Feeds one episode's policy outcome on `cell`; returns the decision (sticky once made). */
  update(success: boolean, cell: string): ThresholdDecision;
  state(): CellThresholdState;
}

export function createCellThresholdTest(options: CellThresholdOptions): CellThresholdTest {
  const { target, alpha, maxEpisodes } = options;
  if (!(target > 0 && target < 1)) throw new RangeError(`target must be in (0, 1); got ${target}`);
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1); got ${alpha}`);
  if (!(Number.isInteger(maxEpisodes) && maxEpisodes > 0)) throw new RangeError(`maxEpisodes must be a positive integer; got ${maxEpisodes}`);
  const prior = options.prior ?? DEFAULT_HEADLINE_PRIOR;
  const gamma = options.gamma ?? alpha * CELL_THRESHOLD_GAMMA_SHARE;
  const M = CELL_THRESHOLD_GRID.rate;
  const R = CELL_THRESHOLD_GRID.icc;
  const mus = Float64Array.from({ length: M }, (_, i) => rateOf((i + 0.5) / M));
  const sizes = Float64Array.from({ length: R }, (_, r) => {
    const rho = betaQuantile((r + 0.5) / R, prior.icc.parameters.a, prior.icc.parameters.b);
    return 1 / rho - 1;
  });
  // Prior of μ in u: Beta(a, b) density times dμ/du; uniform for Jeffreys'.
  const { a, b } = prior.rate.parameters;
  const logPost = new Float64Array(M * R);
  for (let i = 0; i < M; i++) {
    const u = (i + 0.5) / M;
    const sin = Math.sin((Math.PI * u) / 2);
    const cos = Math.cos((Math.PI * u) / 2);
    const logPrior = -logBeta(a, b) + (2 * a - 1) * Math.log(sin) + (2 * b - 1) * Math.log(cos);
    for (let r = 0; r < R; r++) logPost[i * R + r] = logPrior;
  }
  // The grid step in u that holds the target, and the share of it below the target.
  const uTarget = (2 / Math.PI) * Math.asin(Math.sqrt(target));
  const straddle = Math.min(M - 1, Math.floor(uTarget * M));
  const shareBelow = uTarget * M - straddle;

  const counts = new Map<string, { k: number; n: number }>();
  let n = 0;
  let successes = 0;
  let below = 0.5;
  let decision: ThresholdDecision = "continue";
  let reason: CellThresholdState["reason"] = null;

  function probabilityBelow(): number {
    let max = -Infinity;
    for (let j = 0; j < logPost.length; j++) if (logPost[j] > max) max = logPost[j];
    let total = 0;
    let under = 0;
    for (let i = 0; i < M; i++) {
      let row = 0;
      for (let r = 0; r < R; r++) row += Math.exp(logPost[i * R + r] - max);
      total += row;
      if (i < straddle) under += row;
      else if (i === straddle) under += shareBelow * row;
    }
    return under / total;
  }

  return {
    update(success, cell) {
      if (decision !== "continue") return decision;
      const c = counts.get(cell) ?? { k: 0, n: 0 };
      for (let r = 0; r < R; r++) {
        const s = sizes[r];
        const denominator = Math.log(s + c.n);
        for (let i = 0; i < M; i++) {
          const numerator = success ? mus[i] * s + c.k : (1 - mus[i]) * s + c.n - c.k;
          logPost[i * R + r] += Math.log(numerator) - denominator;
        }
      }
      c.n += 1;
      if (success) c.k += 1;
      counts.set(cell, c);
      n += 1;
      if (success) successes += 1;
      below = probabilityBelow();
      if (below <= gamma) [decision, reason] = ["pass", "pass_boundary"];
      else if (1 - below <= gamma) [decision, reason] = ["fail", "fail_boundary"];
      else if (n >= maxEpisodes) [decision, reason] = ["inconclusive", "max_episodes"];
      return decision;
    },
    state: () => ({
      n, successes, success_rate: n === 0 ? 0 : successes / n, cells: counts.size, probability_below: below, alpha, gamma, decision, reason, test_method: CELL_THRESHOLD_METHOD,
    }),
  };
}
