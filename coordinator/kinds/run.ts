/**
 * Kind `run`: one policy on one robot pin in one environment for `episodes` episodes; the spec's
 * Result as it is. Its one unit is its plan (stored without units; coordinator/store/runs-repo.ts
 * makes the unit when the run is read), and episode i's seed is `episodeSeed(run seed, i)`.
 * Pilots (coordinator/tasks/pilot.ts) and replays (coordinator/replay/) are runs of this kind.
 */
import { environmentId } from "../catalog/environments.js";
import { validateCommon } from "../runs/common-fields.js";
import { parseEpisodesSpec, requestedConfidence } from "../runs/episodes-spec.js";
import { unitMeterContext } from "../runs/meters.js";
import { resolveEnvironment, resolveRobot, resolveTask } from "../runs/pin-resolution.js";
import { validatePolicy } from "../runs/policy-checks.js";
import { computeRunResultInTurns } from "../runs/result-summary.js";
import { interventionModeOf } from "../runs/interventions.js";
import { headlinePriorOfUnit } from "../runs/headline-priors.js";
import { CONTROL_RATE_HZ, MAX_EPISODE_DURATION_S, IDLE_END_S, normalizeRunRequest, PERTURBATION_REV } from "../runs/run-request.js";
import type { RunKind } from "./kind.js";
import { z } from "zod";
import { COMMON_RUN_FIELDS, EpisodesSpec, Policy, PolicyName, environmentRef, robotPin, taskRef } from "../runs/run-schemas.js";

/** The body of a POST /v1/runs of this kind: its shape, declared once (checked before `plan`). */
const schema = z.strictObject({
  kind: z.literal("run").optional().describe("default run"),
  robot: robotPin, environment: environmentRef, task: taskRef, policy: Policy, policy_name: PolicyName.optional(), episodes: EpisodesSpec, ...COMMON_RUN_FIELDS,
}).describe("kind run: one policy on one robot pin in one environment");

export const runKind: RunKind = {
  name: "run",
  traits: { hasUnits: false, comparesPolicies: false, leaderboard: "task", paperRows: "headline", unitHeading: "Run", acceptsCheckpoints: false, replayable: true },
  schema,

  async plan(body, ctx) {
    const robot = resolveRobot(ctx.pins, body.robot);
    const environment = resolveEnvironment(ctx, body.environment, robot.pin, robot.firmware, robot.model);
    const task = await resolveTask(ctx, body.task);
    const episodes = parseEpisodesSpec(body.episodes);
    await validatePolicy(body.policy, robot.model, environment, robot.firmware, ctx.fleet);
    const common = validateCommon(body, ctx, environment);
    return {
      kind: "run",
      request: normalizeRunRequest(body),
      resolvedPins: { robot: robot.pin, environment: environmentId(environment), task: `${task.name}@v${task.version}`, perturbation_rev: PERTURBATION_REV },
      plan: {
        model: robot.model.id,
        firmware: robot.firmware,
        environment: environmentId(environment),
        seed: common.seed,
        control_rate_hz: CONTROL_RATE_HZ,
        max_duration_s: MAX_EPISODE_DURATION_S,
        idle_end_s: IDLE_END_S,
      },
      priority: common.priority,
      episodesTotal: episodes.count,
    };
  },

  async result(ctx, run, episodes) {
    const context = unitMeterContext(ctx.pins, run.units[0], run.priority, `run ${run.id}`);
    return { ...await computeRunResultInTurns(run.id, episodes, context, ctx.baseUrl, {
      requestedCi: requestedConfidence(run.request), interventions: interventionModeOf(run.request), headlinePrior: headlinePriorOfUnit(run, run.units[0]),
    }) };
  },
};
