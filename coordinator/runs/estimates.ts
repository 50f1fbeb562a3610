/**
 * Cost estimates before robot time is spent (quotes, the budget guard, threshold's monthly cap). An
 * episode is estimated at its plan's `max_duration_s` (the agent stops an episode there) plus
 * `RESET_ALLOWANCE_S` for the scene reset, priced at the rates of the episode's unit with the same
 * meters and rounding as a Result (coordinator/runs/meters.ts). So an estimate is an upper bound
 * for episodes that run once with resets within the allowance; interrupted attempts are metered on
 * top of it.
 */
import { computeMeters, costOfHoursUsd, type MeterContext, type Meters } from "./meters.js";
import { PRICE_LIST, type PriceList } from "./price-list.js";

/** Seconds allowed for the scene reset after an episode, in estimates. */
export const RESET_ALLOWANCE_S = 10;

/** Estimated robot seconds of one episode of a plan. */
export function episodeEstimateS(plan: { max_duration_s: number }): number {
  return plan.max_duration_s + RESET_ALLOWANCE_S;
}

/** Meters and cost of `seconds` of occupancy as one billing line, with a Result's rounding. */
export function priceSeconds(seconds: number, context: MeterContext, prices: PriceList = PRICE_LIST): Meters {
  return computeMeters([{ status: "done", durationS: seconds, resetS: 0, interruptions: [] }], context, prices);
}

/** Unrounded cost of `seconds` of occupancy (the guard compares sums of these with a cap). */
export function costOfSecondsUsd(seconds: number, context: MeterContext, prices: PriceList = PRICE_LIST): number {
  return costOfHoursUsd(seconds / 3600, seconds / 3600, context, prices);
}

/** Unrounded estimate of one episode of a plan at its unit's rates. */
export function episodeEstimateUsd(plan: { max_duration_s: number }, context: MeterContext, prices: PriceList = PRICE_LIST): number {
  return costOfSecondsUsd(episodeEstimateS(plan), context, prices);
}
