/**
 * The two meters and the money they cost: the one metering path. The Result (per unit and pooled),
 * usage, the budget guard and quotes all price through this module.
 *
 * - robot_hours: physical time the robot was occupied: for every finished episode its
 *   duration_s + reset_s, plus the duration_s recorded on every interrupted attempt (those
 *   occupied the robot too), over 3600.
 * - environment_hours: the same occupancy attributed to the environment's class. One cell sits in
 *   one environment, so today the figure equals robot_hours; it is computed separately because
 *   shared environments (several robots in one instrumented volume) will make them diverge.
 * - cost_usd = (robot_hours x tier rate + environment_hours x class rate) x priority multiplier.
 *
 * Rates of an episode come from its unit (`runMeterContexts`): the tier of the unit's robot model,
 * the class of the unit's environment, the run's priority. Kind `run` has one implicit unit, its plan.
 *
 * Rounding rule (one rule, applied by `computeMeters` and `sumMeters` only): a billing line is the
 * episodes of one unit of one run (in usage: those metered in one month). A line's hours are rounded
 * to 6 decimals and its cost to cents from the rounded hours, so a customer can reproduce it from
 * the figures shown. Every total (a run's Result, a month's usage and its per-tier and per-class
 * splits) is the sum of its lines, rounded again to the same precision, which only removes
 * floating-point noise. So totals add up exactly from the lines they are made of.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FirmwarePins, Tier } from "../../firmware-pins/pins.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { PRICE_LIST, type EnvironmentClass, type Priority, type PriceList } from "./price-list.js";

/** What the meters read from an episode. */
export type MeteredEpisode = Pick<EpisodeRecord, "status" | "durationS" | "resetS" | "interruptions">;

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

/** Seconds a single episode kept the robot busy: the finished attempt plus interrupted ones. */
function occupiedSeconds(episode: MeteredEpisode): number {
  let seconds = 0;
  // An unlabelled episode ran to its end (only a person's label is missing): its robot time counts.
  if (episode.status === "done" || episode.status === "unlabelled") seconds += (episode.durationS ?? 0) + (episode.resetS ?? 0);
  for (const entry of episode.interruptions) seconds += Number.isFinite(entry.duration_s) ? entry.duration_s : 0;
  return seconds;
}

/** Seconds an episode adds to the robot meter. */
export function robotSeconds(episode: MeteredEpisode): number {
  return occupiedSeconds(episode);
}

/** Seconds an episode adds to the environment meter; one environment per cell, see above. */
export function environmentSeconds(episode: MeteredEpisode): number {
  return occupiedSeconds(episode);
}

/** Robot-hours of a run's episodes (unrounded). */
export function robotHours(episodes: readonly MeteredEpisode[]): number {
  return episodes.reduce((sum, e) => sum + robotSeconds(e), 0) / 3600;
}

/** Environment-hours of a run's episodes (unrounded). */
export function environmentHours(episodes: readonly MeteredEpisode[]): number {
  return episodes.reduce((sum, e) => sum + environmentSeconds(e), 0) / 3600;
}

/** Unrounded cost of occupancy under `context`: the price formula, here and nowhere else. */
export function costOfHoursUsd(robotHours: number, environmentHours: number, context: MeterContext, prices: PriceList = PRICE_LIST): number {
  const hourly = robotHours * prices.robotHourUsd[context.tier] + environmentHours * prices.environmentHourUsd[context.environmentClass];
  return hourly * prices.priorityMultiplier[context.priority];
}

/** Both meters of one billing line (episodes under one context), rounded, and their cost under `prices`. */
export function computeMeters(episodes: readonly MeteredEpisode[], context: MeterContext, prices: PriceList = PRICE_LIST): Meters {
  return metersOfHours(robotHours(episodes), environmentHours(episodes), context, prices);
}

/** A billing line from its hours, already rounded (`roundHours`): the cost from the rounded hours (the rule above). */
export function metersOfRoundedHours(robot: number, environment: number, context: MeterContext, prices: PriceList = PRICE_LIST): Meters {
  return { robotHours: robot, environmentHours: environment, costUsd: roundCents(costOfHoursUsd(robot, environment, context, prices)) };
}

/** A billing line from its unrounded hours: each rounded, and the cost from the rounded hours (the rule above). */
export function metersOfHours(robotHoursUnrounded: number, environmentHoursUnrounded: number, context: MeterContext, prices: PriceList = PRICE_LIST): Meters {
  return metersOfRoundedHours(roundHours(robotHoursUnrounded), roundHours(environmentHoursUnrounded), context, prices);
}

/** A sum of seconds some engine added in its own order, with what bounds its rounding error. */
export interface SecondsSum {
  seconds: number;
  /** The sum of the terms' absolute values. */
  absSeconds: number;
  /** How many terms were added. */
  terms: number;
}

/** 2^-52: twice the unit roundoff of a double, for a bound with room to spare. */
const ROUNDOFF = 2 ** -52;

/**
 * The values `roundHours` can give for the hours of these seconds added in any order: the meters add
 * an episode's seconds in index order, an engine's SUM in its own, and two sums of the same terms differ
 * by at most about `terms` roundoffs of their absolute sum each (Higham, Accuracy and Stability of
 * Numerical Algorithms, 4.2). `low` and `high` are equal unless the sum lies that near a half of 1e-6 h
 * (durations in milliseconds land on one in about 1 sum in 18), where the order of addition decides.
 */
export function roundedHoursBetween(sum: SecondsSum): { low: number; high: number } {
  const scaled = (sum.seconds / 3600) * 1e6;
  const errorBound = 4 * (sum.terms + 4) * ROUNDOFF * (sum.absSeconds / 3600) * 1e6;
  return { low: Math.round(scaled - errorBound) / 1e6, high: Math.round(scaled + errorBound) / 1e6 };
}

/**
 * The billing line of these seconds under `context`, as `computeMeters` meters them in index order: between
 * `low` and `high` (the cost grows with the hours), which are the line itself unless the sum lies on a
 * rounding boundary (`roundedHoursBetween`).
 */
export function lineBetween(sum: SecondsSum, context: MeterContext, prices: PriceList = PRICE_LIST): { low: Meters; high: Meters } {
  const hours = roundedHoursBetween(sum);
  const low = metersOfRoundedHours(hours.low, hours.low, context, prices);
  return { low, high: hours.high === hours.low ? low : metersOfRoundedHours(hours.high, hours.high, context, prices) };
}

/** A total made of billing lines: each figure summed and rounded again to the line precision. */
export function sumMeters(lines: readonly Meters[]): Meters {
  return {
    robotHours: roundHours(lines.reduce((sum, m) => sum + m.robotHours, 0)),
    environmentHours: roundHours(lines.reduce((sum, m) => sum + m.environmentHours, 0)),
    costUsd: roundCents(lines.reduce((sum, m) => sum + m.costUsd, 0)),
  };
}

/** What the rates of a unit depend on: its robot model and environment pin. */
export interface MeteredUnit {
  model: string;
  environment: string;
}

/** The run fields metering reads: its units (kind `run`: its one unit, from its plan) and priority. */
export interface MeteredRun {
  id: string;
  priority: string;
  units: ReadonlyArray<MeteredUnit & { key: string }>;
}

/** Rates of one unit: tier of its robot model, class of its environment, the run's priority. */
export function unitMeterContext(pins: FirmwarePins, unit: MeteredUnit, priority: string, where: string): MeterContext {
  const tier = pins.models.find((m) => m.id === unit.model)?.tier as Tier | undefined;
  if (!tier) throw new Error(`${where}: robot model "${unit.model}" is not in the firmware-pins catalog`);
  const environmentClass = environmentClassOf(unit.environment);
  if (!environmentClass) throw new Error(`${where}: environment "${unit.environment}" is not in coordinator/catalog/environments.json`);
  return { tier, environmentClass, priority: priority as Priority };
}

/** Rates of every unit of a run, by unit index. */
export function runMeterContexts(pins: FirmwarePins, run: MeteredRun): MeterContext[] {
  return run.units.map((unit) => unitMeterContext(pins, unit, run.priority, `run ${run.id} unit ${unit.key}`));
}

/** The unit an episode is metered under (kind `run`: 0). */
export function unitIndexOf(episode: { unit?: number | null }): number {
  return episode.unit ?? 0;
}

/** One billing line: a unit's episodes and what they cost at the unit's rates. */
export interface MeterLine {
  unit: number;
  context: MeterContext;
  meters: Meters;
}

/**
 * THE metering of a run: every episode priced at its own unit's rates, one billing line per unit
 * (in unit order, units without episodes included at zero), and their total.
 */
export function meterByUnit(
  contexts: readonly MeterContext[], episodes: ReadonlyArray<MeteredEpisode & { unit?: number | null }>, prices: PriceList = PRICE_LIST,
): { lines: MeterLine[]; total: Meters } {
  const lines = contexts.map((context, unit) => ({ unit, context, meters: computeMeters(episodes.filter((e) => unitIndexOf(e) === unit), context, prices) }));
  return { lines, total: sumMeters(lines.map((l) => l.meters)) };
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
