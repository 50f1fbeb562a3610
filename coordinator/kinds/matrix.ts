/**
 * Kind `matrix`: one policy and task over robots x environments.
 *
 * Plan. Every combination of `robots` and `environments` is a unit (a "cell" of the matrix) and
 * must exist in the fleet (a robot pin installed in that environment), or the submission is 422
 * `environment_unavailable` naming the missing combination. Each unit runs `episodes_per_cell`
 * episodes; episode i of every unit uses the same seed, so the cells see the same initial
 * conditions (common random numbers make cells comparable). Episodes are interleaved across units.
 *
 * Result. `units` holds one Result per cell. `regressions` compares every cell with the same cell
 * (same robot pin and environment) of the account's most recent earlier completed matrix run on
 * the same task revision (`baseline_run_id`): `detectRegressions` (one-sided Fisher exact test per
 * cell, margin 0) with Holm's adjustment over the compared cells, so the chance that a run flags
 * any cell when none regressed stays <= alpha 0.05. A regression is listed in the result and
 * announced once per run as webhook `regression.detected`.
 */
import { detectCellRegressions } from "../stats/cell-regression.js";
import { parseEpisodesSpec } from "../runs/episodes-spec.js";
import { contract } from "../runs/field-checks.js";
import { type ValidatedRun, type ValidateRunContext } from "../runs/run-request.js";
import type { Db } from "../store/database.js";
import { episodeSeed, type NewEpisode, type RunRecord, getRun } from "../store/runs-repo.js";
import { enqueueEvent } from "../webhooks/outbox.js";
import { resolveTask } from "../runs/pin-resolution.js";
import { validateCommon } from "../runs/common-fields.js";
import { resolveUnit, stringList, validatedKindRun, type ResolvedUnit } from "./kind-common.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import type { KindEndedContext, KindResultContext, RunKind } from "./kind.js";
import { headlineResult, runCellsOf, unitResults, type UnitResult } from "./unit-results.js";
import { z } from "zod";
import { COMMON_RUN_FIELDS, EpisodesSpec, Policy, environmentRef, robotPin, taskRef } from "../runs/run-schemas.js";
import { ENVIRONMENTS_MAX, ROBOTS_MAX, tooMany } from "../json/field-bounds.js";
import { findPriorCompletedMatrixId } from "../store/run-queries-repo.js";


/** Family-wise significance, margin and multiplicity adjustment of the per-cell regression rule. */
export const MATRIX_REGRESSION = { alpha: 0.05 } as const;

async function planMatrix(body: Record<string, unknown>, ctx: ValidateRunContext): Promise<ValidatedRun> {
  const robots = stringList("robots", body.robots, "firmware_pin_unavailable");
  const environments = stringList("environments", body.environments, "environment_unavailable");
  const task = await resolveTask(ctx, body.task);
  const resolved: ResolvedUnit[] = [];
  for (const robot of robots) {
    for (const environment of environments) resolved.push(await resolveUnit(ctx, { robot, environment, task, policy: body.policy, where: `cell ${robot} x ${environment}` }));
  }
  const keys = resolved.map((r) => r.unit.key);
  const duplicate = keys.find((k, i) => keys.indexOf(k) !== i);
  if (duplicate) contract(`robots x environments names cell ${duplicate} twice (after resolving @latest); list each pin once`);
  const perCell = parseEpisodesSpec(body.episodes_per_cell).count;
  const common = validateCommon(body, ctx, resolved[0].environment);
  const episodes: NewEpisode[] = [];
  for (let i = 0; i < perCell; i++) {
    resolved.forEach((_, unit) => episodes.push({ unit, seed: episodeSeed(common.seed, i), assign: null }));
  }
  return validatedKindRun({ kind: "matrix", body, units: resolved.map((r) => r.unit), episodes, seed: common.seed, priority: common.priority });
}

interface PriorMatrix {
  id: string;
  completed: string;
  units: UnitResult[];
}

/** The account's most recent completed matrix before `run` on the same task revision. */
async function priorMatrix(db: Db, run: RunRecord): Promise<PriorMatrix | undefined> {
  const task = run.resolvedPins.task;
  const priorId = await findPriorCompletedMatrixId(db, { accountId: run.accountId, exceptRunId: run.id, createdBefore: run.created, task });
  const prior = priorId === undefined ? undefined : await getRun(db, priorId);
  if (!prior) return undefined;
  return { id: prior.id, completed: prior.completed!, units: (prior.result?.units as UnitResult[] | undefined) ?? [] };
}

async function matrixResult(ctx: KindResultContext, run: RunRecord, episodes: readonly EpisodeRecord[]): Promise<Record<string, unknown>> {
  const units = await unitResults(ctx, run, episodes);
  const prior = await priorMatrix(ctx.db, run);
  const pairs = units.flatMap((unit) => {
    const before = prior?.units.find((u) => u.robot === unit.robot && u.environment === unit.environment);
    return before && before.result.n > 0 && unit.result.n > 0 ? [{ unit, before }] : [];
  });
  // One family per run: every compared cell, Holm-adjusted together.
  const verdicts = detectCellRegressions(pairs.map(({ unit, before }) => ({ prior: runCellsOf(before.result), current: runCellsOf(unit.result) })), MATRIX_REGRESSION);
  const compared = pairs.map(({ unit, before }, i) => {
    const verdict = verdicts[i];
    return {
      unit: unit.key, robot: unit.robot, environment: unit.environment,
      prior: { n: before.result.n, success_rate: before.result.success_rate },
      current: { n: unit.result.n, success_rate: unit.result.success_rate },
      regressed: verdict.regressed, diff: verdict.diff, ci: verdict.ci, p_value: verdict.p_value, p_adjusted: verdict.p_adjusted,
      adjustment: verdict.adjustment, family_size: verdicts.length, rule: verdict.rule, alpha: verdict.alpha,
    };
  });
  const regressions = compared.filter((entry) => entry.regressed);
  return {
    ...(await headlineResult(ctx, run, episodes, units, {
      units: [0],
      description: `cell ${units[0].key}, the first robot in the first environment: a matrix has one rate per cell (units[]) and pools none`,
    })),
    units,
    baseline_run_id: prior?.id ?? null,
    cells_compared: compared,
    regressions,
  };
}

/** Announces the regressions of a completed matrix run (one `regression.detected` event); a run that did not complete announces none. */
async function matrixEnded(ctx: KindEndedContext, run: RunRecord, result: Record<string, unknown>): Promise<void> {
  if (ctx.status !== "completed") return;
  const { tx, now } = ctx;
  const regressions = result.regressions as unknown[] | undefined;
  if (!regressions || regressions.length === 0) return;
  await enqueueEvent(tx, run.accountId, "regression.detected", {
    source: "matrix", run_id: run.id, baseline_run_id: result.baseline_run_id, task: run.resolvedPins.task, regressions,
  }, now);
}

/** The body of a POST /v1/runs of this kind: its shape, declared once (checked before `plan`). */
const schema = z.strictObject({
  kind: z.literal("matrix"), robots: z.array(robotPin).min(1).max(ROBOTS_MAX, tooMany(ROBOTS_MAX)), environments: z.array(environmentRef).min(1).max(ENVIRONMENTS_MAX, tooMany(ENVIRONMENTS_MAX)), task: taskRef, policy: Policy,
  episodes_per_cell: EpisodesSpec, ...COMMON_RUN_FIELDS,
}).describe("kind matrix: every robot pin x environment cell");

export const matrixKind: RunKind = {
  name: "matrix",
  traits: { hasUnits: true, comparesPolicies: false, leaderboard: null, paperRows: "units", unitHeading: "Cell (robot, environment)", acceptsCheckpoints: false, replayable: false },
  schema, plan: planMatrix, result: matrixResult, onEnded: matrixEnded,
};
