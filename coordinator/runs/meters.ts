/**
 * The two meters and the money they cost.
 *
 * - robot_hours: physical time the robot was occupied: for every finished episode its
 *   duration_s + reset_s, plus the duration_s recorded on every interrupted attempt (those
 *   occupied the robot too), over 3600.
 * - environment_hours: the same occupancy attributed to the environment's class. One cell sits in
 *   one environment, so today the figure equals robot_hours; it is computed separately because
 *   shared environments (several robots in one instrumented volume) will make them diverge.
 * - cost_usd = (robot_hours x tier rate + environment_hours x class rate) x priority multiplier.
 *
 * Rounding: hours to 6 decimals, money to cents; cost is computed from the rounded hours so a
 * customer can reproduce it from the figures shown.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Tier } from "../../firmware-pins/pins.js";
import type { EpisodeRow, Interruption } from "../store/episodes-repo.js";
import { PRICE_LIST, type EnvironmentClass, type Priority, type PriceList } from "./price-list.js";

/** What the meters read from an episode row. */
export type MeteredEpisode = Pick<EpisodeRow, "status" | "duration_s" | "reset_s" | "interruptions">;

export interface MeterContext {
  tier: Tier;
  environmentClass: EnvironmentClass;
  priority: Priority;
}

export interface Meters {
  robotHours: number;
  environmentHours: number;
  costUsd: number;
}

export function roundHours(hours: number): number {
  return Math.round(hours * 1e6) / 1e6;
}

export function roundCents(usd: number): number {
  return Math.round((usd + Number.EPSILON) * 100) / 100;
}

/** Seconds a single episode row kept the robot busy: the finished attempt plus interrupted ones. */
function occupiedSeconds(episode: MeteredEpisode): number {
  let seconds = 0;
  if (episode.status === "done") seconds += (episode.duration_s ?? 0) + (episode.reset_s ?? 0);
  const interruptions = JSON.parse(episode.interruptions || "[]") as Interruption[];
  for (const entry of interruptions) seconds += Number.isFinite(entry.duration_s) ? entry.duration_s : 0;
  return seconds;
}

/** Robot-hours of a run's episodes (unrounded). */
export function robotHours(episodes: readonly MeteredEpisode[]): number {
  return episodes.reduce((sum, e) => sum + occupiedSeconds(e), 0) / 3600;
}

/** Environment-hours of a run's episodes (unrounded); one environment per cell, see above. */
export function environmentHours(episodes: readonly MeteredEpisode[]): number {
  return episodes.reduce((sum, e) => sum + occupiedSeconds(e), 0) / 3600;
}

/** Both meters, rounded, and their cost under `prices`. */
export function computeMeters(episodes: readonly MeteredEpisode[], context: MeterContext, prices: PriceList = PRICE_LIST): Meters {
  const robot = roundHours(robotHours(episodes));
  const environment = roundHours(environmentHours(episodes));
  const hourly = robot * prices.robotHourUsd[context.tier] + environment * prices.environmentHourUsd[context.environmentClass];
  return { robotHours: robot, environmentHours: environment, costUsd: roundCents(hourly * prices.priorityMultiplier[context.priority]) };
}

interface CatalogEnvironment {
  name: string;
  version: number;
  class: EnvironmentClass;
}

const catalogPath = join(dirname(fileURLToPath(import.meta.url)), "..", "catalog", "environments.json");
let environmentCatalog: CatalogEnvironment[] | undefined;

/**
 * Class of an environment pin (`<name>@<version>`, or a bare name for its newest version) from
 * coordinator/catalog/environments.json; undefined when the catalogue does not list it.
 */
export function environmentClassOf(pin: string): EnvironmentClass | undefined {
  environmentCatalog ??= (JSON.parse(readFileSync(catalogPath, "utf8")) as { environments: CatalogEnvironment[] }).environments;
  const [name, version] = pin.split("@");
  const matches = environmentCatalog.filter((e) => e.name === name && (version === undefined || String(e.version) === version));
  return matches.sort((a, b) => b.version - a.version)[0]?.class;
}
