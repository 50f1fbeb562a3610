/**
 * What the kinds plan the same way: their top-level fields, a unit (robot pin x environment x task
 * x policy, with the same checks for every kind), list and number fields, and the ValidatedRun the
 * store inserts. The first unit stands for the run in `runs.plan` (billing estimates read it). A
 * leaf: imports no kind.
 */
import type { CatalogEnvironment } from "../catalog/environments.js";
import { environmentId } from "../catalog/environments.js";
import type { RobotModel } from "../../firmware-pins/pins.js";
import { contract, fail, isPlainObject, q } from "../runs/field-checks.js";
import { resolveEnvironment, resolveRobot } from "../runs/pin-resolution.js";
import { validatePolicy } from "../runs/policy-checks.js";
import {
  CONTROL_RATE_HZ, MAX_EPISODE_DURATION_S, IDLE_END_S, normalizeRunRequest, PERTURBATION_REV, type RunKindName, type ValidatedRun, type ValidateRunContext,
} from "../runs/run-request.js";
import type { NewEpisode, RunPlan } from "../store/runs-repo.js";
import type { TaskRecord } from "../store/tasks-repo.js";
import type { RunUnit } from "../domain/units.js";

export interface ResolvedUnit {
  unit: RunUnit;
  model: RobotModel;
  environment: CatalogEnvironment;
}

/** Resolves and checks one unit exactly as kind `run` checks its robot, environment and policy. */
export async function resolveUnit(
  ctx: ValidateRunContext,
  fields: { robot: unknown; environment: unknown; task: TaskRecord & { version: number }; policy: unknown; key?: string; policyName?: string; role?: string; where?: string },
): Promise<ResolvedUnit> {
  const robot = resolveRobot(ctx.pins, fields.robot);
  const environment = resolveEnvironment(ctx, fields.environment, robot.pin, robot.firmware, robot.model);
  try {
    await validatePolicy(fields.policy, robot.model, environment, robot.firmware, ctx.fleet);
  } catch (error) {
    // Name the unit: with several policies or robots, "policy.image" alone is ambiguous.
    if (fields.where && error instanceof Error) error.message = `${fields.where}: ${error.message}`;
    throw error;
  }
  const envId = environmentId(environment);
  return {
    model: robot.model,
    environment,
    unit: {
      key: fields.key ?? `${robot.pin}/${envId}`,
      robot: robot.pin,
      model: robot.model.id,
      firmware: robot.firmware,
      environment: envId,
      task: `${fields.task.name}@v${fields.task.version}`,
      policy: fields.policy as Record<string, unknown>,
      ...(fields.policyName !== undefined ? { policy_name: fields.policyName } : {}),
      ...(fields.role !== undefined ? { role: fields.role } : {}),
    },
  };
}

/** A list field of non-empty strings (robots, environments); 422 naming the field otherwise. */
export function stringList(field: string, value: unknown, code: "contract_validation_failed" | "firmware_pin_unavailable" | "environment_unavailable" = "contract_validation_failed"): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== "string" || v.trim() === "")) {
    fail(code, `${field} must be a non-empty array of strings; got ${q(value)}`);
  }
  const list = value as string[];
  if (new Set(list).size !== list.length) contract(`${field} lists a value twice; got ${q(value)}`);
  return list;
}

/** Asks for an object field. */
export function objectField(field: string, value: unknown, shape: string): Record<string, unknown> {
  if (!isPlainObject(value)) contract(`${field} must be an object ${shape}; got ${q(value)}`);
  return value;
}

/** A probability-like number in (0, 1) (alpha, beta, confidence). */
export function openUnit(field: string, value: unknown, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (!(typeof value === "number" && value > 0 && value < 1)) contract(`${field} must be a number strictly between 0 and 1; got ${q(value)}`);
  return value;
}

/** The ValidatedRun of a kind; the first unit stands for the run in `plan`. */
export function validatedKindRun(args: {
  kind: RunKindName;
  body: Record<string, unknown>;
  units: RunUnit[];
  episodes: NewEpisode[];
  seed: number;
  priority: string;
  kindPlan?: Record<string, unknown>;
  kindState?: object | null;
}): ValidatedRun {
  const first = args.units[0];
  const plan: RunPlan = {
    model: first.model,
    firmware: first.firmware,
    environment: first.environment,
    seed: args.seed,
    control_rate_hz: CONTROL_RATE_HZ,
    max_duration_s: MAX_EPISODE_DURATION_S,
        idle_end_s: IDLE_END_S,
    ...(args.kindPlan ? { kind: args.kindPlan } : {}),
  };
  const distinct = (pick: (u: RunUnit) => string) => [...new Set(args.units.map(pick))];
  const robots = distinct((u) => u.robot);
  const environments = distinct((u) => u.environment);
  const tasks = distinct((u) => u.task);
  return {
    kind: args.kind,
    request: normalizeRunRequest(args.body),
    resolvedPins: {
      robot: first.robot,
      environment: first.environment,
      task: first.task,
      perturbation_rev: PERTURBATION_REV,
      // A run over several pins lists them all; robot/environment/task above are the first unit's.
      ...(robots.length > 1 ? { robots } : {}),
      ...(environments.length > 1 ? { environments } : {}),
      ...(tasks.length > 1 ? { tasks } : {}),
    } as ValidatedRun["resolvedPins"],
    plan,
    priority: args.priority,
    episodesTotal: args.episodes.length,
    units: args.units,
    episodes: args.episodes,
    kindState: args.kindState ?? null,
  };
}
