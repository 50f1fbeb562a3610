/**
 * Keeping an endpoint policy to its `latency_budget_ms`. A reply later than the budget is a miss:
 * the step holds position instead of acting. The policy is persistently late, and the episode ends
 * with `policy_endpoint_timeout`, after `maxConsecutiveMisses` misses in a row (default 5) or when
 * more than `maxMissRatio` (default 0.2) of the last `windowSteps` steps (default 50) missed. The
 * ratio is judged only once the window is full, so two early misses do not end an episode.
 */

/** One step's reply came too late: hold this step. */
export class PolicyStepMissed extends Error {
  constructor(readonly latencyMs: number, readonly budgetMs: number) {
    super(Number.isFinite(latencyMs) ? `the policy endpoint answered in ${latencyMs.toFixed(1)} ms, over its latency_budget_ms of ${budgetMs}` : `the policy endpoint gave no usable reply within its latency_budget_ms of ${budgetMs}`);
  }
}

/** The endpoint keeps missing its budget: the episode ends with `policy_endpoint_timeout`. */
export class PolicyEndpointTimeout extends Error {}

export interface LatencyBudgetOptions {
  budgetMs: number;
  /** Misses in a row that end the episode (default 5). */
  maxConsecutiveMisses?: number;
  /** Steps in the sliding window (default 50). */
  windowSteps?: number;
  /** Miss share of a full window above which the episode ends (default 0.2). */
  maxMissRatio?: number;
}

export const LATENCY_BUDGET_DEFAULTS = { maxConsecutiveMisses: 5, windowSteps: 50, maxMissRatio: 0.2 } as const;

export type BudgetVerdict = "on_time" | "miss" | "timeout";

export class LatencyBudget {
  readonly budgetMs: number;
  private readonly maxConsecutive: number;
  private readonly windowSteps: number;
  private readonly maxRatio: number;
  private readonly window: boolean[] = [];
  private missesInWindow = 0;
  private consecutive = 0;
  private totalMisses = 0;
  private totalSteps = 0;

  constructor(options: LatencyBudgetOptions) {
    this.budgetMs = options.budgetMs;
    this.maxConsecutive = options.maxConsecutiveMisses ?? LATENCY_BUDGET_DEFAULTS.maxConsecutiveMisses;
    this.windowSteps = options.windowSteps ?? LATENCY_BUDGET_DEFAULTS.windowSteps;
    this.maxRatio = options.maxMissRatio ?? LATENCY_BUDGET_DEFAULTS.maxMissRatio;
    if (!(this.budgetMs > 0)) throw new RangeError(`latency_budget_ms must be a positive number; got ${this.budgetMs}`);
  }

  /** Records one step: `latencyMs` of the reply, or Infinity when none came in time. */
  record(latencyMs: number): BudgetVerdict {
    const missed = !(latencyMs <= this.budgetMs);
    this.totalSteps += 1;
    this.window.push(missed);
    if (missed) this.missesInWindow += 1;
    if (this.window.length > this.windowSteps && this.window.shift()) this.missesInWindow -= 1;
    if (!missed) {
      this.consecutive = 0;
      return "on_time";
    }
    this.consecutive += 1;
    this.totalMisses += 1;
    if (this.consecutive >= this.maxConsecutive) return "timeout";
    if (this.window.length >= this.windowSteps && this.missesInWindow / this.window.length > this.maxRatio) return "timeout";
    return "miss";
  }

  /** Why the last verdict was a timeout, in plain words. */
  describe(): string {
    return this.consecutive >= this.maxConsecutive
      ? `the policy endpoint missed its latency_budget_ms of ${this.budgetMs} ms ${this.consecutive} times in a row`
      : `the policy endpoint missed its latency_budget_ms of ${this.budgetMs} ms in ${this.missesInWindow} of the last ${this.window.length} steps (over ${Math.round(this.maxRatio * 100)}%)`;
  }

  stats(): { steps: number; misses: number } {
    return { steps: this.totalSteps, misses: this.totalMisses };
  }
}
