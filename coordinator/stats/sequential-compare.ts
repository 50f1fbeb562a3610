/**
 * Sequential paired comparison of two policies that stops as soon as the answer is clear:
 * Wald's (1945) sequential probability ratio test on the discordant pairs, run two-sided as the
 * Sobel-Wald (1949) three-decision procedure, the design Armitage (1957; "Sequential Medical
 * Trials", 1975) used for paired preferences.
 *
 * Only discordant pairs (one policy succeeded, the other failed) carry information about which is
 * better. Given a pair is discordant, A wins it with probability θ = P(A only) / (P(A only) +
 * P(B only)); the policies are equally good exactly when θ = 1/2 (McNemar's null). Two SPRTs run
 * on the discordant sequence:
 *
 *   S+ : θ = 1/2 against θ = 1/2 + δ   (crossing the top ⇒ "a_better")
 *   S− : θ = 1/2 against θ = 1/2 − δ   (crossing the top ⇒ "b_better")
 *
 * Each compares its likelihood ratio Λ with A = 2/α (top) and B = β (bottom). Those are Wald's
 * boundaries in their inequality form: under θ = 1/2, Λ is a nonnegative martingale, so
 * P(Λ ever >= 2/α) <= α/2 (Ville 1939; Wald 1945 §3.2), and under the alternative 1/Λ is one, so
 * P(Λ ever <= β) <= β. Hence, at any stopping time and without Wald's approximations:
 *
 *   - P(declare a difference | θ = 1/2) <= α;
 *   - P(miss "a_better" | θ >= 1/2 + δ) <= β + P(reaching maxPairs), likewise for "b_better".
 *
 * "no_difference" is declared once both SPRTs have crossed their bottom boundary (|θ - 1/2| < δ
 * supported), or when maxPairs is reached first (reason "max_pairs": inconclusive, which can only
 * lower the false-difference rate).
 *
 * The "+ P(reaching maxPairs)" term is not small when maxPairs is the fixed-n McNemar budget:
 * {@link sequentialCompareOperatingCharacteristics} computes the decision probabilities and the
 * expected pairs exactly, and {@link pairsForPower} the cap that keeps the power at 1 - β. After a
 * sequential stop the fixed-n interval of the difference is no longer valid;
 * {@link differenceConfidenceSequence} is, at any stopping time.
 */

import { binomialLogPmf } from "./binomial.js";
import type { PairedCounts } from "./paired-difference.js";
import { confidenceSequence } from "./sequential-threshold.js";

/** Decision of the sequential comparison after a pair. */
export type CompareDecision = "continue" | "a_better" | "b_better" | "no_difference";

/** Options of {@link createSequentialCompare}. */
export interface SequentialCompareOptions {
  /** Largest probability of declaring a difference when there is none (two-sided). */
  alpha: number;
  /** Largest probability of missing a difference of size delta (one direction). */
  beta: number;
  /**
   * Smallest difference worth detecting, on the discordant-share scale: A wins a discordant pair
   * with probability 1/2 + delta. In (0, 0.5).
   */
  delta: number;
  /** Pair budget; at this many pairs without a decision the result is "no_difference". */
  maxPairs: number;
}

/** Snapshot of the sequential comparison; field names are the wire names. */
export interface SequentialCompareState extends PairedCounts {
  pairs: number;
  decision: CompareDecision;
  reason: "boundary" | "max_pairs" | null;
  /** ln Λ of S+ (A better) and S− (B better). */
  log_lr_a: number;
  log_lr_b: number;
  /** Whether each SPRT has already settled on "no difference in its direction". */
  a_side_closed: boolean;
  b_side_closed: boolean;
  alpha: number;
  beta: number;
  delta: number;
  /** Names the procedure in results (`test_method`). */
  method: "sprt-discordant-sobel-wald";
}

/** A sequential comparison fed one pair at a time. */
export interface SequentialCompare {
  /** Records one pair (did A succeed, did B succeed); the decision is final once not "continue". */
  update(pair: { a: boolean; b: boolean }): CompareDecision;
  state(): SequentialCompareState;
}

const KNOWN_KEYS = new Set(["alpha", "beta", "delta", "maxPairs"]);

function compileCompareOptions(options: SequentialCompareOptions): Required<SequentialCompareOptions> {
  for (const key of Object.keys(options)) {
    if (!KNOWN_KEYS.has(key)) throw new RangeError(`unknown sequential compare option "${key}"; known: ${[...KNOWN_KEYS].join(", ")}`);
  }
  const { alpha, beta, delta, maxPairs } = options;
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1); got ${alpha}`);
  if (!(beta > 0 && beta < 1)) throw new RangeError(`beta must be in (0, 1); got ${beta}`);
  if (!(delta > 0 && delta < 0.5)) throw new RangeError(`delta must be in (0, 0.5); got ${delta}`);
  if (!Number.isInteger(maxPairs) || maxPairs < 1) throw new RangeError(`maxPairs must be a positive integer; got ${maxPairs}`);
  return { alpha, beta, delta, maxPairs };
}

/**
 * Creates the Sobel-Wald sequential comparison on discordant pairs. See the module comment for
 * the guarantees. NOTE: a decision is final; calling update() after it throws.
 */
export function createSequentialCompare(options: SequentialCompareOptions): SequentialCompare {
  const o = compileCompareOptions(options);
  const upper = Math.log(2 / o.alpha);
  const lower = Math.log(o.beta);
  // Per discordant pair won by the favoured arm, Λ gains ln(1 + 2δ); per pair lost, ln(1 - 2δ).
  const win = Math.log1p(2 * o.delta);
  const loss = Math.log1p(-2 * o.delta);
  const counts: PairedCounts = { both: 0, onlyA: 0, onlyB: 0, neither: 0 };
  let pairs = 0;
  let logA = 0;
  let logB = 0;
  let aClosed = false;
  let bClosed = false;
  let decision: CompareDecision = "continue";
  let reason: SequentialCompareState["reason"] = null;
  return {
    update({ a, b }: { a: boolean; b: boolean }): CompareDecision {
      if (decision !== "continue") throw new Error(`sequential compare already decided "${decision}" after ${pairs} pairs`);
      pairs++;
      if (a && b) counts.both++;
      else if (!a && !b) counts.neither++;
      else {
        if (a) counts.onlyA++;
        else counts.onlyB++;
        // A closed SPRT is frozen at its bottom boundary (Sobel & Wald 1949). An open one has seen
        // every discordant pair; computing it from the counts (not by accumulation) makes it the
        // same float as the exact operating characteristics compute, so boundary ties agree too.
        if (!aClosed) logA = sideLogLr(counts.onlyA, counts.onlyB, win, loss);
        if (!bClosed) logB = sideLogLr(counts.onlyB, counts.onlyA, win, loss);
        if (!aClosed && logA >= upper) [decision, reason] = ["a_better", "boundary"];
        else if (!bClosed && logB >= upper) [decision, reason] = ["b_better", "boundary"];
        else {
          if (logA <= lower) aClosed = true;
          if (logB <= lower) bClosed = true;
          if (aClosed && bClosed) [decision, reason] = ["no_difference", "boundary"];
        }
      }
      if (decision === "continue" && pairs >= o.maxPairs) [decision, reason] = ["no_difference", "max_pairs"];
      return decision;
    },
    state(): SequentialCompareState {
      return {
        ...counts,
        pairs,
        decision,
        reason,
        log_lr_a: logA,
        log_lr_b: logB,
        a_side_closed: aClosed,
        b_side_closed: bClosed,
        alpha: o.alpha,
        beta: o.beta,
        delta: o.delta,
        method: "sprt-discordant-sobel-wald",
      };
    },
  };
}

/** ln Λ of one side after `wins` discordant pairs won by its favoured arm and `losses` lost. */
function sideLogLr(wins: number, losses: number, win: number, loss: number): number {
  return wins * win + losses * loss;
}

/** Exact outcome probabilities of the sequential comparison; field names are the wire names. */
export interface CompareOperatingCharacteristics {
  a_better: number;
  b_better: number;
  /** Both sides closed, or maxPairs reached undecided. */
  no_difference: number;
  expected_pairs: number;
}

/** Largest number of discordant pairs the exact computations follow. */
const MAX_DISCORDANT = 1_000_000;

/**
 * The procedure in discordant time: P(decision at the d-th discordant pair) for each decision and
 * P(undecided after d discordant pairs), d = 0..D, with A's share of discordant pairs `shareA`.
 * Dynamic programme over (A's wins w, which side has closed), the states the procedure has: an
 * open side's ln Λ is a function of w and d, and a closed side can decide nothing any more. It
 * stops at `maxDiscordant` or once less than 1e-17 of the probability is undecided.
 */
function discordantDecisions(o: Required<SequentialCompareOptions>, shareA: number, maxDiscordant: number) {
  const upper = Math.log(2 / o.alpha);
  const lower = Math.log(o.beta);
  const win = Math.log1p(2 * o.delta);
  const loss = Math.log1p(-2 * o.delta);
  const aBetter: number[] = [0];
  const bBetter: number[] = [0];
  const noDifference: number[] = [0];
  const undecided: number[] = [1];
  // Index w = A's wins; three layers: both sides open, only B open (A closed), only A open.
  let open = new Map<number, number>([[0, 1]]);
  let bOnly = new Map<number, number>();
  let aOnly = new Map<number, number>();
  for (let d = 1; d <= maxDiscordant; d++) {
    const nextOpen = new Map<number, number>();
    const nextBOnly = new Map<number, number>();
    const nextAOnly = new Map<number, number>();
    let [a, b, none] = [0, 0, 0];
    const step = (layer: Map<number, number>, aOpen: boolean, bOpen: boolean) => {
      for (const [w, prob] of layer) {
        for (const [nw, q] of [[w + 1, prob * shareA], [w, prob * (1 - shareA)]] as const) {
          if (q === 0) continue;
          const logA = sideLogLr(nw, d - nw, win, loss);
          const logB = sideLogLr(d - nw, nw, win, loss);
          // Same order as update(): A's top, B's top, then closing.
          if (aOpen && logA >= upper) a += q;
          else if (bOpen && logB >= upper) b += q;
          else {
            const aStays = aOpen && !(logA <= lower);
            const bStays = bOpen && !(logB <= lower);
            const target = aStays && bStays ? nextOpen : bStays ? nextBOnly : aStays ? nextAOnly : null;
            if (target) target.set(nw, (target.get(nw) ?? 0) + q);
            else none += q;
          }
        }
      }
    };
    step(open, true, true);
    step(bOnly, false, true);
    step(aOnly, true, false);
    [open, bOnly, aOnly] = [nextOpen, nextBOnly, nextAOnly];
    aBetter.push(a);
    bBetter.push(b);
    noDifference.push(none);
    let left = 0;
    for (const layer of [open, bOnly, aOnly]) for (const prob of layer.values()) left += prob;
    undecided.push(left);
    if (left < 1e-17) break;
  }
  return { aBetter, bBetter, noDifference, undecided };
}

/** P(X = d) for X ~ Binomial(n, p), d = 0..last. */
function binomialPmfs(n: number, p: number, last: number): Float64Array {
  const pmf = new Float64Array(last + 1);
  for (let d = 0; d <= Math.min(last, n); d++) pmf[d] = Math.exp(binomialLogPmf(d, n, p));
  return pmf;
}

function checkRate(name: string, value: number): void {
  if (!(value >= 0 && value <= 1)) throw new RangeError(`${name} must be in [0, 1]; got ${value}`);
}

/**
 * Exact operating characteristics of {@link createSequentialCompare} when a pair is discordant
 * with probability `discordant` and A wins a discordant pair with probability `shareA` (1/2: no
 * difference): P(a_better), P(b_better), P(no_difference) and the expected number of pairs.
 *
 * The decision happens at some discordant pair d (computed exactly in discordant time, see
 * discordantDecisions); it counts only if that pair arrives within maxPairs, i.e. when
 * Binomial(maxPairs, discordant) >= d. The pair T_d on which the d-th discordant pair arrives is
 * negative binomial, and E[min(T_d, M)] = (d/π) P(Bin(M+1, π) >= d+1) + M P(Bin(M, π) <= d-1)
 * (from t·P(T_d = t) = (d/π) P(T_{d+1} = t+1)), which gives the expected pairs without a sum over
 * pairs. No simulation: the result is exact up to float rounding.
 */
export function sequentialCompareOperatingCharacteristics(options: SequentialCompareOptions, discordant: number, shareA: number): CompareOperatingCharacteristics {
  const o = compileCompareOptions(options);
  checkRate("discordant", discordant);
  checkRate("shareA", shareA);
  const M = o.maxPairs;
  if (discordant === 0) return { a_better: 0, b_better: 0, no_difference: 1, expected_pairs: M };
  const dec = discordantDecisions(o, shareA, Math.min(M, MAX_DISCORDANT));
  const last = dec.undecided.length - 1;
  const pmfM = binomialPmfs(M, discordant, last);
  const pmfM1 = binomialPmfs(M + 1, discordant, last + 1);
  let aBetter = 0;
  let bBetter = 0;
  let expected = 0;
  let belowM = 0; // P(Bin(M, π) <= d - 1)
  let belowM1 = pmfM1[0]; // P(Bin(M + 1, π) <= d)
  for (let d = 1; d <= last; d++) {
    belowM += pmfM[d - 1];
    belowM1 += pmfM1[d];
    const arrives = Math.max(0, 1 - belowM); // P(Bin(M, π) >= d): the d-th discordant pair comes in time
    aBetter += dec.aBetter[d] * arrives;
    bBetter += dec.bBetter[d] * arrives;
    const stops = dec.aBetter[d] + dec.bBetter[d] + dec.noDifference[d];
    expected += stops * ((d / discordant) * Math.max(0, 1 - belowM1) + M * Math.min(1, belowM));
  }
  // Still undecided after the last discordant pair followed: the run goes to maxPairs.
  expected += dec.undecided[last] * M;
  return { a_better: aBetter, b_better: bBetter, no_difference: Math.max(0, 1 - aBetter - bBetter), expected_pairs: expected };
}

/** Largest cap {@link pairsForPower} searches. */
export const PAIRS_FOR_POWER_LIMIT = 1_000_000;

/**
 * Smallest maxPairs at which the sequential comparison declares "a_better" with probability >=
 * `power` (default 1 - beta) when pairs are discordant with probability `discordant` and A wins a
 * discordant pair with probability 1/2 + delta. Exact (see
 * {@link sequentialCompareOperatingCharacteristics}); P(a_better) rises with the cap, so the
 * search bisects. Throws a RangeError when the power is out of reach: above what the procedure
 * gives with no cap at all, or needing more than {@link PAIRS_FOR_POWER_LIMIT} pairs.
 */
export function pairsForPower(options: Omit<SequentialCompareOptions, "maxPairs">, discordant: number, power?: number): number {
  const o = compileCompareOptions({ ...options, maxPairs: PAIRS_FOR_POWER_LIMIT });
  const wanted = power ?? 1 - o.beta;
  if (!(wanted > 0 && wanted < 1)) throw new RangeError(`power must be in (0, 1); got ${wanted}`);
  if (!(discordant > 0 && discordant <= 1)) throw new RangeError(`discordant must be in (0, 1]; got ${discordant}`);
  const dec = discordantDecisions(o, 0.5 + o.delta, MAX_DISCORDANT);
  const uncapped = dec.aBetter.reduce((sum, x) => sum + x, 0);
  if (uncapped < wanted) {
    throw new RangeError(`power ${wanted} is out of reach: with no cap at all the comparison declares a_better with probability ${uncapped.toFixed(4)} (alpha ${o.alpha}, beta ${o.beta}, delta ${o.delta}); lower the power or beta`);
  }
  const powerAt = (M: number) => {
    const pmf = binomialPmfs(M, discordant, dec.aBetter.length - 1);
    let below = 0;
    let sum = 0;
    for (let d = 1; d < dec.aBetter.length; d++) {
      below += pmf[d - 1];
      sum += dec.aBetter[d] * Math.max(0, 1 - below);
    }
    return sum;
  };
  if (powerAt(PAIRS_FOR_POWER_LIMIT) < wanted) {
    throw new RangeError(`power ${wanted} needs more than ${PAIRS_FOR_POWER_LIMIT} pairs at discordant share ${discordant} (delta ${o.delta}); raise delta or the discordant share`);
  }
  let low = 1;
  let high = PAIRS_FOR_POWER_LIMIT;
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    if (powerAt(mid) >= wanted) high = mid;
    else low = mid + 1;
  }
  return low;
}

/** An anytime-valid interval of the paired difference; field names are the wire names. */
export interface DifferenceConfidenceSequence {
  /** Point estimate P(A succeeds) - P(B succeeds) = (onlyA - onlyB) / n. */
  diff: number;
  ci: [number, number];
  /** 1 - alpha: the probability that the interval covers the difference at every n at once. */
  ci_level: number;
  interval_method: "discordant-product-cs";
}

/**
 * Confidence sequence for the paired difference Δ = P(A succeeds) - P(B succeeds), valid at any
 * stopping time (so after the sequential comparison stopped early, or whenever anyone looked).
 *
 * Δ = π_d (2θ - 1), with π_d the share of discordant pairs and θ A's share of them. The
 * beta-binomial mixture confidence sequence (confidenceSequence, sequential-threshold.ts) covers
 * π_d over all n pairs and θ over the discordant pairs, each at alpha/2 and each at every sample
 * size at once; the discordant pairs are an i.i.d. sequence of their own, so θ's sequence stays
 * valid at the random times they arrive. By the union bound both cover at every n with
 * probability >= 1 - alpha, and on that event Δ lies in the product of the two intervals
 * (interval arithmetic; π_d >= 0). Conservative: the union bound and the product each give away
 * some width. Assumes the pairs are independent and identically distributed.
 */
export function differenceConfidenceSequence(counts: PairedCounts, alpha: number): DifferenceConfidenceSequence {
  for (const [name, value] of Object.entries(counts)) {
    if (!Number.isInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer; got ${value}`);
  }
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1); got ${alpha}`);
  const n = counts.both + counts.onlyA + counts.onlyB + counts.neither;
  const discordantPairs = counts.onlyA + counts.onlyB;
  const [shareLow, shareHigh] = confidenceSequence(discordantPairs, n, alpha / 2);
  const [thetaLow, thetaHigh] = confidenceSequence(counts.onlyA, discordantPairs, alpha / 2);
  const [gLow, gHigh] = [2 * thetaLow - 1, 2 * thetaHigh - 1];
  const lower = gLow >= 0 ? shareLow * gLow : shareHigh * gLow;
  const upper = gHigh >= 0 ? shareHigh * gHigh : shareLow * gHigh;
  return {
    diff: n === 0 ? 0 : (counts.onlyA - counts.onlyB) / n,
    ci: [Math.max(-1, lower), Math.min(1, upper)],
    ci_level: 1 - alpha,
    interval_method: "discordant-product-cs",
  };
}
