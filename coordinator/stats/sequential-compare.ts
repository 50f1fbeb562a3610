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
 */

import type { PairedCounts } from "./paired-difference.js";

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
        // A closed SPRT is frozen at its bottom boundary (Sobel & Wald 1949).
        if (!aClosed) logA += a ? win : loss;
        if (!bClosed) logB += a ? loss : win;
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
