/**
 * A task pilot: a calibration run of a draft (or piloting) task through the normal run machinery.
 * The run is an ordinary `run` whose `resolved_pins.task` is the task's id (the scheduler sends the
 * tasks row's spec with rev null) and whose plan carries `pilot: true`. Verification reports must
 * skip runs for which `isPilotRun` holds: pilot episodes are calibration only.
 */
import { q } from "../runs/field-checks.js";
import { randomInt } from "node:crypto";
import { resolveRobotPin, type FirmwarePins, type RobotModel } from "../../firmware-pins/pins.js";
import { checkBindings } from "../../protocol/predicates/index.js";
import { cameraNames, environmentId, findEnvironment, type CatalogEnvironment } from "../catalog/environments.js";
import { AssayError } from "../errors/assay-error.js";
import { CONTROL_RATE_HZ, DEFAULT_RETENTION, MAX_EPISODE_DURATION_S, IDLE_END_S, PERTURBATION_REV } from "../runs/run-request.js";
import type { NewRun, RunPlan } from "../store/runs-repo.js";
import { parsePilotBody, PILOT_EPISODES_DEFAULT } from "./task-schemas.js";
import { checkJudgeTasks } from "../runs/judge-checks.js";
import type { TaskSpecFields } from "./validate-task.js";

export { PILOT_EPISODES_DEFAULT, PILOT_EPISODES_MAX } from "./task-schemas.js";
/** The reference expert policy a pilot runs when the request names none. */
export const PILOT_DEFAULT_IMAGE = "assay/ref-policy:expert";

/** A pilot run's plan: a RunPlan marked `pilot: true`. */
export type PilotRunPlan = RunPlan & { pilot: true };

export interface PilotContext {
  pins: FirmwarePins;
  environments: readonly CatalogEnvironment[];
  runId: string;
  accountId: string;
  now: Date;
  randomSeed?: () => number;
}

export interface PlannedPilot {
  run: NewRun;
  robotPin: string;
  episodes: number;
}


function invalid(message: string): never {
  throw new AssayError("contract_validation_failed", message);
}


/** Whether a runs.plan JSON (or parsed plan) belongs to a pilot run; reports skip those runs. */
export function isPilotRun(plan: string | object): boolean {
  const parsed = (typeof plan === "string" ? JSON.parse(plan) : plan) as { pilot?: unknown };
  return parsed.pilot === true;
}

/** Validates POST /v1/tasks/{id}/pilot and builds the run to insert. Does not touch the store. */
export function planPilot(body: unknown, task: { id: string; spec: TaskSpecFields }, ctx: PilotContext): PlannedPilot {
  // The shape first (coordinator/tasks/task-schemas.ts PilotRequest); what follows needs the catalogue.
  const raw = parsePilotBody(body);
  // Held-out paraphrases are never sampled while iterating (spec, Task Spec); a pilot iterates.
  if (raw.instructions !== undefined && raw.instructions !== "sampled") {
    invalid(`instructions ${q(raw.instructions)} is not allowed on a pilot: pilots iterate on a draft, and held-out instructions are never sampled while iterating; `
      + `a pilot always samples instructions.sampled_per_episode ("sampled"). Evaluate held-out instructions with a run of kind run or eval on the frozen revision`);
  }
  const robot = resolveRobotPin(ctx.pins, raw.robot);
  if (!robot.ok) throw new AssayError("firmware_pin_unavailable", robot.message);

  const episodes = raw.episodes ?? PILOT_EPISODES_DEFAULT;

  const env = pilotEnvironment(raw.environment, task.spec, robot.pin, robot.firmware, robot.model.id, ctx);
  const problems = checkBindings(task.spec, env.instruments.map((i) => i.kind));
  if (problems[0]) {
    const p = problems[0];
    invalid(`${p.field}[${p.index}] "${p.name}" needs instrument ${p.missing.join(" and ")}, which ${environmentId(env)} lacks; pilot in another environment of class ${task.spec.environment_class}`);
  }
  const policy = pilotPolicy(raw.policy, robot.model, env);
  checkJudgeTasks(raw.judge, [{ rev: task.id, spec: task.spec as unknown as Record<string, unknown> }]);

  const seed = (ctx.randomSeed ?? (() => randomInt(0, 0x7fffffff)))();
  const plan: PilotRunPlan = {
    model: robot.model.id,
    firmware: robot.firmware,
    environment: environmentId(env),
    seed,
    control_rate_hz: CONTROL_RATE_HZ,
    max_duration_s: MAX_EPISODE_DURATION_S,
        idle_end_s: IDLE_END_S,
    pilot: true,
  };
  return {
    robotPin: robot.pin,
    episodes: episodes as number,
    run: {
      id: ctx.runId,
      accountId: ctx.accountId,
      kind: "run",
      created: ctx.now.toISOString(),
      request: {
        kind: "run", robot: raw.robot, environment: environmentId(env), task: task.id, policy, episodes,
        priority: "standard", interventions: "none", publish: "private",
        data: { retention: DEFAULT_RETENTION, train_on_failures: false }, pilot: true, ...(raw.judge ? { judge: raw.judge } : {}),
      },
      resolvedPins: { robot: robot.pin, environment: environmentId(env), task: task.id, perturbation_rev: PERTURBATION_REV },
      plan,
      priority: "standard",
      episodesTotal: episodes as number,
    },
  };
}

/** The named environment (of any class, if it binds), or the first catalogue environment of the task's class with the robot installed. */
function pilotEnvironment(value: unknown, spec: TaskSpecFields, robotPin: string, firmware: string, modelId: string, ctx: PilotContext): CatalogEnvironment {
  const installedIn = new Set(ctx.pins.installations.filter((i) => i.model === modelId && i.firmware === firmware).map((i) => i.environment));
  if (value !== undefined) {
    const env = typeof value === "string" ? findEnvironment(ctx.environments, value) : undefined;
    if (!env) throw new AssayError("environment_unavailable", `environment ${q(value)} is not in the catalogue; known: ${ctx.environments.map(environmentId).join(", ")}`);
    if (!installedIn.has(environmentId(env))) {
      throw new AssayError("environment_unavailable", `environment ${environmentId(env)} has no cell with ${robotPin}; ${robotPin} is installed in: ${[...installedIn].join(", ") || "no environment"}`);
    }
    return env;
  }
  const env = ctx.environments.find((e) => e.class === spec.environment_class && installedIn.has(environmentId(e)));
  if (!env) {
    throw new AssayError("environment_unavailable", `no ${spec.environment_class} environment has a cell with ${robotPin} (installed in: ${[...installedIn].join(", ") || "no environment"}); pilot with another robot or name an environment`);
  }
  return env;
}

/**
 * The pilot's policy: the given one (its shape already checked) matched against the robot's dof and
 * the environment's cameras, or the reference expert container with those.
 */
function pilotPolicy(value: unknown, model: RobotModel, env: CatalogEnvironment): Record<string, unknown> {
  if (value === undefined) {
    return {
      type: "container",
      image: PILOT_DEFAULT_IMAGE,
      action_space: { type: "joint_position", dim: model.dof },
      observation_contract: { cameras: cameraNames(env), state: ["joint_positions"] },
    };
  }
  // The shape (type, required and unknown fields) is the Policy declaration's, checked before this.
  const policy = value as { action_space?: { dim: number }; observation_contract?: { cameras?: string[] } };
  const actionSpace = policy.action_space;
  if (actionSpace !== undefined && actionSpace.dim !== model.dof) {
    invalid(`policy.action_space must be {"type": "joint_position", "dim": ${model.dof}} for ${model.id}; got ${q(actionSpace)}`);
  }
  const contract = policy.observation_contract;
  if (contract !== undefined) {
    const cameras = contract.cameras ?? [];
    const missing = cameras.find((c) => !cameraNames(env).includes(c));
    if (missing !== undefined) invalid(`policy.observation_contract.cameras: ${environmentId(env)} has no camera ${q(missing)}; its cameras: ${cameraNames(env).join(", ")}`);
  }
  return value as Record<string, unknown>;
}
