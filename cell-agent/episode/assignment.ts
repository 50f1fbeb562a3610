/**
 * The one boundary where an AssignEpisode's JSON strings (spec-shaped, snake_case) become typed
 * values the runner uses. Anything malformed fails here with a message naming the field.
 */
import type { AssignEpisode } from "../../protocol/gen/cell.js";

export interface InitialCondition {
  object: string;
  /** [x_m, y_m, z_m, yaw_deg] in the cell's world frame. */
  pose: [number, number, number, number];
  tolMm?: number;
  randomize?: { xMm?: number; yMm?: number; yawDeg?: number };
}

export interface TaskSpec {
  name: string;
  rev?: string | null;
  initialConditions: Record<string, InitialCondition>;
  successPredicates: Array<Record<string, string>>;
  stages: Array<Record<string, string>>;
  instructions: { sampledPerEpisode: string[]; heldOut: string[] };
}

export interface PerturbationSpec {
  layoutJitterMm: number;
  lighting: string[];
  distractors: string;
  seed?: number;
}

export interface EpisodeAssignment {
  episodeId: string;
  runId: string;
  index: number;
  attempt: number;
  /** Episodes in the run. */
  of: number;
  robot: string;
  environment: string;
  task: TaskSpec;
  /** The raw spec objects, passed on unchanged (policy to the runtime, task to the predicate compiler). */
  taskJson: Record<string, unknown>;
  policy: Record<string, unknown>;
  perturbation: PerturbationSpec;
  seed: number;
  controlRateHz: number;
  maxDurationS: number;
  /** Replay spec to reproduce exactly, or undefined. */
  replaySpec?: Record<string, unknown>;
}

function parseObject(text: string, field: string, required: boolean): Record<string, unknown> | undefined {
  if (!text.trim()) {
    if (required) throw new Error(`AssignEpisode.${field} is empty; the coordinator must send a JSON object`);
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`AssignEpisode.${field} is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new Error(`AssignEpisode.${field} must be a JSON object; got ${text.slice(0, 80)}`);
  }
  return value as Record<string, unknown>;
}

function toTask(raw: Record<string, unknown>): TaskSpec {
  const initial = (raw.initial_conditions ?? {}) as Record<string, Record<string, unknown>>;
  const initialConditions: Record<string, InitialCondition> = {};
  for (const [name, spec] of Object.entries(initial)) {
    const pose = spec.pose as unknown;
    if (!Array.isArray(pose) || pose.length !== 4 || !pose.every((v) => typeof v === "number")) {
      throw new Error(`task initial_conditions.${name}.pose must be [x_m, y_m, z_m, yaw_deg]; got ${JSON.stringify(pose)}`);
    }
    const randomize = spec.randomize as Record<string, number> | undefined;
    initialConditions[name] = {
      object: typeof spec.object === "string" ? spec.object : name,
      pose: pose as [number, number, number, number],
      tolMm: typeof spec.tol_mm === "number" ? spec.tol_mm : undefined,
      randomize: randomize ? { xMm: randomize.x_mm, yMm: randomize.y_mm, yawDeg: randomize.yaw_deg } : undefined,
    };
  }
  const instructions = (raw.instructions ?? {}) as Record<string, unknown>;
  const strings = (value: unknown) => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : []);
  return {
    name: typeof raw.name === "string" ? raw.name : "task",
    rev: typeof raw.rev === "string" ? raw.rev : null,
    initialConditions,
    successPredicates: (raw.success_predicates ?? []) as Array<Record<string, string>>,
    stages: (raw.stages ?? []) as Array<Record<string, string>>,
    instructions: { sampledPerEpisode: strings(instructions.sampled_per_episode), heldOut: strings(instructions.held_out) },
  };
}

function toPerturbation(raw: Record<string, unknown> | undefined): PerturbationSpec {
  const jitter = raw?.layout_jitter_mm;
  const lighting = raw?.lighting;
  return {
    layoutJitterMm: typeof jitter === "number" && jitter > 0 ? jitter : 0,
    lighting: Array.isArray(lighting) && lighting.length > 0 ? lighting.map(String) : [],
    distractors: typeof raw?.distractors === "string" && raw.distractors ? raw.distractors : "none",
    seed: typeof raw?.seed === "number" ? raw.seed : undefined,
  };
}

/** Parses an AssignEpisode; throws a message naming the malformed field. */
export function parseAssignment(message: AssignEpisode): EpisodeAssignment {
  const taskJson = parseObject(message.taskJson, "task_json", true)!;
  const controlRateHz = message.controlRateHz > 0 ? message.controlRateHz : 10;
  const maxDurationS = message.maxDurationS > 0 ? message.maxDurationS : 30;
  return {
    episodeId: message.episodeId,
    runId: message.runId,
    index: message.index,
    attempt: message.attempt,
    of: message.of,
    robot: message.robot,
    environment: message.environment,
    task: toTask(taskJson),
    taskJson,
    policy: parseObject(message.policyJson, "policy_json", false) ?? {},
    perturbation: toPerturbation(parseObject(message.perturbationJson, "perturbation_json", false)),
    seed: message.seed,
    controlRateHz,
    maxDurationS,
    replaySpec: parseObject(message.replaySpecJson, "replay_spec_json", false),
  };
}
