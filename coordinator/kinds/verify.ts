/**
 * Kind `verify`: scenarios a simulator flagged, reproduced on verification-tier hardware.
 *
 * Plan. Every `robots` pin (verify tier only) in `environment` is a unit. Each of the first
 * `scenarios.count` parsed scenarios (coordinator/kinds/scenarios.ts) becomes one episode per unit
 * whose AssignEpisode.replay_spec_json is the scenario, so the cell reproduces it exactly.
 * `audit_sample` (0..1) adds ceil(audit_sample x count) episodes per unit from fresh random seeds:
 * layouts the simulator did not pick, to find its blind spots.
 *
 * Result. `units` (one per robot), `scenarios` ([{scenario, unit, episode_id, sim_outcome,
 * real_outcome}]), `agreement` (sim vs real over the scenario episodes with a simulated outcome,
 * from coordinator/stats/agreement.ts), `audit` (the audit episodes' rate, reported apart), and with
 * `return_ground_truth` a `ground_truth` section: per scenario episode, a JSON file for simulator
 * recalibration (coordinator/artifacts/ground-truth.ts, schema `assay.ground_truth/1`) that the
 * coordinator derives from the episode's MCAP channels (`/gt/object_poses` motion-capture 6-DoF
 * poses, `/joint_targets_commanded` vs `/joint_states_measured`) as soon as the MCAP is stored,
 * before the run can complete; listed at `episodes?artifact=ground_truth`.
 */
import { nextTurn } from "../async/next-turn.js";
import { GROUND_TRUTH_SCHEMA, GROUND_TRUTH_SOURCE_CHANNELS } from "../artifacts/ground-truth.js";
import { agreement } from "../stats/agreement.js";
import { policyRate } from "../runs/result-summary.js";
import { headlinePriorOfUnit } from "../runs/headline-priors.js";
import { contract, isPlainObject, q } from "../runs/field-checks.js";
import { type ValidatedRun, type ValidateRunContext } from "../runs/run-request.js";
import { episodeSeed, type NewEpisode, type RunRecord } from "../store/runs-repo.js";
import { resolveTask } from "../runs/pin-resolution.js";
import { validateCommon } from "../runs/common-fields.js";
import { resolveUnit, stringList, validatedKindRun, type ResolvedUnit } from "./kind-common.js";
import { parseScenarios } from "./scenarios.js";
import type { KindResultContext, RunKind } from "./kind.js";
import type { EpisodeRecord } from "../store/episodes-repo.js";
import { headlineResult, unitResults } from "./unit-results.js";
import { isIntervened, policySucceeded } from "../runs/policy-outcome.js";
import { z } from "zod";
import { COMMON_RUN_FIELDS, Policy, environmentRef, robotPin, taskRef } from "../runs/run-schemas.js";
import { NAME_MAX_CHARS, ROBOTS_MAX, tooLong, tooMany } from "../json/field-bounds.js";

/** Ground-truth channels of every episode's MCAP. */
export const GROUND_TRUTH_CHANNELS = GROUND_TRUTH_SOURCE_CHANNELS;

async function planVerify(body: Record<string, unknown>, ctx: ValidateRunContext): Promise<ValidatedRun> {
  const robots = stringList("robots", body.robots, "firmware_pin_unavailable");
  const task = await resolveTask(ctx, body.task);
  const units: ResolvedUnit[] = [];
  for (const robot of robots) units.push(await resolveUnit(ctx, { robot, environment: body.environment, task, policy: body.policy, where: robot }));
  for (const u of units) if (u.model.tier !== "verify") contract(`robots: verify runs on verification-tier hardware; ${u.unit.robot} is ${u.model.tier}-tier`);
  const scenarios = body.scenarios as { format: string; source: unknown; count?: number };
  const taskObjects = Object.fromEntries(
    Object.entries((task.spec as { initial_conditions: Record<string, { object: string }> }).initial_conditions).map(([name, c]) => [name, c.object]),
  );
  const parsed = parseScenarios(scenarios.format, scenarios.source, units[0].unit.environment, taskObjects);
  const count = scenarios.count ?? parsed.length;
  if (count > parsed.length) {
    contract(`scenarios.count must be an integer 1..${parsed.length} (the scenarios in source); got ${q(scenarios.count)}`);
  }
  const audit = (body.audit_sample as number | undefined) ?? 0;
  const common = validateCommon(body, ctx, units[0].environment);
  const episodes: NewEpisode[] = [];
  const chosen = parsed.slice(0, count);
  chosen.forEach((scenario, i) => units.forEach((_, unit) => episodes.push({
    unit, seed: episodeSeed(common.seed, i), assign: { role: "scenario", scenario: i, sim_outcome: scenario.simOutcome, replay_spec: scenario.replaySpec },
  })));
  const audits = Math.ceil(audit * count);
  for (let i = 0; i < audits; i++) units.forEach((_, unit) => episodes.push({ unit, seed: episodeSeed(common.seed ^ 0x5a5a5a, i), assign: { role: "audit" } }));
  return validatedKindRun({
    kind: "verify", body, units: units.map((u) => u.unit), episodes, seed: common.seed, priority: common.priority,
    kindPlan: { verify: { format: scenarios.format, count, audit_sample: audit, return_ground_truth: body.return_ground_truth ?? false } },
  });
}

/**
 * The scenario index when the episode's MCAP must yield a ground-truth file (a scenario episode of a
 * verify run with `return_ground_truth`), else undefined.
 */
export function groundTruthScenarioOf(run: Pick<RunRecord, "kind" | "plan">, episode: Pick<EpisodeRecord, "assign">): number | undefined {
  if (run.kind !== "verify") return undefined;
  const settings = run.plan.kind?.verify as { return_ground_truth?: boolean } | undefined;
  if (!settings?.return_ground_truth) return undefined;
  const assign = episode.assign;
  return assign.role === "scenario" && typeof assign.scenario === "number" ? assign.scenario : undefined;
}

async function verifyResult(ctx: KindResultContext, run: RunRecord, episodes: readonly EpisodeRecord[]): Promise<Record<string, unknown>> {
  const units = await unitResults(ctx, run, episodes);
  const settings = run.plan.kind!.verify as { return_ground_truth: boolean };
  const done = episodes.filter((e) => e.status === "done");
  const scenarios = done
    .map((e) => ({ e, a: e.assign }))
    .filter(({ a }) => a.role === "scenario")
    .map(({ e, a }) => ({
      scenario: a.scenario, unit: e.unit, episode_id: e.id, index: e.idx, sim_outcome: a.sim_outcome ?? null,
      // The policy's outcome: a success a human helped is a failure (coordinator/runs/policy-outcome.ts).
      real_outcome: policySucceeded(e) ? "success" : "failure", ...(isIntervened(e) ? { intervened: true } : {}),
    }));
  const pairs = scenarios.filter((s) => s.sim_outcome !== null)
    .map((s) => ({ sim: s.sim_outcome === "success", real: s.real_outcome === "success", cluster: s.scenario ?? -1 }));
  const audits = done.filter((e) => e.assign.role === "audit");
  // The audit's posterior intervals (all robots', then each robot's), each in a turn of its own (as the units', unit-results.ts).
  const auditRate = (unit: number) => policyRate(audits.filter((e) => e.unit === unit), headlinePriorOfUnit(run, run.units[unit])).rate;
  await nextTurn();
  // The top level is the first robot's, as the headline is.
  const audit = auditRate(0);
  const byRobot = [];
  for (const [index, u] of units.entries()) {
    if (index > 0) await nextTurn();
    // The first robot's is the top level's, computed once.
    byRobot.push({ robot: u.robot, ...(index === 0 ? audit : auditRate(index)) });
  }
  return {
    ...(await headlineResult(ctx, run, episodes, units, {
      units: [0],
      include: (e) => e.assign.role === "scenario",
      description: units.length === 1
        ? `the scenario episodes on ${units[0].robot}: the real outcome of the scenarios the simulator flagged (audit episodes are in audit)`
        : `the scenario episodes on ${units[0].robot}, the first of robots: each robot's rate is in units[], audit episodes in audit, and robots are not pooled`,
    })),
    units,
    scenarios,
    agreement: pairs.length ? agreement(pairs, 0.95) : null,
    audit: { ...audit, by_robot: byRobot },
    ...(settings.return_ground_truth
      ? {
          ground_truth: {
            format: GROUND_TRUTH_SCHEMA,
            channels: GROUND_TRUTH_CHANNELS,
            episodes: scenarios.map((s) => ({ scenario: s.scenario, episode_id: s.episode_id, index: s.index })),
            list_url: `${ctx.baseUrl}/v1/runs/${run.id}/episodes?artifact=ground_truth`,
            mcap_list_url: `${ctx.baseUrl}/v1/runs/${run.id}/episodes?artifact=mcap`,
          },
        }
      : {}),
  };
}

/** The body of a POST /v1/runs of this kind: its shape, declared once (checked before `plan`). */
const schema = z.strictObject({
  kind: z.literal("verify"), robots: z.array(robotPin).min(1).max(ROBOTS_MAX, tooMany(ROBOTS_MAX)).describe("verification-tier robot pins"), environment: environmentRef, task: taskRef, policy: Policy,
  scenarios: z.strictObject({
    format: z.string().max(NAME_MAX_CHARS, tooLong(NAME_MAX_CHARS)).describe("a simulator export format or layout-replay"),
    source: z.unknown().describe("the scenarios in that format"),
    count: z.number().int().min(1).optional().describe("scenarios to run; default all"),
  }),
  audit_sample: z.number().min(0).max(1).optional().describe("fraction of extra random episodes"),
  return_ground_truth: z.boolean().optional(),
  ...COMMON_RUN_FIELDS,
}).describe("kind verify: simulator-flagged scenarios replayed on verification-tier hardware");

export const verifyKind: RunKind = {
  name: "verify",
  traits: { hasUnits: true, comparesPolicies: false, leaderboard: null, paperRows: "headline", unitHeading: "Run", acceptsCheckpoints: false, replayable: false },
  schema, plan: planVerify, result: verifyResult,
};
