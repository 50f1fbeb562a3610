/**
 * The spec's Result per unit, and the headline Result of a multi-unit run.
 *
 * Each unit's Result is exactly the Result of kind `run` computed over that unit's episodes, with
 * its meters priced at the unit's own robot tier and environment class.
 *
 * The run's top-level n, success_rate and ci95 (and its failure clusters, stages and cells)
 * describe one population, which each kind names (`population` in the Result; docs/api.md lists
 * them): units that must not be pooled (two policies, two embodiments, soak and verify tiers,
 * scenarios and audits) never are. Its meters and cost are the sums of every unit's: what the run
 * cost, what budgets watch. The inference a kind exists for (a difference, a gap, a regression)
 * lives in the kind's own section.
 */
import { nextTurn } from "../async/next-turn.js";
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import { sumMeters, unitMeterContext as meterContextOfUnit, type MeterContext } from "../runs/meters.js";
import { requestedConfidence } from "../runs/episodes-spec.js";
import { interventionModeOf } from "../runs/interventions.js";
import { headlinePriorOfUnit } from "../runs/headline-priors.js";
import type { HeadlinePrior } from "../stats/beta-binomial-rate.js";
import type { RunCells } from "../stats/cell-regression.js";
import { computeRunResultInTurns, type RunResult } from "../runs/result-summary.js";
import type { RunRecord } from "../store/runs-repo.js";
import type { KindResultContext } from "./kind.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import type { RunUnit } from "../domain/units.js";

/** One element of `result.units`: the unit's pins and its Result. */
export interface UnitResult {
  key: string;
  robot: string;
  environment: string;
  task: string;
  policy: Record<string, unknown>;
  policy_name?: string;
  role?: string;
  result: RunResult;
}

/** What the top level of a multi-unit Result describes. */
export interface Population {
  /** Indexes of the units whose episodes it counts. */
  units: readonly number[];
  /** Which of those units' episodes (default all). */
  include?: (episode: EpisodeRecord) => boolean;
  /** The population in words, as the Result shows it. */
  description: string;
}

/** The Result's `population`: the units the top level counts and what it is. */
export interface PopulationView {
  units: string[];
  description: string;
}

type ResultRun = Pick<RunRecord, "id" | "units" | "priority" | "request" | "headlinePriors">;

/** Rates of a unit's episodes (coordinator/runs/meters.ts, the one metering path). */
export function unitMeterContext(pins: FirmwarePins, unit: RunUnit, priority: string): MeterContext {
  return meterContextOfUnit(pins, unit, priority, `unit ${unit.key}`);
}

/** The unit's headline prior is the one fixed when the run was submitted (coordinator/runs/headline-priors.ts). */
function resultOptions(run: ResultRun, unit: RunUnit | undefined) {
  return { requestedCi: requestedConfidence(run.request), interventions: interventionModeOf(run.request), headlinePrior: headlinePriorOfUnit(run, unit) };
}

/**
 * Results of every unit, in `runs.units` order, one unit per turn of the event loop: a unit's Result
 * holds a posterior interval (milliseconds each, tens on a cold process), and a suite's or a matrix's
 * units all at once held the loop that long times their number.
 */
export async function unitResults(ctx: Pick<KindResultContext, "pins" | "baseUrl">, run: ResultRun, episodes: readonly EpisodeRecord[]): Promise<UnitResult[]> {
  const results: UnitResult[] = [];
  for (const [index, unit] of run.units.entries()) {
    if (index > 0) await nextTurn();
    results.push({
      key: unit.key,
      robot: unit.robot,
      environment: unit.environment,
      task: unit.task,
      policy: unit.policy,
      ...(unit.policy_name !== undefined ? { policy_name: unit.policy_name } : {}),
      ...(unit.role !== undefined ? { role: unit.role } : {}),
      result: await computeRunResultInTurns(run.id, episodes.filter((e) => e.unit === index), unitMeterContext(ctx.pins, unit, run.priority), ctx.baseUrl, resultOptions(run, unit)),
    });
  }
  return results;
}

/**
 * The top level of a multi-unit Result: rates over `population`'s episodes only, meters and cost
 * summed over every unit (each priced at its own rates), and `population` saying what it is. In a
 * turn of its own, after the units'.
 */
export async function headlineResult(
  ctx: Pick<KindResultContext, "pins" | "baseUrl">, run: ResultRun, episodes: readonly EpisodeRecord[], units: readonly UnitResult[], population: Population,
): Promise<RunResult & { population: PopulationView }> {
  await nextTurn();
  const members = new Set(population.units);
  const counted = episodes.filter((e) => members.has(e.unit) && (population.include?.(e) ?? true));
  const first = run.units[population.units[0] ?? 0];
  const headline = await computeRunResultInTurns(run.id, counted, unitMeterContext(ctx.pins, first, run.priority), ctx.baseUrl, resultOptions(run, first));
  // The run's meters are the sum of its units' billing lines (the rounding rule in meters.ts).
  const total = sumMeters(units.map((u) => ({ robotHours: u.result.robot_hours, environmentHours: u.result.environment_hours, costUsd: u.result.cost_usd })));
  headline.robot_hours = total.robotHours;
  headline.environment_hours = total.environmentHours;
  headline.cost_usd = total.costUsd;
  return { ...headline, population: { units: population.units.map((i) => run.units[i].key), description: population.description } };
}

/** Successes and n of a unit's Result, for the two-sample statistics. */
/**
 * A unit's per-cell counts and recorded prior, for the regression rule over cells
 * (stats/cell-regression.ts); no cells for a result stored before results carried them.
 */
export function runCellsOf(result: Pick<RunResult, "n" | "success_rate"> & { cells?: { by_cell?: Array<{ successes: number; n: number }>; prior?: HeadlinePrior } }): RunCells {
  return { cells: (result.cells?.by_cell ?? []).map((c) => ({ k: c.successes, n: c.n })), prior: result.cells?.prior, pooled: countsOf(result) };
}

export function countsOf(result: Pick<RunResult, "n" | "success_rate">): { k: number; n: number } {
  return { k: Math.round(result.success_rate * result.n), n: result.n };
}
