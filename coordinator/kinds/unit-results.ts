/**
 * The spec's Result per unit, and the pooled Result of a multi-unit run.
 *
 * Each unit's Result is exactly the Result of kind `run` computed over that unit's episodes, with
 * its meters priced at the unit's own robot tier and environment class. The run's top-level
 * Result fields pool every episode of every unit (n, success_rate and ci95 over all finished
 * episodes; failure clusters and stages summed) and its meters and cost are the sums of the units':
 * it is what the run cost, what budgets watch, and what GET /v1/runs/{id}/result returns. The
 * inference a kind exists for (a difference, a gap, a regression) lives in the kind's own section.
 */
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import { sumMeters, unitMeterContext as meterContextOfUnit, type MeterContext } from "../runs/meters.js";
import { requestedConfidence } from "../runs/episodes-spec.js";
import { computeRunResult, type RunResult } from "../runs/result-summary.js";
import type { RunRecord } from "../store/runs-repo.js";
import type { KindResultContext } from "./kind.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import type { RunUnit } from "./units.js";

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

/** Rates of a unit's episodes (coordinator/runs/meters.ts, the one metering path). */
export function unitMeterContext(pins: FirmwarePins, unit: RunUnit, priority: string): MeterContext {
  return meterContextOfUnit(pins, unit, priority, `unit ${unit.key}`);
}

/** Results of every unit, in `runs.units` order. */
export function unitResults(ctx: Pick<KindResultContext, "pins" | "baseUrl">, run: Pick<RunRecord, "id" | "units" | "priority" | "request">, episodes: readonly EpisodeRecord[]): UnitResult[] {
  return run.units.map((unit, index) => ({
    key: unit.key,
    robot: unit.robot,
    environment: unit.environment,
    task: unit.task,
    policy: unit.policy,
    ...(unit.policy_name !== undefined ? { policy_name: unit.policy_name } : {}),
    ...(unit.role !== undefined ? { role: unit.role } : {}),
    result: computeRunResult(run.id, episodes.filter((e) => e.unit === index), unitMeterContext(ctx.pins, unit, run.priority), ctx.baseUrl, {
      requestedCi: requestedConfidence(run.request),
    }),
  }));
}

/**
 * The pooled Result over every unit: rates over all finished episodes, meters and cost summed over
 * the units (each priced at its own rates).
 */
export function pooledResult(ctx: Pick<KindResultContext, "pins" | "baseUrl">, run: Pick<RunRecord, "id" | "units" | "priority" | "request">, episodes: readonly EpisodeRecord[], units: readonly UnitResult[]): RunResult {
  const first = run.units[0];
  const pooled = computeRunResult(run.id, episodes, unitMeterContext(ctx.pins, first, run.priority), ctx.baseUrl, { requestedCi: requestedConfidence(run.request) });
  // The run's meters are the sum of its units' billing lines (the rounding rule in meters.ts).
  const total = sumMeters(units.map((u) => ({ robotHours: u.result.robot_hours, environmentHours: u.result.environment_hours, costUsd: u.result.cost_usd })));
  pooled.robot_hours = total.robotHours;
  pooled.environment_hours = total.environmentHours;
  pooled.cost_usd = total.costUsd;
  return pooled;
}

/** Successes and n of a unit's Result, for the two-sample statistics. */
export function countsOf(result: Pick<RunResult, "n" | "success_rate">): { k: number; n: number } {
  return { k: Math.round(result.success_rate * result.n), n: result.n };
}
