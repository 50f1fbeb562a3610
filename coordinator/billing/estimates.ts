/**
 * Cost estimates before robot time is spent (quotes, the scheduler's budget gate). An episode is
 * estimated at its plan's `max_duration_s` (the agent stops an episode there) plus
 * `RESET_ALLOWANCE_S` for the scene reset, priced with the same meters and rounding as a Result.
 * So an estimate is an upper bound for episodes that run once with resets within the allowance;
 * interrupted attempts are metered on top of it.
 */
import { computeMeters, type MeterContext, type Meters } from "../runs/meters.js";
import { PRICE_LIST, type PriceList } from "../runs/price-list.js";

/** Seconds allowed for the scene reset after an episode, in estimates. */
export const RESET_ALLOWANCE_S = 10;

/** Estimated robot seconds of one episode of a plan. */
export function episodeEstimateS(plan: { max_duration_s: number }): number {
  return plan.max_duration_s + RESET_ALLOWANCE_S;
}

/** Meters and cost of `seconds` of occupancy, with a Result's rounding. */
export function priceSeconds(seconds: number, context: MeterContext, prices: PriceList = PRICE_LIST): Meters {
  return computeMeters([{ status: "done", duration_s: seconds, reset_s: 0, interruptions: "[]" }], context, prices);
}

/** Unrounded cost of `seconds` of occupancy (the scheduler compares sums of these with a cap). */
export function costOfSecondsUsd(seconds: number, context: MeterContext, prices: PriceList = PRICE_LIST): number {
  const hours = seconds / 3600;
  return (hours * prices.robotHourUsd[context.tier] + hours * prices.environmentHourUsd[context.environmentClass]) * prices.priorityMultiplier[context.priority];
}
