/**
 * Assay's price list: what one robot-hour and one environment-hour cost, and the priority
 * multiplier. Rates are USD per hour of physical occupancy (episode plus reset time).
 */
import type { Tier } from "../../firmware-pins/pins.js";

export type EnvironmentClass = "bare" | "standard" | "replica" | "instrumented-replica";
export type Priority = "burst" | "standard" | "soak";

export interface PriceList {
  robotHourUsd: Record<Tier, number>;
  environmentHourUsd: Record<EnvironmentClass, number>;
  priorityMultiplier: Record<Priority, number>;
}

export const PRICE_LIST: PriceList = {
  robotHourUsd: { soak: 18.0, verify: 65.0 },
  environmentHourUsd: { bare: 2.0, standard: 4.0, replica: 12.0, "instrumented-replica": 20.0 },
  priorityMultiplier: { burst: 1.5, standard: 1.0, soak: 0.8 },
};
