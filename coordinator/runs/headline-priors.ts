/**
 * The headline's ICC prior per robot model and environment class, learnt from the fleet
 * (docs/statistics.md, "The prior learns from the fleet").
 *
 * - Refit (`refitHeadlinePriors`, the periodic job `startHeadlinePriorRefit` that server.ts starts):
 *   the per-cell counts of every completed run of every account, grouped by each unit's robot model
 *   and environment class, each unit of a run one sample; fitted by stats/icc-prior-fit.ts and
 *   stored when it changed. Only the fitted prior is stored or shown, never a run's counts.
 * - Fixed at submission (`headlinePriorsAtSubmission`): a run records the priors in force for its
 *   units when it is submitted, and every Result of it, partial or final, uses those
 *   (`headlinePriorOfUnit`), so a Result never changes because the fleet learnt something since.
 */
import type { EnvironmentClass } from "../catalog/environments.js";
import type { RunUnit } from "../domain/units.js";
import { DEFAULT_HEADLINE_PRIOR, type HeadlinePrior } from "../stats/beta-binomial-rate.js";
import { fitIccPriorInSlices, type RunCells } from "../stats/icc-prior-fit.js";
import type { Db } from "../store/database.js";
import { listCurrentHeadlinePriors, listFleetCellCounts, replaceHeadlinePrior, type StoredHeadlinePrior } from "../store/headline-priors-repo.js";
import type { RunHeadlinePriors, RunPlan, RunRecord } from "../store/runs-repo.js";
import { environmentClassOf } from "./meters.js";
import { policySucceeded } from "./policy-outcome.js";


/** Default interval of the refit job: hourly (and once at start-up). */
export const DEFAULT_PRIOR_REFIT_MS = 3_600_000;

/**
 * Units (run x unit) a fit reads at most per robot model and environment class: the newest. A fit
 * of 500 takes about half a second of one core (on the event loop, once per refit and group).
 */
export const MAX_FIT_UNITS = 500;

/** The key a run's `headline_priors` and the fit group by. */
export function priorKey(robotModel: string, environmentClass: string): string {
  return `${robotModel}/${environmentClass}`;
}

/** The prior of a stored fit, as Results record it. */
export function headlinePriorOf(stored: StoredHeadlinePrior): HeadlinePrior {
  return {
    rate: DEFAULT_HEADLINE_PRIOR.rate,
    icc: { family: stored.family, parameters: stored.parameters },
    source: "fleet",
    fitted_on_runs: stored.fittedOnRuns,
    fitted_at: stored.fittedAt,
  };
}

/** The current priors: one per robot model and environment class that has a fit, and the default for the rest. */
export async function currentHeadlinePriors(db: Db): Promise<Array<{ robot_model: string; environment_class: string; prior: HeadlinePrior }>> {
  return (await listCurrentHeadlinePriors(db)).map((p) => ({ robot_model: p.robotModel, environment_class: p.environmentClass, prior: headlinePriorOf(p) }));
}

function unitKey(unit: Pick<RunUnit, "model" | "environment">): string | undefined {
  const environmentClass = environmentClassOf(unit.environment);
  return environmentClass === undefined ? undefined : priorKey(unit.model, environmentClass);
}

/** The priors in force now for the given units, to record on a run at submission. */
export async function headlinePriorsAtSubmission(db: Db, units: ReadonlyArray<Pick<RunUnit, "model" | "environment">>): Promise<RunHeadlinePriors> {
  const fitted = new Map((await listCurrentHeadlinePriors(db)).map((p) => [priorKey(p.robotModel, p.environmentClass), headlinePriorOf(p)]));
  const priors: RunHeadlinePriors = {};
  for (const unit of units) {
    const key = unitKey(unit);
    if (key !== undefined) priors[key] = fitted.get(key) ?? DEFAULT_HEADLINE_PRIOR;
  }
  return priors;
}

/** The prior a Result of `unit` of `run` uses: the one fixed at submission; the default for runs from before. */
export function headlinePriorOfUnit(run: Pick<RunRecord, "headlinePriors">, unit: Pick<RunUnit, "model" | "environment"> | undefined): HeadlinePrior {
  const key = unit && unitKey(unit);
  return (key !== undefined && run.headlinePriors?.[key]) || DEFAULT_HEADLINE_PRIOR;
}

/** The fleet's per-cell counts grouped by robot model and environment class, newest runs first, at most MAX_FIT_UNITS each. */
export async function fleetSamples(db: Db): Promise<Map<string, { robotModel: string; environmentClass: EnvironmentClass; runs: RunCells[] }>> {
  const byUnit = new Map<string, { group: string; cells: Array<{ k: number; n: number }> }>();
  const groups = new Map<string, { robotModel: string; environmentClass: EnvironmentClass; runs: RunCells[] }>();
  for (const row of await listFleetCellCounts(db)) {
    const id = `${row.runId}#${row.unit}`;
    let entry = byUnit.get(id);
    if (!entry) {
      const plan = JSON.parse(row.plan) as RunPlan;
      const units = row.units ? (JSON.parse(row.units) as RunUnit[]) : null;
      const unit = units ? units[row.unit] : { model: plan.model, environment: plan.environment };
      const environmentClass = unit && environmentClassOf(unit.environment);
      if (!unit || environmentClass === undefined) continue;
      const group = priorKey(unit.model, environmentClass);
      if (!groups.has(group)) groups.set(group, { robotModel: unit.model, environmentClass, runs: [] });
      entry = { group, cells: [] };
      byUnit.set(id, entry);
      const runs = groups.get(group)!.runs;
      if (runs.length < MAX_FIT_UNITS) runs.push(entry.cells);
    }
    // The policy's own successes (policy-outcome.ts): a success with a hand in the scene is not one.
    const helped = row.metas.filter((meta) => !policySucceeded({ outcome: "success", meta })).length;
    entry.cells.push({ k: row.plainSuccesses + row.metas.length - helped, n: row.n });
  }
  return groups;
}

/**
 * Fits every robot model and environment class the fleet has completed runs of, and stores each fit
 * that has enough runs and differs from the current one. Returns the keys whose prior changed.
 * The fit gives the event loop a turn every few ms (fitIccPriorInSlices), so other requests are served meanwhile.
 */
export async function refitHeadlinePriors(db: Db, now: Date): Promise<string[]> {
  const changed: string[] = [];
  const fittedAt = now.toISOString();
  for (const [key, group] of await fleetSamples(db)) {
    const prior = await fitIccPriorInSlices(group.runs, { fittedAt });
    if (prior.source !== "fleet" || prior.fitted_on_runs === null) continue;
    const stored = await replaceHeadlinePrior(db, {
      robotModel: group.robotModel, environmentClass: group.environmentClass, family: prior.icc.family,
      parameters: prior.icc.parameters, fittedOnRuns: prior.fitted_on_runs, fittedAt,
    });
    if (stored) changed.push(key);
  }
  return changed;
}

/** Options of the refit job. */
export interface HeadlinePriorRefitOptions {
  db: Db;
  /** How often to refit; DEFAULT_PRIOR_REFIT_MS (hourly) unless given. It also runs once right after start. */
  intervalMs?: number;
  now?: () => Date;
  logger?: { error(message: string): void };
}

/** Starts the periodic refit (never on the request path); returns a stop that waits for a refit under way. */
export function startHeadlinePriorRefit(options: HeadlinePriorRefitOptions): () => Promise<void> {
  const now = options.now ?? (() => new Date());
  let running: Promise<void> | undefined;
  let stopped = false;
  const run = () => {
    if (stopped) return;
    running ??= refitHeadlinePriors(options.db, now())
      .then(() => undefined, (error: unknown) => (options.logger ?? console).error(`headline prior refit failed: ${(error as Error).stack ?? error}`))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(run, options.intervalMs ?? DEFAULT_PRIOR_REFIT_MS);
  timer.unref();
  const first = setImmediate(run);
  return async () => {
    stopped = true;
    clearImmediate(first);
    clearInterval(timer);
    await running;
  };
}
