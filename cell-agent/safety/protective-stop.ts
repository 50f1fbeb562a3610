/**
 * Protective stops: the arm holds where it is, torque stays on. Unlike the e-stop they do not
 * latch the cell. Three causes:
 *  - missed control periods: the loop fell behind, so actions would be stale (`MissedPeriodMonitor`);
 *  - link loss or any other abort mid-episode: the episode ends holding (`holdPosition`);
 *  - an endpoint policy over its latency budget (see cell-agent/policy/latency-budget.ts).
 */
import type { MotorBus } from "../hardware/types.js";

/** Event names recorded on `/events`: `protective_stop:<cause>`. */
export type ProtectiveStopCause = "missed_periods" | "link_lost" | "policy_endpoint_timeout";

export function protectiveStopEvent(cause: ProtectiveStopCause): string {
  return `protective_stop:${cause}`;
}

/**
 * Holds the arm where it is: goals = the measured positions (given, or read now). Returns the
 * positions held.
 */
export async function holdPosition(motors: MotorBus, measuredRad?: readonly number[]): Promise<number[]> {
  const positions = measuredRad ? [...measuredRad] : (await motors.readState()).positionRad;
  await motors.writeGoalPositions(positions);
  return positions;
}

/** What the control loop does with the action of a step. */
export type StepDecision =
  /** On time: send the action. */
  | "act"
  /** Late by more than a period: drop the stale action, the previous goal stays. */
  | "skip"
  /** Late N times in a row: hold (goals = measured); `firstOfStreak` tells whether to record the event. */
  | "hold";

export interface MissedPeriodOptions {
  /** Consecutive late steps before the arm holds (default 3). */
  limit?: number;
}

export const DEFAULT_MISSED_PERIOD_LIMIT = 3;

/**
 * Counts control steps whose action was ready more than one period after the step's deadline.
 * Such an action is stale and is never sent; after `limit` in a row the arm holds position until a
 * step is on time again.
 */
export class MissedPeriodMonitor {
  private readonly limit: number;
  private streak = 0;
  private holding = false;

  constructor(options: MissedPeriodOptions = {}) {
    this.limit = options.limit ?? DEFAULT_MISSED_PERIOD_LIMIT;
    if (!(Number.isInteger(this.limit) && this.limit >= 1)) throw new RangeError(`missed-period limit must be a positive integer; got ${this.limit}`);
  }

  /**
   * `lateNs`: how long after the step's deadline (the start of the next period) the action was ready.
   * Returns the decision and whether this step starts a hold (record the event once per streak).
   */
  step(lateNs: bigint, periodNs: bigint): { decision: StepDecision; startsHold: boolean } {
    if (lateNs <= periodNs) {
      this.streak = 0;
      this.holding = false;
      return { decision: "act", startsHold: false };
    }
    this.streak += 1;
    if (this.streak < this.limit) return { decision: "skip", startsHold: false };
    const startsHold = !this.holding;
    this.holding = true;
    return { decision: "hold", startsHold };
  }

  get isHolding(): boolean {
    return this.holding;
  }
}
