/**
 * The procedure Assay must NOT use for a threshold decision, kept to show why: re-checking a fixed-n
 * Wilson interval after every episode. scripts/bench/threshold-false-pass.ts measures its
 * false-pass rate beside the sequential test's (sequential-threshold.ts).
 */

import type { ThresholdDecision, ThresholdProcedure, ThresholdState, ThresholdStopReason } from "./sequential-threshold.js";
import { wilsonInterval } from "./wilson.js";

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
 * (scripts/bench/threshold-false-pass.ts measures it). Reaching maxEpisodes
 * undecided is "inconclusive", as in the sequential test.
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
      else if (n >= maxEpisodes) [decision, reason] = ["inconclusive", "max_episodes"];
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
