/**
 * Validation of a POST /v1/runs body, before anything is stored or scheduled (spec 7, rule 1: a
 * rejected submission costs nothing). Each failure is an AssayError naming the field, quoting the
 * bad value and saying what would be accepted. Returns what the store needs to insert the run.
 */
import { randomInt } from "node:crypto";
import { AssayError } from "../errors/assay-error.js";
import type { ErrorCode } from "../errors/codes.js";
import type { FleetView } from "../fleet/fleet-view.js";
import { cameraNames, environmentId, findEnvironment, type CatalogEnvironment } from "../catalog/environments.js";
import { resolveRobotPin, type FirmwarePins, type RobotModel } from "../../firmware-pins/pins.js";
import type { Db } from "../store/database.js";
import type { RunPlan } from "../store/runs-repo.js";
import {
  findNewestFrozenRevision, findVisibleFrozenRevision, findVisibleTaskById, listVisibleTasksNamed, type TaskRow,
} from "../store/tasks-repo.js";
import { validateKindRequest } from "../kinds/kind-validation.js";
import type { RunUnit } from "../kinds/units.js";
import type { NewEpisode } from "../store/runs-repo.js";
import { parseEpisodesSpec } from "./episodes-spec.js";
import { validateInstructionSet } from "./instruction-set.js";

export const RUN_KINDS = ["run", "eval", "verify", "matrix", "threshold", "compare", "transfer"] as const;
export const PRIORITIES = ["burst", "standard", "soak"] as const;
export const INTERVENTIONS = ["none", "on_stall", "scripted"] as const;
export const PUBLISH = ["private", "leaderboard"] as const;
export const POLICY_TYPES = ["container", "checkpoint", "endpoint"] as const;
export const STATE_CHANNELS = ["joint_positions", "joint_velocities", "gripper_state", "ft_wrist"] as const;
/** The perturbation set revision every run currently uses (resolved_pins.perturbation_rev). */
export const PERTURBATION_REV = "assay-perturb@1";
export const CONTROL_RATE_HZ = 30;
export const MAX_EPISODE_DURATION_S = 20;
export const DEFAULT_RETENTION = "30d";
export const RETENTION_MIN_H = 1;
export const RETENTION_MAX_H = 365 * 24;

/** Fields a `run` kind submission may carry. */
const RUN_FIELDS = [
  "kind", "robot", "environment", "task", "policy", "episodes", "perturbation", "data", "priority",
  "max_budget_usd", "interventions", "publish", "instructions",
] as const;

/** The instrument a state channel is read from; a contract may only ask for what the scene has. */
const STATE_INSTRUMENT: Record<(typeof STATE_CHANNELS)[number], string> = {
  joint_positions: "joint_states",
  joint_velocities: "joint_states",
  gripper_state: "gripper_state",
  ft_wrist: "ft_wrist",
};

export interface ValidateRunContext {
  db: Db;
  pins: FirmwarePins;
  environments: readonly CatalogEnvironment[];
  fleet: FleetView;
  accountId: string;
  /** Whether the account opted in to leaderboard publishing. */
  leaderboardOptIn: boolean;
  /** Source of the run seed when the perturbation gives none; default crypto randomInt. */
  randomSeed?: () => number;
}

export interface ValidatedRun {
  kind: (typeof RUN_KINDS)[number];
  /** The submission with defaults filled in: what the Run shows "as submitted". */
  request: Record<string, unknown>;
  resolvedPins: { robot: string; environment: string; task: string; perturbation_rev: string };
  plan: RunPlan;
  priority: string;
  episodesTotal: number;
  /** Kinds other than `run`: the units and the episodes (coordinator/kinds/). */
  units?: RunUnit[];
  episodes?: NewEpisode[];
  kindState?: object | null;
}

export const q = (value: unknown): string => JSON.stringify(value) ?? "undefined";

export function fail(code: ErrorCode, message: string): never {
  throw new AssayError(code, message);
}

export function contract(message: string): never {
  fail("contract_validation_failed", message);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function rejectUnknownKeys(where: string, value: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) contract(`unknown field ${where ? `${where}.` : ""}${key}; allowed: ${known.join(", ")}`);
  }
}

export function oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !allowed.includes(value as T)) contract(`${field} must be one of ${allowed.join(", ")}; got ${q(value)}`);
  return value as T;
}

/**
 * The submission with defaults filled in (kind run, priority standard, interventions none, publish
 * private, data {retention 30d, train_on_failures false}). Purely syntactic: used both to record
 * the request and to compare an Idempotency-Key replay with the original body.
 */
export function normalizeRunRequest(body: Record<string, unknown>): Record<string, unknown> {
  const data = isPlainObject(body.data) ? body.data : {};
  return {
    ...body,
    kind: body.kind ?? "run",
    priority: body.priority ?? "standard",
    interventions: body.interventions ?? "none",
    publish: body.publish ?? "private",
    data: body.data === undefined || isPlainObject(body.data)
      ? { retention: DEFAULT_RETENTION, train_on_failures: false, ...data }
      : body.data,
  };
}

/** Validates a POST /v1/runs body; throws the first AssayError found. */
export function validateRunRequest(body: unknown, ctx: ValidateRunContext): ValidatedRun {
  if (!isPlainObject(body)) contract(`request body must be a JSON object; got ${Array.isArray(body) ? "an array" : q(body)}`);
  const kind = body.kind ?? "run";
  if (typeof kind !== "string" || !(RUN_KINDS as readonly string[]).includes(kind)) contract(`kind must be one of ${RUN_KINDS.join(", ")}; got ${q(kind)}`);
  if (kind !== "run") return validateKindRequest(kind as ValidatedRun["kind"], body, ctx);
  rejectUnknownKeys("", body, RUN_FIELDS);

  const robot = resolveRobot(ctx.pins, body.robot);
  const environment = resolveEnvironment(ctx, body.environment, robot.pin, robot.firmware, robot.model);
  const task = resolveTask(ctx, body.task);
  const episodes = parseEpisodesSpec(body.episodes);
  validatePolicy(body.policy, robot.model, environment, robot.firmware, ctx.fleet);
  const priority = oneOf("priority", body.priority, PRIORITIES, "standard");
  const perturbation = validatePerturbation(body.perturbation, environment);
  validateData(body.data);
  if (body.max_budget_usd !== undefined && !(typeof body.max_budget_usd === "number" && Number.isFinite(body.max_budget_usd) && body.max_budget_usd > 0)) {
    contract(`max_budget_usd must be a positive number of US dollars; got ${q(body.max_budget_usd)}`);
  }
  oneOf("interventions", body.interventions, INTERVENTIONS, "none");
  validateInstructionSet("run", body.instructions, [{ rev: `${task.name}@v${task.version}`, spec: JSON.parse(task.spec) }]);
  const publish = oneOf("publish", body.publish, PUBLISH, "private");
  if (publish === "leaderboard" && !ctx.leaderboardOptIn) {
    fail("publish_forbidden", `publish "leaderboard" needs the account's leaderboard opt-in; submit publish "private" or ask support to opt the account in`);
  }

  const seed = perturbation?.seed ?? (ctx.randomSeed ?? (() => randomInt(0, 0x7fffffff)))();
  return {
    kind: "run",
    request: normalizeRunRequest(body),
    resolvedPins: { robot: robot.pin, environment: environmentId(environment), task: `${task.name}@v${task.version}`, perturbation_rev: PERTURBATION_REV },
    plan: {
      model: robot.model.id,
      firmware: robot.firmware,
      environment: environmentId(environment),
      seed,
      control_rate_hz: CONTROL_RATE_HZ,
      max_duration_s: MAX_EPISODE_DURATION_S,
    },
    priority,
    episodesTotal: episodes.count,
  };
}

export function resolveRobot(pins: FirmwarePins, value: unknown): { model: RobotModel; firmware: string; pin: string } {
  if (typeof value !== "string") fail("firmware_pin_unavailable", `robot is required as "<model>@<firmware>" or "<model>@latest"; got ${q(value)}`);
  const resolution = resolveRobotPin(pins, value);
  if (!resolution.ok) fail("firmware_pin_unavailable", resolution.message);
  return resolution;
}

export function resolveEnvironment(ctx: ValidateRunContext, value: unknown, robotPin: string, firmware: string, model: RobotModel): CatalogEnvironment {
  const installedIn = [...new Set(ctx.pins.installations.filter((i) => i.model === model.id && i.firmware === firmware).map((i) => i.environment))];
  if (typeof value !== "string") {
    fail("environment_unavailable", `environment is required as "<name>@<version>" or "<name>"; got ${q(value)}; ${robotPin} is installed in: ${installedIn.join(", ")}`);
  }
  const env = findEnvironment(ctx.environments, value);
  if (!env) {
    const known = ctx.environments.map(environmentId).join(", ");
    fail("environment_unavailable", `environment ${q(value)} is not in the catalogue; known: ${known}`);
  }
  if (!installedIn.includes(environmentId(env))) {
    fail("environment_unavailable", `environment ${q(value)} (${environmentId(env)}) has no cell with ${robotPin}; ${robotPin} is installed in: ${installedIn.join(", ") || "no environment"}`);
  }
  return env;
}

export function resolveTask(ctx: ValidateRunContext, value: unknown): TaskRow & { version: number } {
  if (typeof value !== "string" || value.trim() === "") fail("task_unknown", `task is required as "<name>", "<name>@v<N>" or a task id; got ${q(value)}`);
  const text = value.trim();
  const revision = /^(.+)@v(\d+)$/.exec(text);
  let row: TaskRow | undefined;
  if (revision) {
    row = findVisibleFrozenRevision(ctx.db, ctx.accountId, revision[1], Number(revision[2]));
    if (!row) fail("task_unknown", `task ${q(text)} is not a frozen revision visible to this account; ${describeFrozen(ctx, revision[1])}`);
  } else {
    row = findVisibleTaskById(ctx.db, ctx.accountId, text) ?? findNewestFrozenRevision(ctx.db, ctx.accountId, text);
    if (!row) {
      const named = listVisibleTasksNamed(ctx.db, ctx.accountId, text);
      if (named.length) fail("task_unknown", `task ${q(text)} has no frozen revision yet (status ${named.map((t) => t.status).join(", ")}); freeze it before submitting a run`);
      fail("task_unknown", `task ${q(text)} is not known to this account; use "<name>", "<name>@v<N>" or a task id`);
    }
  }
  if (row.status !== "frozen" || row.version === null) fail("task_unknown", `task ${q(text)} is ${row.status}, not frozen; freeze it before submitting a run`);
  return row as TaskRow & { version: number };
}

function describeFrozen(ctx: ValidateRunContext, name: string): string {
  const frozen = listVisibleTasksNamed(ctx.db, ctx.accountId, name).filter((t) => t.status === "frozen" && t.version !== null);
  return frozen.length ? `frozen revisions: ${frozen.map((t) => `${t.name}@v${t.version}`).join(", ")}` : `no frozen revision of "${name}" exists`;
}

const POLICY_FIELDS: Record<(typeof POLICY_TYPES)[number], readonly string[]> = {
  container: ["type", "image", "action_space", "observation_contract"],
  checkpoint: ["type", "hf", "runtime", "inference", "action_space", "observation_contract"],
  endpoint: ["type", "url", "latency_budget_ms", "action_space", "observation_contract"],
};

export function requireString(field: string, value: unknown, what: string): string {
  if (typeof value !== "string" || value.trim() === "") contract(`${field} is required (${what}); got ${q(value)}`);
  return value;
}

export function validatePolicy(value: unknown, model: RobotModel, env: CatalogEnvironment, firmware: string, fleet: FleetView): void {
  if (!isPlainObject(value)) contract(`policy is required: an object with type ${POLICY_TYPES.join(", ")}; got ${q(value)}`);
  const type = value.type;
  if (typeof type !== "string" || !(POLICY_TYPES as readonly string[]).includes(type)) {
    contract(`policy.type must be one of ${POLICY_TYPES.join(", ")}; got ${q(type)}`);
  }
  const policyType = type as (typeof POLICY_TYPES)[number];
  rejectUnknownKeys("policy", value, POLICY_FIELDS[policyType]);
  if (policyType === "container") {
    requireString("policy.image", value.image, "a container image reference");
    if (value.action_space === undefined) contract(`policy.action_space is required for a container policy: {"type": "joint_position", "dim": ${model.dof}}`);
    if (value.observation_contract === undefined) contract(`policy.observation_contract is required for a container policy: {"cameras": [...], "state": [...]}`);
  } else if (policyType === "checkpoint") {
    requireString("policy.hf", value.hf, "a Hugging Face model reference");
    requireString("policy.runtime", value.runtime, "the runtime that loads the checkpoint");
    validateInference(value.inference);
  } else {
    const url = requireString("policy.url", value.url, "the endpoint's https:// or wss:// URL");
    let protocol = "";
    try { protocol = new URL(url).protocol; } catch { /* reported below */ }
    if (!["https:", "wss:", "http:", "ws:"].includes(protocol)) contract(`policy.url must be an http(s):// or ws(s):// URL; got ${q(url)}`);
    const budget = value.latency_budget_ms;
    if (!(typeof budget === "number" && Number.isFinite(budget) && budget > 0)) contract(`policy.latency_budget_ms is required for an endpoint policy: a positive number of milliseconds; got ${q(budget)}`);
  }
  if (value.action_space !== undefined) validateActionSpace(value.action_space, model);
  if (value.observation_contract !== undefined) validateObservationContract(value.observation_contract, env);
  if (policyType === "container") {
    const image = value.image as string;
    const cells = fleet.connectedCells().filter((c) => c.model === model.id && c.firmware === firmware && c.environment === environmentId(env));
    if (cells.length > 0 && !cells.some((c) => c.policyImages.includes(image))) {
      const images = [...new Set(cells.flatMap((c) => c.policyImages))];
      contract(`policy.image ${q(image)} is not available on the connected ${model.id}@${firmware} cells in ${environmentId(env)}; they can run: ${images.join(", ") || "no images"}`);
    }
  }
}

function validateInference(value: unknown): void {
  if (value === undefined) return;
  if (!isPlainObject(value)) contract(`policy.inference must be an object {action_horizon, chunk_size, temp}; got ${q(value)}`);
  rejectUnknownKeys("policy.inference", value, ["action_horizon", "chunk_size", "temp"]);
  for (const field of ["action_horizon", "chunk_size"] as const) {
    const v = value[field];
    if (v !== undefined && !(Number.isInteger(v) && (v as number) > 0)) contract(`policy.inference.${field} must be a positive integer; got ${q(v)}`);
  }
  const temp = value.temp;
  if (temp !== undefined && !(typeof temp === "number" && Number.isFinite(temp) && temp >= 0)) contract(`policy.inference.temp must be a number >= 0; got ${q(temp)}`);
}

function validateActionSpace(value: unknown, model: RobotModel): void {
  if (!isPlainObject(value)) contract(`policy.action_space must be an object {"type": "joint_position", "dim": ${model.dof}}; got ${q(value)}`);
  rejectUnknownKeys("policy.action_space", value, ["type", "dim"]);
  if (value.type !== "joint_position") contract(`policy.action_space.type must be "joint_position"; got ${q(value.type)}`);
  if (value.dim !== model.dof) {
    contract(`policy.action_space.dim must equal ${model.id}'s ${model.dof} degrees of freedom (${model.joints.join(", ")}); got ${q(value.dim)}`);
  }
}

function validateObservationContract(value: unknown, env: CatalogEnvironment): void {
  const cameras = cameraNames(env);
  if (!isPlainObject(value)) contract(`policy.observation_contract must be an object {"cameras": [...], "state": [...]}; got ${q(value)}`);
  rejectUnknownKeys("policy.observation_contract", value, ["cameras", "state"]);
  const listOf = (field: string, v: unknown): string[] => {
    if (!Array.isArray(v) || v.some((item) => typeof item !== "string")) contract(`policy.observation_contract.${field} must be an array of strings; got ${q(v)}`);
    return v as string[];
  };
  for (const camera of listOf("cameras", value.cameras ?? [])) {
    if (!cameras.includes(camera)) contract(`policy.observation_contract.cameras: ${environmentId(env)} has no camera ${q(camera)}; its cameras: ${cameras.join(", ")}`);
  }
  const instrumentKinds = new Set(env.instruments.map((i) => i.kind));
  for (const channel of listOf("state", value.state ?? [])) {
    if (!(STATE_CHANNELS as readonly string[]).includes(channel)) {
      contract(`policy.observation_contract.state: unknown state channel ${q(channel)}; allowed: ${STATE_CHANNELS.join(", ")}`);
    }
    const instrument = STATE_INSTRUMENT[channel as (typeof STATE_CHANNELS)[number]];
    if (!instrumentKinds.has(instrument)) contract(`policy.observation_contract.state: ${environmentId(env)} has no ${instrument} instrument for ${q(channel)}`);
  }
}

export function validatePerturbation(value: unknown, env: CatalogEnvironment): { seed?: number } | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) contract(`perturbation must be an object {layout_jitter_mm, lighting, distractors, seed}; got ${q(value)}`);
  rejectUnknownKeys("perturbation", value, ["layout_jitter_mm", "lighting", "distractors", "seed"]);
  const jitter = value.layout_jitter_mm;
  if (jitter !== undefined && !(typeof jitter === "number" && Number.isFinite(jitter) && jitter >= 0)) {
    contract(`perturbation.layout_jitter_mm must be a number >= 0 (millimetres); got ${q(jitter)}`);
  }
  if (value.lighting !== undefined) {
    if (!Array.isArray(value.lighting) || value.lighting.length === 0) contract(`perturbation.lighting must be a non-empty array of lighting presets of ${environmentId(env)} (${env.lighting.join(", ")}); got ${q(value.lighting)}`);
    for (const preset of value.lighting) {
      if (typeof preset !== "string" || !env.lighting.includes(preset)) {
        contract(`perturbation.lighting: ${environmentId(env)} has no lighting preset ${q(preset)}; its presets: ${env.lighting.join(", ")}`);
      }
    }
  }
  if (value.distractors !== undefined && (typeof value.distractors !== "string" || !env.distractor_sets.includes(value.distractors))) {
    contract(`perturbation.distractors: ${environmentId(env)} has no distractor set ${q(value.distractors)}; its sets: ${env.distractor_sets.join(", ")}`);
  }
  const seed = value.seed;
  if (seed !== undefined && !(Number.isInteger(seed) && (seed as number) >= 0 && (seed as number) <= 0x7fffffff)) {
    contract(`perturbation.seed must be an integer 0..2147483647; got ${q(seed)}`);
  }
  return { seed: seed as number | undefined };
}

/** Parses a retention like "12h" or "30d" to hours; undefined when malformed. */
export function retentionHours(text: string): number | undefined {
  const match = /^(\d+)(h|d)$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * (match[2] === "d" ? 24 : 1);
}

export function validateData(value: unknown): void {
  if (value === undefined) return;
  if (!isPlainObject(value)) contract(`data must be an object {retention, train_on_failures}; got ${q(value)}`);
  rejectUnknownKeys("data", value, ["retention", "train_on_failures"]);
  if (value.retention !== undefined) {
    const hours = typeof value.retention === "string" ? retentionHours(value.retention) : undefined;
    if (hours === undefined || hours < RETENTION_MIN_H || hours > RETENTION_MAX_H) {
      contract(`data.retention must be a duration from "1h" to "365d" written as <n>h or <n>d; got ${q(value.retention)}`);
    }
  }
  if (value.train_on_failures !== undefined && typeof value.train_on_failures !== "boolean") {
    contract(`data.train_on_failures must be true or false; got ${q(value.train_on_failures)}`);
  }
}
