/**
 * A sequential test of "success rate >= target" that may be looked at after every episode without
 * inflating false passes: the beta-binomial mixture martingale of Robbins (1970) and Lai (1976),
 * with Ville's (1939) maximal inequality giving a time-uniform error bound.
 *
 * For a null rate p0, the mixture likelihood ratio
 *
 *   M_n(p0) = ∫ p^k (1-p)^(n-k) dπ(p) / (p0^k (1-p0)^(n-k))      (k successes in n episodes)
 *
 * is a nonnegative martingale with M_0 = 1 when the true rate is p0, so P(sup_n M_n >= 1/α) <= α.
 * With π uniform on [target + delta, 1] it is a supermartingale for every true rate <= target, so
 * stopping with "pass" the first time M_n >= 1/α has false-pass probability <= α, at any stopping
 * time, under any amount of peeking, whatever maxEpisodes is. A mirrored mixture on
 * [0, target - delta] stops with "fail" once the rate is shown to be below target (error <= β).
 * Reaching maxEpisodes without either is reported as "fail" (reason "max_episodes"): not passing
 * can only lower the false-pass rate.
 */

import { logBeta, logIncompleteBetaPair } from "./special-functions.js";
import { wilsonInterval } from "./wilson.js";

/** Decision of a threshold procedure after an episode. */
export type ThresholdDecision = "continue" | "pass" | "fail";

/** Why a procedure stopped: a boundary was crossed, or the episode budget ran out. */
export type ThresholdStopReason = "pass_boundary" | "fail_boundary" | "max_episodes";

/** Options of {@link createThresholdTest}. */
export interface ThresholdTestOptions {
  /** The success rate to be shown, in (0, 1). */
  target: number;
  /** Largest allowed false-pass probability when the true rate is <= target, e.g. 1 - ci. */
  alpha: number;
  /** Largest probability of an early "fail" when the true rate is >= target. Default 0.1. */
  beta?: number;
  /**
   * Indifference margin: the pass mixture sits on [target + delta, 1] and the fail mixture on
   * [0, target - delta], which sharpens decisions for rates at least delta from target at the
   * cost of slower ones in between. Guarantees hold for every delta. Default 0.
   */
  delta?: number;
  /** Episode budget; at this many episodes without a decision the result is "fail". */
  maxEpisodes: number;
}

/** Snapshot of a threshold procedure; field names are the wire names. */
export interface ThresholdState {
  n: number;
  successes: number;
  success_rate: number | null;
  decision: ThresholdDecision;
  reason: ThresholdStopReason | null;
  target: number;
  alpha: number;
  /** Names the procedure in results (`test_method`). */
  method: "beta-binomial-mixture-sequential" | "naive-wilson-repeated";
}

/** A sequential procedure fed one episode outcome at a time. */
export interface ThresholdProcedure {
  /** Records one episode; returns the decision, which is final once it is not "continue". */
  update(success: boolean): ThresholdDecision;
  state(): ThresholdState;
}

/** State of {@link createThresholdTest}, with the anytime-valid evidence behind the decision. */
export interface SequentialThresholdState extends ThresholdState {
  method: "beta-binomial-mixture-sequential";
  beta: number;
  delta: number;
  /** ln M_n of the pass mixture; "pass" when it reaches ln(1/alpha). */
  log_e_pass: number;
  /** ln M_n of the fail mixture; "fail" when it reaches ln(1/beta). */
  log_e_fail: number;
  /** Anytime-valid one-sided lower confidence bound at level 1 - alpha (see lowerConfidenceBound). */
  lower_bound: number;
  interval_method: "beta-binomial-mixture-cs";
}

/** The sequential threshold test, whose state carries its evidence. */
export interface SequentialThresholdTest extends ThresholdProcedure {
  state(): SequentialThresholdState;
}

/** Compiled options of a threshold test. */
interface CompiledThresholdOptions {
  target: number;
  alpha: number;
  beta: number;
  delta: number;
  maxEpisodes: number;
}

const KNOWN_KEYS = new Set(["target", "alpha", "beta", "delta", "maxEpisodes"]);

function compileThresholdOptions(options: ThresholdTestOptions): CompiledThresholdOptions {
  for (const key of Object.keys(options)) {
    if (!KNOWN_KEYS.has(key)) throw new RangeError(`unknown threshold test option "${key}"; known: ${[...KNOWN_KEYS].join(", ")}`);
  }
  const { target, alpha, beta = 0.1, delta = 0, maxEpisodes } = options;
  if (!(target > 0 && target < 1)) throw new RangeError(`target must be in (0, 1); got ${target}`);
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1); got ${alpha}`);
  if (!(beta > 0 && beta < 1)) throw new RangeError(`beta must be in (0, 1); got ${beta}`);
  if (!(delta >= 0 && delta < Math.min(target, 1 - target))) {
    throw new RangeError(`delta must be in [0, ${Math.min(target, 1 - target)}) for target ${target}; got ${delta}`);
  }
  if (!Number.isInteger(maxEpisodes) || maxEpisodes < 1 || maxEpisodes > 100000) {
    throw new RangeError(`maxEpisodes must be an integer in 1..100000; got ${maxEpisodes}`);
  }
  return { target, alpha, beta, delta, maxEpisodes };
}

/**
 * ln M_n(p0) for the mixture uniform on [p0 + delta, 1] (evidence that the rate exceeds p0), with
 * k successes in n episodes.
 */
export function logEvidenceAbove(k: number, n: number, p0: number, delta = 0): number {
  const low = p0 + delta;
  // ∫_low^1 p^k (1-p)^(n-k) dp = B(k+1, n-k+1) · (1 - I_low(k+1, n-k+1)); the prior density is 1/(1-low).
  const logIntegral = logBeta(k + 1, n - k + 1) + logIncompleteBetaPair(low, k + 1, n - k + 1).logUpper;
  return logIntegral - Math.log1p(-low) - k * Math.log(p0) - (n - k) * Math.log1p(-p0);
}

/** ln M_n(p0) for the mixture uniform on [0, p0 - delta] (evidence that the rate is below p0). */
export function logEvidenceBelow(k: number, n: number, p0: number, delta = 0): number {
  const high = p0 - delta;
  const logIntegral = logBeta(k + 1, n - k + 1) + logIncompleteBetaPair(high, k + 1, n - k + 1).logLower;
  return logIntegral - Math.log(high) - k * Math.log(p0) - (n - k) * Math.log1p(-p0);
}

/** Per-n stopping boundaries: pass once successes >= passAt[n], fail once successes <= failAt[n]. */
interface Boundaries {
  passAt: Int32Array;
  failAt: Int32Array;
}

const boundaryCache = new Map<string, Boundaries>();

function boundaries(o: CompiledThresholdOptions): Boundaries {
  const key = `${o.target}|${o.alpha}|${o.beta}|${o.delta}|${o.maxEpisodes}`;
  const cached = boundaryCache.get(key);
  if (cached) return cached;
  const passAt = new Int32Array(o.maxEpisodes + 1);
  const failAt = new Int32Array(o.maxEpisodes + 1);
  const passLevel = Math.log(1 / o.alpha);
  const failLevel = Math.log(1 / o.beta);
  for (let n = 0; n <= o.maxEpisodes; n++) {
    // Evidence above is increasing in k and evidence below decreasing, so bisect each boundary.
    let low = 0;
    let high = n + 1; // n + 1 = unreachable
    while (low < high) {
      const mid = (low + high) >> 1;
      if (logEvidenceAbove(mid, n, o.target, o.delta) >= passLevel) high = mid;
      else low = mid + 1;
    }
    passAt[n] = low;
    low = -1; // -1 = unreachable
    high = n;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (logEvidenceBelow(mid, n, o.target, o.delta) >= failLevel) low = mid;
      else high = mid - 1;
    }
    failAt[n] = low;
  }
  if (boundaryCache.size >= 64) boundaryCache.delete(boundaryCache.keys().next().value as string);
  boundaryCache.set(key, { passAt, failAt });
  return { passAt, failAt };
}

/**
 * Creates the sequential threshold test: feed it one episode at a time; it answers "continue",
 * "pass" (the rate is shown >= target; false-pass probability <= alpha for any true rate <= target)
 * or "fail" (shown below target with error <= beta, or the episode budget ran out).
 * NOTE: a decision is final; calling update() after it throws.
 */
export function createThresholdTest(options: ThresholdTestOptions): SequentialThresholdTest {
  const o = compileThresholdOptions(options);
  const { passAt, failAt } = boundaries(o);
  let n = 0;
  let successes = 0;
  let decision: ThresholdDecision = "continue";
  let reason: ThresholdStopReason | null = null;
  return {
    update(success: boolean): ThresholdDecision {
      if (decision !== "continue") throw new Error(`threshold test already decided "${decision}" after ${n} episodes`);
      n++;
      if (success) successes++;
      if (successes >= passAt[n]) [decision, reason] = ["pass", "pass_boundary"];
      else if (successes <= failAt[n]) [decision, reason] = ["fail", "fail_boundary"];
      else if (n >= o.maxEpisodes) [decision, reason] = ["fail", "max_episodes"];
      return decision;
    },
    state(): SequentialThresholdState {
      return {
        n,
        successes,
        success_rate: n === 0 ? null : successes / n,
        decision,
        reason,
        target: o.target,
        alpha: o.alpha,
        beta: o.beta,
        delta: o.delta,
        method: "beta-binomial-mixture-sequential",
        log_e_pass: logEvidenceAbove(successes, n, o.target, o.delta),
        log_e_fail: logEvidenceBelow(successes, n, o.target, o.delta),
        lower_bound: lowerConfidenceBound(successes, n, o.alpha),
        interval_method: "beta-binomial-mixture-cs",
      };
    },
  };
}

/**
 * Anytime-valid lower confidence bound: the smallest p0 that the pass mixture (delta = 0) does not
 * reject at level alpha. P(the bound ever exceeds the true rate, over all n) <= alpha, so it may be
 * reported after every episode. "pass" with delta = 0 happens exactly when it exceeds target.
 */
export function lowerConfidenceBound(k: number, n: number, alpha: number): number {
  checkCounts(k, n, alpha);
  if (k === 0) return 0;
  const level = Math.log(1 / alpha);
  // Evidence against p0 falls as p0 rises towards k/n; bisect for where it crosses the level.
  let low = 0;
  let high = k / n;
  if (logEvidenceAbove(k, n, 1e-12) < level) return 0;
  for (let i = 0; i < 60; i++) {
    const mid = (low + high) / 2;
    if (logEvidenceAbove(k, n, mid) >= level) low = mid;
    else high = mid;
  }
  return low;
}

/** Anytime-valid upper confidence bound, the mirror of {@link lowerConfidenceBound}. */
export function upperConfidenceBound(k: number, n: number, alpha: number): number {
  return 1 - lowerConfidenceBound(n - k, n, alpha);
}

/**
 * Two-sided confidence sequence for a success rate from the beta-binomial mixtures (Robbins 1970;
 * Lai 1976): with probability >= 1 - alpha the interval contains the true rate at every n at once,
 * so it stays valid however often it is looked at and whenever the run stops. Each side is a
 * one-sided bound at alpha/2. It is wider than a fixed-n Wilson interval: that is the price of
 * optional stopping.
 */
export function confidenceSequence(k: number, n: number, alpha: number): [number, number] {
  checkCounts(k, n, alpha);
  if (n === 0) return [0, 1];
  return [lowerConfidenceBound(k, n, alpha / 2), upperConfidenceBound(k, n, alpha / 2)];
}

function checkCounts(k: number, n: number, alpha: number): void {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer; got ${n}`);
  if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError(`k must be an integer in 0..${n}; got ${k}`);
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1); got ${alpha}`);
}

/** Options of {@link naiveThresholdRule}. */
export interface NaiveThresholdOptions {
  target: number;
  /** Confidence of the Wilson interval re-checked after every episode. */
  ci: number;
  maxEpisodes: number;
}

/**
 * The procedure Assay must NOT use, kept to show why: after every episode, pass if the fixed-n
 * Wilson lower bound reaches target, fail if the upper bound falls below it. Each look has error
 * (1 - ci)/2, but repeated looks compound, so its false-pass rate is several times that
 * (scripts/bench/threshold-false-pass.ts measures it).
 */
export function naiveThresholdRule(options: NaiveThresholdOptions): ThresholdProcedure {
  const { target, ci, maxEpisodes } = options;
  if (!(target > 0 && target < 1)) throw new RangeError(`target must be in (0, 1); got ${target}`);
  if (!Number.isInteger(maxEpisodes) || maxEpisodes < 1) throw new RangeError(`maxEpisodes must be a positive integer; got ${maxEpisodes}`);
  let n = 0;
  let successes = 0;
  let decision: ThresholdDecision = "continue";
  let reason: ThresholdStopReason | null = null;
  return {
    update(success: boolean): ThresholdDecision {
      if (decision !== "continue") throw new Error(`naive rule already decided "${decision}" after ${n} episodes`);
      n++;
      if (success) successes++;
      const [lower, upper] = wilsonInterval(successes, n, ci);
      if (lower >= target) [decision, reason] = ["pass", "pass_boundary"];
      else if (upper < target) [decision, reason] = ["fail", "fail_boundary"];
      else if (n >= maxEpisodes) [decision, reason] = ["fail", "max_episodes"];
      return decision;
    },
    state(): ThresholdState {
      return {
        n,
        successes,
        success_rate: n === 0 ? null : successes / n,
        decision,
        reason,
        target,
        alpha: (1 - ci) / 2,
        method: "naive-wilson-repeated",
      };
    },
  };
}
