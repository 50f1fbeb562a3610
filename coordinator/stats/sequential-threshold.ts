/**
 * A sequential test of "success rate >= target" that may be looked at after every episode without
 * inflating false passes: the beta-binomial mixture martingale of Robbins (1970) and Lai (1976),
 * with Ville's (1939) maximal inequality giving a time-uniform error bound, and a final look at the
 * episode budget that spends the error the interim looks left unspent.
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
 *
 * Ville's bound is loose for a finite budget: with the product default (target 0.8, α 0.05, 100
 * episodes) the interim looks spend only 2.7% of the 5%. The final look at maxEpisodes spends the
 * rest, exactly: a dynamic programme over (n, successes), with the pass and fail boundaries
 * absorbing, gives under p = target the probability of an interim pass and the distribution of
 * successes among runs that reach maxEpisodes undecided; the final critical count c is the
 * smallest with
 *
 *   P_target(pass at some n < maxEpisodes) + P_target(undecided at maxEpisodes, successes >= c) <= α.
 *
 * At maxEpisodes the run passes when successes >= c (reason "final_look", or "pass_boundary" when
 * the evidence crossed anyway), fails when the fail boundary is crossed, and is otherwise
 * "inconclusive" (reason "max_episodes"); without the final look (finalLook: false) it is
 * "inconclusive" whenever no boundary was crossed. Inconclusive is not a fail: the budget ran out.
 *
 * Why the false-pass rate stays <= α for every true rate p <= target, not only at p = target: at
 * every n the pass region is an upper set of success counts (successes >= a_n; the evidence rises
 * with successes, and the final look is an upper set too) and the fail region a lower set. Couple
 * two runs on the same uniforms U_i (success when U_i < p): at p' > p every partial count is at
 * least as large. If the p-run passes at n, the p'-run has not failed before n (its count was at
 * least the p-run's, which was above every fail region), so it passed at or before n. Hence
 * P_p(pass) is nondecreasing in p, and sup over p <= target is P_target(pass) <= α, which the
 * dynamic programme computes exactly (`alpha_spent_interim` + the final look's share).
 */

import { binomialUpperTail } from "./binomial.js";
import { logBeta, logIncompleteBetaPair } from "./special-functions.js";

/**
 * Decision of a threshold procedure after an episode. "inconclusive": the episode budget ran out
 * with neither the rate shown >= target nor shown below it.
 */
export type ThresholdDecision = "continue" | "pass" | "fail" | "inconclusive";

/**
 * Why a procedure stopped: a boundary was crossed, the final look at the budget passed, or the
 * budget ran out undecided.
 */
export type ThresholdStopReason = "pass_boundary" | "fail_boundary" | "final_look" | "max_episodes";

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
  /** Episode budget; at this many episodes without a decision the result is "inconclusive". */
  maxEpisodes: number;
  /**
   * Whether the look at maxEpisodes spends the error the interim looks left unspent (exactly
   * computed final critical count, see the module comment). Default true.
   */
  finalLook?: boolean;
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
  /** Names the procedure in results (`test_method`); "naive-wilson-repeated" is naive-threshold.ts. */
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
  max_episodes: number;
  final_look: boolean;
  /** Successes at max_episodes that pass at the final look; null without the final look. */
  final_critical: number | null;
  /** Exact P(pass before max_episodes) at a true rate equal to target. */
  alpha_spent_interim: number;
  /** Exact P(pass) at a true rate equal to target (interim and final look): the test's size, <= alpha. */
  alpha_spent: number;
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
  finalLook: boolean;
}

const KNOWN_KEYS = new Set(["target", "alpha", "beta", "delta", "maxEpisodes", "finalLook"]);

function compileThresholdOptions(options: ThresholdTestOptions): CompiledThresholdOptions {
  for (const key of Object.keys(options)) {
    if (!KNOWN_KEYS.has(key)) throw new RangeError(`unknown threshold test option "${key}"; known: ${[...KNOWN_KEYS].join(", ")}`);
  }
  const { target, alpha, beta = 0.1, delta = 0, maxEpisodes, finalLook = true } = options;
  if (!(target > 0 && target < 1)) throw new RangeError(`target must be in (0, 1); got ${target}`);
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1); got ${alpha}`);
  if (!(beta > 0 && beta < 1)) throw new RangeError(`beta must be in (0, 1); got ${beta}`);
  if (!(delta >= 0 && delta < Math.min(target, 1 - target))) {
    throw new RangeError(`delta must be in [0, ${Math.min(target, 1 - target)}) for target ${target}; got ${delta}`);
  }
  if (!Number.isInteger(maxEpisodes) || maxEpisodes < 1 || maxEpisodes > 100000) {
    throw new RangeError(`maxEpisodes must be an integer in 1..100000; got ${maxEpisodes}`);
  }
  if (typeof finalLook !== "boolean") throw new RangeError(`finalLook must be a boolean; got ${String(finalLook)}`);
  return { target, alpha, beta, delta, maxEpisodes, finalLook };
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

/**
 * Per-n stopping boundaries: pass once successes >= passAt[n], fail once successes <= failAt[n];
 * and the final look at maxEpisodes, computed on first use.
 */
interface Boundaries {
  passAt: Int32Array;
  failAt: Int32Array;
  final?: FinalLook;
}

/** The final look's critical count and the exact error spent, at a true rate equal to target. */
interface FinalLook {
  critical: number;
  alphaSpentInterim: number;
  /** P_target(pass) with the final look. */
  alphaSpent: number;
  /** P_target(pass) without it (boundary crossings only). */
  alphaSpentBoundaries: number;
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
  const result: Boundaries = { passAt, failAt };
  if (boundaryCache.size >= 64) boundaryCache.delete(boundaryCache.keys().next().value as string);
  boundaryCache.set(key, result);
  return result;
}

/** Exact outcome probabilities of the procedure at one true rate (see {@link absorb}). */
interface Absorbed {
  passInterim: number;
  passFinal: number;
  fail: number;
  inconclusive: number;
  expectedEpisodes: number;
  /** P(undecided before maxEpisodes and k successes at maxEpisodes), k = 0..maxEpisodes. */
  atMax: Float64Array;
}

/**
 * Dynamic programme over (n, successes) with the boundaries absorbing, at true rate p: carries
 * P(still undecided after n episodes with k successes) forward one episode at a time, over the
 * undecided counts only (between the boundaries), so its cost is the sum of those widths.
 * At maxEpisodes a run passes with successes >= passAtMax (the boundary, or the final look's
 * lower critical count), else fails on the fail boundary, else is inconclusive.
 */
function absorb(b: Boundaries, maxEpisodes: number, p: number, passAtMax: number): Absorbed {
  let dist = new Float64Array(maxEpisodes + 2);
  let next = new Float64Array(maxEpisodes + 2);
  dist[0] = 1;
  let low = 0; // undecided counts lie in low..high
  let high = 0;
  const out: Absorbed = { passInterim: 0, passFinal: 0, fail: 0, inconclusive: 0, expectedEpisodes: 0, atMax: new Float64Array(maxEpisodes + 1) };
  for (let n = 1; n <= maxEpisodes; n++) {
    let alive = 0;
    for (let k = low; k <= high; k++) alive += dist[k];
    if (alive === 0) break;
    out.expectedEpisodes += alive;
    next.fill(0, low, high + 2);
    for (let k = low; k <= high; k++) {
      next[k] += dist[k] * (1 - p);
      next[k + 1] += dist[k] * p;
    }
    [dist, next] = [next, dist];
    high += 1;
    if (n === maxEpisodes) {
      for (let k = low; k <= high; k++) {
        out.atMax[k] = dist[k];
        if (k >= passAtMax) out.passFinal += dist[k];
        else if (k <= b.failAt[n]) out.fail += dist[k];
        else out.inconclusive += dist[k];
      }
      break;
    }
    for (let k = low; k <= high; k++) {
      if (k >= b.passAt[n]) out.passInterim += dist[k];
      else if (k <= b.failAt[n]) out.fail += dist[k];
    }
    const newLow = Math.max(low, b.failAt[n] + 1);
    const newHigh = Math.min(high, b.passAt[n] - 1);
    dist.fill(0, low, newLow);
    if (newHigh + 1 <= high) dist.fill(0, newHigh + 1, high + 1);
    [low, high] = [newLow, newHigh];
    if (low > high) break;
  }
  return out;
}

/** The final look: smallest c with P_target(interim pass) + P_target(undecided at max, k >= c) <= alpha. */
function finalLook(b: Boundaries, o: CompiledThresholdOptions): FinalLook {
  if (b.final) return b.final;
  const max = o.maxEpisodes;
  const atTarget = absorb(b, max, o.target, b.passAt[max]);
  let critical = max + 1;
  let spent = atTarget.passInterim;
  // The boundary alone keeps P_target(pass) <= alpha (Ville), so c <= passAt[max] in exact
  // arithmetic; the min() keeps rounding from ever making the final look stricter than the boundary.
  while (critical > 0 && spent + atTarget.atMax[critical - 1] <= o.alpha) spent += atTarget.atMax[--critical];
  critical = Math.min(critical, b.passAt[max]);
  const tail = (from: number) => atTarget.atMax.slice(from).reduce((sum, x) => sum + x, atTarget.passInterim);
  b.final = { critical, alphaSpentInterim: atTarget.passInterim, alphaSpent: tail(critical), alphaSpentBoundaries: tail(b.passAt[max]) };
  return b.final;
}

/** Exact outcome probabilities of {@link createThresholdTest}; field names are the wire names. */
export interface ThresholdOperatingCharacteristics {
  pass: number;
  fail: number;
  inconclusive: number;
  /** Mean episodes to a decision (maxEpisodes at most). */
  expected_episodes: number;
}

/**
 * Exact operating characteristics of the threshold test with `options` when the true success rate
 * is `p`: the probabilities of pass, fail and inconclusive and the expected number of episodes, by
 * the dynamic programme the final look uses (no simulation). At p = target, `pass` is the test's
 * size (state `alpha_spent`).
 */
export function thresholdOperatingCharacteristics(options: ThresholdTestOptions, p: number): ThresholdOperatingCharacteristics {
  const o = compileThresholdOptions(options);
  if (!(p >= 0 && p <= 1)) throw new RangeError(`p must be in [0, 1]; got ${p}`);
  const b = boundaries(o);
  const passAtMax = o.finalLook ? finalLook(b, o).critical : b.passAt[o.maxEpisodes];
  const r = absorb(b, o.maxEpisodes, p, passAtMax);
  return { pass: r.passInterim + r.passFinal, fail: r.fail, inconclusive: r.inconclusive, expected_episodes: r.expectedEpisodes };
}

/**
 * Creates the sequential threshold test: feed it one episode at a time; it answers "continue",
 * "pass" (the rate is shown >= target; false-pass probability <= alpha for any true rate <= target),
 * "fail" (shown below target; probability <= beta for any true rate >= target) or, at the budget,
 * "inconclusive". NOTE: a decision is final; calling update() after it throws.
 */
export function createThresholdTest(options: ThresholdTestOptions): SequentialThresholdTest {
  const o = compileThresholdOptions(options);
  const b = boundaries(o);
  const { passAt, failAt } = b;
  const final = finalLook(b, o);
  const finalCritical = o.finalLook ? final.critical : null;
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
      else if (n >= o.maxEpisodes && finalCritical !== null && successes >= finalCritical) [decision, reason] = ["pass", "final_look"];
      else if (successes <= failAt[n]) [decision, reason] = ["fail", "fail_boundary"];
      else if (n >= o.maxEpisodes) [decision, reason] = ["inconclusive", "max_episodes"];
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
        max_episodes: o.maxEpisodes,
        final_look: o.finalLook,
        final_critical: finalCritical,
        alpha_spent_interim: final.alphaSpentInterim,
        alpha_spent: o.finalLook ? final.alphaSpent : final.alphaSpentBoundaries,
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

/**
 * Power of the fixed-n exact one-sided binomial test of "rate <= target" at level alpha with n
 * episodes, at true rate p: it passes when successes >= c, the smallest c with
 * P(X >= c | target) <= alpha (X ~ Binomial(n, target)), so its size is <= alpha; power is
 * P(X >= c | p). The yardstick for the sequential test: what the same budget buys when it is
 * always spent in full and looked at once.
 */
export function fixedNExactPower(target: number, alpha: number, n: number, p: number): number {
  if (!(target > 0 && target < 1)) throw new RangeError(`target must be in (0, 1); got ${target}`);
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1); got ${alpha}`);
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`n must be a positive integer; got ${n}`);
  if (!(p >= 0 && p <= 1)) throw new RangeError(`p must be in [0, 1]; got ${p}`);
  return binomialUpperTail(fixedNCritical(target, alpha, n), n, p);
}

/** Smallest c with P(Binomial(n, target) >= c) <= alpha; n + 1 when no count is rare enough. */
export function fixedNCritical(target: number, alpha: number, n: number): number {
  let low = 0;
  let high = n + 1; // the upper tail falls as c rises: bisect
  while (low < high) {
    const mid = (low + high) >> 1;
    if (binomialUpperTail(mid, n, target) <= alpha) high = mid;
    else low = mid + 1;
  }
  return low;
}

/**
 * Alpha for the threshold test of the j-th policy of a run that iterates (checkpoint 1 = the
 * submitted policy, 2 = the first pushed checkpoint, ...): familyAlpha · 6 / (π² j²).
 *
 * Each checkpoint restarts the test on its own episodes, so each has its own chance of a false
 * pass; by the union bound the chance that any of them passes falsely is at most the sum of their
 * alphas, and Σ_j 6 / (π² j²) = 1 (Euler's Basel sum), so the family stays <= familyAlpha however
 * many checkpoints arrive, without declaring their number in advance. The first policy keeps 61%
 * of the family's alpha, the second 15%, the tenth 0.6%: early, deliberate checkpoints lose little,
 * and a stream that pushes every few episodes cannot buy a pass by volume. The weights fall as
 * 1/j², the slowest polynomial rate whose sum is finite and known in closed form.
 */
export function checkpointAlpha(familyAlpha: number, checkpoint: number): number {
  if (!(familyAlpha > 0 && familyAlpha < 1)) throw new RangeError(`familyAlpha must be in (0, 1); got ${familyAlpha}`);
  if (!Number.isInteger(checkpoint) || checkpoint < 1) throw new RangeError(`checkpoint must be a positive integer (1 = the submitted policy); got ${checkpoint}`);
  return (familyAlpha * 6) / (Math.PI * Math.PI * checkpoint * checkpoint);
}
