/**
 * Headline priors fitted from the fleet (`headline_priors`), and the per-cell counts of the fleet's
 * completed runs they are fitted from. Only fitted priors are stored; the counts are read across
 * every account and never leave the coordinator (docs/statistics.md, "The prior learns from the fleet").
 */
import type { BetaParameters } from "../stats/beta-binomial-rate.js";
import type { Db } from "./database.js";
import { lockName } from "./named-lock.js";
import { fromCell } from "./episodes-repo.js";

/** One stored fit: the ICC prior of a robot model and environment class. */
export interface StoredHeadlinePrior {
  robotModel: string;
  environmentClass: string;
  family: "beta";
  parameters: BetaParameters;
  fittedOnRuns: number;
  fittedAt: string;
}

interface PriorRow {
  robot_model: string;
  environment_class: string;
  family: string;
  parameters: string;
  fitted_on_runs: number;
  fitted_at: string;
}

const priorOf = (row: PriorRow): StoredHeadlinePrior => ({
  robotModel: row.robot_model,
  environmentClass: row.environment_class,
  family: row.family as "beta",
  parameters: JSON.parse(row.parameters) as BetaParameters,
  fittedOnRuns: Number(row.fitted_on_runs),
  fittedAt: row.fitted_at,
});

/** The current prior of every robot model and environment class that has one, ordered by both. */
export async function listCurrentHeadlinePriors(db: Db): Promise<StoredHeadlinePrior[]> {
  const rows = await db.prepare(
    `SELECT robot_model, environment_class, family, parameters, fitted_on_runs, fitted_at FROM headline_priors
     WHERE superseded IS NULL ORDER BY robot_model, environment_class`,
  ).all() as PriorRow[];
  return rows.map(priorOf);
}

/**
 * Makes `prior` the current one of its robot model and environment class, superseding the one
 * before (at `prior.fittedAt`). Returns false, writing nothing, when the current one has the same
 * parameters and run count (a refit that learnt nothing new adds no row).
 */
export async function replaceHeadlinePrior(db: Db, prior: StoredHeadlinePrior): Promise<boolean> {
  const parameters = JSON.stringify({ a: prior.parameters.a, b: prior.parameters.b });
  return await db.transaction(async (db) => {
    // Several coordinators on one database refit on their own schedules: one at a time per key.
    await lockName(db, `headline-prior:${prior.robotModel}/${prior.environmentClass}`);
    const current = await db.prepare(
      `SELECT parameters, fitted_on_runs FROM headline_priors WHERE robot_model = ? AND environment_class = ? AND superseded IS NULL`,
    ).get(prior.robotModel, prior.environmentClass) as { parameters: string; fitted_on_runs: number } | undefined;
    if (current && current.parameters === parameters && Number(current.fitted_on_runs) === prior.fittedOnRuns) return false;
    await db.prepare(`UPDATE headline_priors SET superseded = ? WHERE robot_model = ? AND environment_class = ? AND superseded IS NULL`)
      .run(prior.fittedAt, prior.robotModel, prior.environmentClass);
    await db.prepare(
      `INSERT INTO headline_priors (robot_model, environment_class, family, parameters, fitted_on_runs, fitted_at, superseded)
       VALUES (?, ?, ?, ?, ?, ?, NULL)`,
    ).run(prior.robotModel, prior.environmentClass, prior.family, parameters, prior.fittedOnRuns, prior.fittedAt);
    return true;
  });
}

/** Finished episodes of one unit of one completed run on one cell. */
export interface FleetCellCount {
  runId: string;
  /** JSON of runs.plan and runs.units, so the caller can tell the unit's robot model and environment. */
  plan: string;
  units: string | null;
  unit: number;
  cell: string;
  /** Done episodes. */
  n: number;
  /** Successes whose /meta does not mention interventions: the policy's own for certain. */
  plainSuccesses: number;
  /** The /meta (parsed; null when unreadable) of the other successes, for the caller to judge by coordinator/runs/policy-outcome.ts. */
  metas: Array<Record<string, unknown> | null>;
}

const COMPLETED_DONE = `FROM runs r JOIN episodes e ON e.run_id = r.id
     WHERE r.status = 'completed' AND e.status = 'done' AND e.cell_id IS NOT NULL`;
const MENTIONS_INTERVENTIONS = `e.meta LIKE '%interventions%'`;

/**
 * Per-cell counts of every completed run of every account, newest runs first: done episodes grouped
 * by run, unit and cell. Successes whose /meta mentions interventions come back as their /meta, so
 * that whether a human helped is judged by the one rule (policy-outcome.ts), not by SQL.
 */
export async function listFleetCellCounts(db: Db): Promise<FleetCellCount[]> {
  const rows = await db.prepare(
    `SELECT r.id AS run_id, r.plan AS plan, r.units AS units, COALESCE(e.unit, 0) AS unit, e.cell_id AS cell, COUNT(*) AS n,
            SUM(CASE WHEN e.outcome = 'success' AND (e.meta IS NULL OR NOT (${MENTIONS_INTERVENTIONS})) THEN 1 ELSE 0 END) AS plain
     ${COMPLETED_DONE}
     GROUP BY r.id, r.completed, r.plan, r.units, COALESCE(e.unit, 0), e.cell_id
     ORDER BY r.completed DESC, r.id, unit, cell`,
  ).all() as Array<{ run_id: string; plan: string; units: string | null; unit: number; cell: string; n: number; plain: number }>;
  const metas = new Map<string, Array<Record<string, unknown> | null>>();
  const mentioned = await db.prepare(
    `SELECT r.id AS run_id, COALESCE(e.unit, 0) AS unit, e.cell_id AS cell, e.meta AS meta
     ${COMPLETED_DONE} AND e.outcome = 'success' AND ${MENTIONS_INTERVENTIONS}`,
  ).all() as Array<{ run_id: string; unit: number; cell: string; meta: string | null }>;
  for (const m of mentioned) {
    const key = `${m.run_id}#${Number(m.unit)}#${m.cell}`;
    metas.set(key, [...(metas.get(key) ?? []), fromCell(m.meta)]);
  }
  return rows.map((r) => ({
    runId: r.run_id, plan: r.plan, units: r.units, unit: Number(r.unit), cell: r.cell, n: Number(r.n), plainSuccesses: Number(r.plain),
    metas: metas.get(`${r.run_id}#${Number(r.unit)}#${r.cell}`) ?? [],
  }));
}
