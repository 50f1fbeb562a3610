/**
 * Kind `transfer`: how a policy trained on one embodiment (`source`) does on another (`target`).
 *
 * Plan. The policy runs `episodes` episodes on the target pin in `environment` (or
 * `target.environment`). The source embodiment's figure is the account's most recent completed
 * run of kind `run` (pilots excluded) with the same source pin, environment, task revision and
 * policy identity (container image, checkpoint `hf`, or endpoint URL), chosen at submission and
 * recorded in `runs.plan`. When there is none, the run measures the source as well: a second unit
 * (role `source`) with the same number of episodes and the same seeds as the target.
 *
 * Result. `units` (target, and source when measured here) and `gap`: target minus source success
 * rate, and where the source figure came from (`source.run_id`, this run's id when measured here).
 * Target and source run on different robots, so on different cells: the gap's `ci` is the
 * beta-binomial posterior difference of the two model-level rates, each side on its own cells
 * (`claim: "model"`), with the claim about these cells beside it under `these_cells` (the seed-paired
 * interval when measured here, else Newcombe's). A source run recorded before per-cell counts
 * were kept gives Newcombe's interval alone, `claim: "these_cells"`.
 */
import { pairedDifferenceInterval, type PairedCounts } from "../stats/paired-difference.js";
import { newcombeDifference } from "../stats/two-proportions.js";
import { parseEpisodesSpec } from "../runs/episodes-spec.js";
import { rateSummary } from "../runs/result-summary.js";
import { contract, isPlainObject, q } from "../runs/field-checks.js";
import { resolveRobot } from "../runs/pin-resolution.js";
import { type ValidatedRun, type ValidateRunContext } from "../runs/run-request.js";
import { episodeSeed, type NewEpisode, type RunRecord, getRun } from "../store/runs-repo.js";
import { resolveTask } from "../runs/pin-resolution.js";
import { validateCommon } from "../runs/common-fields.js";
import { resolveUnit, validatedKindRun } from "./kind-common.js";
import type { KindResultContext, RunKind } from "./kind.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { countsOf, headlineResult, unitResults } from "./unit-results.js";
import { armOf, modelLevelDifference, theseCellsStatement } from "./comparison-claim.js";
import type { HeadlinePrior } from "../stats/beta-binomial-rate.js";
import { policySucceeded } from "../runs/policy-outcome.js";
import { compareHeadline } from "../runs/compare-headline.js";
import { z } from "zod";
import { COMMON_RUN_FIELDS, EpisodesSpec, Policy, environmentRef, robotPin, taskRef } from "../runs/run-schemas.js";
import { listCompletedRunIdsOnPins } from "../store/run-queries-repo.js";


/** What makes two policies "the same policy" for the source baseline. */
export function policyIdentity(policy: unknown): string | undefined {
  if (!isPlainObject(policy)) return undefined;
  const id = policy.image ?? policy.hf ?? policy.url;
  return typeof id === "string" ? `${String(policy.type)}:${id}` : undefined;
}

interface SourceBaseline {
  run_id: string;
  n: number;
  success_rate: number;
  completed: string;
  /** The source run's per-cell counts and the prior its headline used (absent in plans recorded before issue 25). */
  by_cell?: Array<{ k: number; n: number }>;
  prior?: HeadlinePrior;
}

async function planTransfer(body: Record<string, unknown>, ctx: ValidateRunContext): Promise<ValidatedRun> {
  let targetRobot: unknown = body.target;
  let environment: unknown = body.environment;
  if (isPlainObject(body.target)) {
    targetRobot = body.target.robot;
    if (body.target.environment !== undefined) {
      if (environment !== undefined && environment !== body.target.environment) contract(`target.environment ${q(body.target.environment)} differs from environment ${q(environment)}; give one`);
      environment = body.target.environment;
    }
  } else if (typeof body.target !== "string") {
    contract(`target must be a robot pin "<model>@<firmware>" or {robot, environment}; got ${q(body.target)}`);
  }
  if (environment === undefined) contract(`kind "transfer" requires environment (or target.environment)`);
  const task = await resolveTask(ctx, body.task);
  const target = await resolveUnit(ctx, { robot: targetRobot, environment, task, policy: body.policy, key: "target", role: "target", where: "target" });
  const source = resolveRobot(ctx.pins, body.source);
  if (source.pin === target.unit.robot) contract(`source and target are the same pin ${source.pin}; a transfer needs two embodiments`);
  const count = parseEpisodesSpec(body.episodes).count;
  const common = validateCommon(body, ctx, target.environment);

  const baseline = await findSourceBaseline(ctx, source.pin, target.unit.environment, target.unit.task, body.policy);
  const units = [target.unit];
  if (!baseline) {
    units.push((await resolveUnit(ctx, { robot: body.source, environment, task, policy: body.policy, key: "source", role: "source", where: "source (no earlier run of this policy on the source pin, so it runs here too)" })).unit);
  }
  const episodes: NewEpisode[] = [];
  for (let i = 0; i < count; i++) units.forEach((_, unit) => episodes.push({ unit, seed: episodeSeed(common.seed, i), assign: null }));
  return validatedKindRun({
    kind: "transfer", body, units, episodes, seed: common.seed, priority: common.priority,
    kindPlan: { transfer: { source: source.pin, source_baseline: baseline ?? null } },
  });
}

async function findSourceBaseline(ctx: ValidateRunContext, sourcePin: string, environment: string, task: string, policy: unknown): Promise<SourceBaseline | undefined> {
  const identity = policyIdentity(policy);
  if (!identity) return undefined;
  for (const id of await listCompletedRunIdsOnPins(ctx.db, { accountId: ctx.accountId, robot: sourcePin, environment, task, limit: 50 })) {
    const run = (await getRun(ctx.db, id))!;
    if (run.plan.pilot === true || policyIdentity(run.request.policy) !== identity) continue;
    const result = run.result as { n: number; success_rate: number; cells?: { by_cell?: Array<{ successes: number; n: number }>; prior?: HeadlinePrior } };
    if (result.n > 0) {
      const byCell = result.cells?.by_cell?.map((c) => ({ k: c.successes, n: c.n }));
      return {
        run_id: run.id, n: result.n, success_rate: result.success_rate, completed: run.completed!,
        ...(byCell ? { by_cell: byCell } : {}), ...(result.cells?.prior ? { prior: result.cells.prior } : {}),
      };
    }
  }
  return undefined;
}

/**
 * Target and source episodes measured in this run with the same seed (the same initial
 * conditions), both finished: the pairs the paired interval of the gap is computed over.
 */
function seedPairs(episodes: readonly EpisodeRecord[], targetUnit: number, sourceUnit: number): PairedCounts {
  const bySeed = new Map<number, { target?: boolean; source?: boolean }>();
  for (const e of episodes) {
    if (e.status !== "done" || (e.unit !== targetUnit && e.unit !== sourceUnit)) continue;
    const pair = bySeed.get(e.seed) ?? {};
    if (e.unit === targetUnit) pair.target = policySucceeded(e);
    else pair.source = policySucceeded(e);
    bySeed.set(e.seed, pair);
  }
  const tally: PairedCounts = { both: 0, onlyA: 0, onlyB: 0, neither: 0 };
  for (const { target, source } of bySeed.values()) {
    if (target === undefined || source === undefined) continue;
    if (target && source) tally.both += 1;
    else if (target) tally.onlyA += 1;
    else if (source) tally.onlyB += 1;
    else tally.neither += 1;
  }
  return tally;
}

/**
 * The gap target - source: the model-level posterior difference (each side on its own cells), and
 * beside it the claim about these cells. Measured here, target and source share seeds, so that is the
 * paired Newcombe interval over the complete seed pairs. Taken from an earlier run, the source is not
 * matched on perturbations or interventions: it is the unpaired Newcombe interval and the result says
 * so.
 */
async function transferResult(ctx: KindResultContext, run: RunRecord, episodes: readonly EpisodeRecord[]): Promise<Record<string, unknown>> {
  const units = await unitResults(ctx, run, episodes);
  const settings = run.plan.kind?.transfer as { source: string; source_baseline: SourceBaseline | null } | undefined;
  const targetUnit = units.findIndex((u) => u.role === "target");
  const sourceUnit = units.findIndex((u) => u.role === "source");
  const target = units[targetUnit];
  const measured = sourceUnit >= 0 ? units[sourceUnit] : undefined;
  const baseline = settings?.source_baseline ?? null;
  const sourceCounts = measured ? countsOf(measured.result) : baseline ? countsOf(baseline) : { k: 0, n: 0 };
  const targetCounts = countsOf(target.result);
  let comparison: Record<string, unknown>;
  const names = { a: "target", b: "source" };
  const targetArm = armOf(target.result);
  if (measured) {
    const pairs = seedPairs(episodes, targetUnit, sourceUnit);
    const n = pairs.both + pairs.onlyA + pairs.onlyB + pairs.neither;
    const interval = n > 0 ? pairedDifferenceInterval(pairs, 0.95) : { diff: 0, ci: [-1, 1] as [number, number], method: "none: no complete seed pair" };
    // Target and source run on different robots, so on different cells: the model-level gap models
    // each side on its own cells; the seed-paired interval is the claim about these cells.
    const model = targetCounts.n > 0 && sourceCounts.n > 0 ? modelLevelDifference(targetArm, armOf(measured.result), names) : undefined;
    const theseCells = {
      claim: "these_cells", diff: interval.diff, ci: interval.ci, ci_level: 0.95, method: interval.method,
      statement: theseCellsStatement("the seed-paired interval over complete seed pairs"),
    };
    comparison = model
      ? { ...model, these_cells: theseCells, paired: true, pairs: n, matched: true }
      : { ...theseCells, paired: true, pairs: n, matched: true };
  } else if (baseline?.by_cell && targetCounts.n > 0 && sourceCounts.n > 0) {
    comparison = {
      ...modelLevelDifference(targetArm, { cells: baseline.by_cell, prior: baseline.prior }, names), paired: false, matched: false,
      note: `the source figure comes from run ${baseline.run_id}: its episodes are not matched to this run's on perturbations (seeds) or interventions, so the gap uses the unpaired intervals`,
    };
  } else {
    const interval = targetCounts.n > 0 && sourceCounts.n > 0
      ? newcombeDifference(targetCounts.k, targetCounts.n, sourceCounts.k, sourceCounts.n, 0.95)
      : { diff: 0, ci: [-1, 1], method: "none: a side has no finished episode" };
    comparison = {
      diff: interval.diff, ci: interval.ci, ci_level: 0.95, method: interval.method, paired: false, matched: false,
      claim: "these_cells",
      statement: theseCellsStatement(baseline ? "the unpaired Newcombe interval (the source run recorded no per-cell counts)" : "this interval"),
      note: baseline
        ? `the source figure comes from run ${baseline.run_id}: its episodes are not matched to this run's on perturbations (seeds) or interventions, so the gap uses the unpaired interval`
        : "no source figure: no earlier run of this policy on the source pin and none measured here",
    };
  }
  const gap = {
    source: { robot: settings?.source ?? measured?.robot, run_id: measured ? run.id : baseline?.run_id ?? null, measured_here: Boolean(measured), ...rateSummary(sourceCounts.k, sourceCounts.n) },
    target: { robot: target.robot, run_id: run.id, ...rateSummary(targetCounts.k, targetCounts.n) },
    ...comparison,
  };
  return {
    ...(await headlineResult(ctx, run, episodes, units, {
      units: [targetUnit],
      description: `the target embodiment ${target.robot}, where the policy is being moved to; the source rate and the gap are in gap`,
    })),
    units,
    gap,
    // The answer up front (runs/compare-headline.ts): what the console, the CLI and the PDF print first.
    headline: compareHeadline({ units, gap }),
  };
}

/** The body of a POST /v1/runs of this kind: its shape, declared once (checked before `plan`). */
const schema = z.strictObject({
  kind: z.literal("transfer"), source: robotPin.describe("the embodiment the policy was trained on"),
  target: z.union([robotPin, z.strictObject({ robot: robotPin, environment: environmentRef.optional() })]).describe("destination embodiment"),
  environment: environmentRef.optional().describe("required unless target.environment is given"),
  task: taskRef, policy: Policy, episodes: EpisodesSpec, ...COMMON_RUN_FIELDS,
}).describe("kind transfer: a policy moved from its source embodiment to a target");

export const transferKind: RunKind = {
  name: "transfer",
  traits: { hasUnits: true, comparesPolicies: false, leaderboard: null, paperRows: "units", unitHeading: "Embodiment", acceptsCheckpoints: false, replayable: false },
  schema, plan: planTransfer, result: transferResult,
};
