/**
 * Kind `run`: one policy on one robot pin in one environment for `episodes` episodes; the spec's
 * Result as it is. Its one unit is its plan (stored without units; coordinator/store/runs-repo.ts
 * makes the unit when the run is read), and episode i's seed is `episodeSeed(run seed, i)`.
 * Pilots (coordinator/tasks/pilot.ts) and replays (coordinator/replay/) are runs of this kind.
 */
import { environmentId } from "../catalog/environments.js";
import { validateCommon } from "../runs/common-fields.js";
import { rejectUnknownKeys } from "../runs/field-checks.js";
import { parseEpisodesSpec } from "../runs/episodes-spec.js";
import { unitMeterContext } from "../runs/meters.js";
import { resolveEnvironment, resolveRobot, resolveTask } from "../runs/pin-resolution.js";
import { validatePolicy } from "../runs/policy-checks.js";
import { computeRunResult } from "../runs/result-summary.js";
import { CONTROL_RATE_HZ, MAX_EPISODE_DURATION_S, normalizeRunRequest, PERTURBATION_REV } from "../runs/run-request.js";
import type { RunKind } from "./kind.js";

/** Fields a `run` kind submission may carry. */
const RUN_FIELDS = [
  "kind", "robot", "environment", "task", "policy", "episodes", "perturbation", "data", "priority",
  "max_budget_usd", "interventions", "publish", "instructions",
] as const;

export const runKind: RunKind = {
  name: "run",

  plan(body, ctx) {
    rejectUnknownKeys("", body, RUN_FIELDS);
    const robot = resolveRobot(ctx.pins, body.robot);
    const environment = resolveEnvironment(ctx, body.environment, robot.pin, robot.firmware, robot.model);
    const task = resolveTask(ctx, body.task);
    const episodes = parseEpisodesSpec(body.episodes);
    validatePolicy(body.policy, robot.model, environment, robot.firmware, ctx.fleet);
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
      },
      priority: common.priority,
      episodesTotal: episodes.count,
    };
  },

  result(ctx, run, episodes) {
    return { ...computeRunResult(run.id, episodes, unitMeterContext(ctx.pins, run.units[0], run.priority, `run ${run.id}`), ctx.baseUrl) };
  },
};
