/**
 * The one boundary where an AssignEpisode's JSON strings (spec-shaped, snake_case) become typed
 * values the runner uses. Anything malformed fails here with a message naming the field.
 */
import type { AssignEpisode } from "../../protocol/gen/cell.js";
import { parseJudgeSpec, type JudgeSpec } from "../../protocol/judge/judge-spec.js";

export interface InitialCondition {
  object: string;
  /** [x_m, y_m, z_m, yaw_deg] in the cell's world frame. */
  pose: [number, number, number, number];
  tolMm?: number;
  randomize?: { xMm?: number; yMm?: number; yawDeg?: number };
}

/** A customer kit's physical description as the coordinator sends it in task_json `kits`. */
export interface KitPhysical {
  name: string;
  massG: number;
  dimensionsMm: [number, number, number];
  colourRgb: [number, number, number];
}

/** Which instruction list episodes draw from: the run's `instructions` field, sent as task_json `instruction_set`. */
export type InstructionSet = "sampled" | "held_out";

export interface TaskSpec {
  name: string;
  rev?: string | null;
  initialConditions: Record<string, InitialCondition>;
  successPredicates: Array<Record<string, string>>;
  stages: Array<Record<string, string>>;
  instructions: { sampledPerEpisode: string[]; heldOut: string[] };
  /** Default "sampled": held-out paraphrases are drawn only when the run asks for them. */
  instructionSet?: InstructionSet;
  /** Kit name (without "kit/") to its physical description; empty when the task places no kit. */
  kits?: Record<string, KitPhysical>;
}

export interface PerturbationSpec {
  layoutJitterMm: number;
  lighting: string[];
  distractors: string;
  seed?: number;
}

/**
 * The run's `interventions` mode. It travels in AssignEpisode.perturbation_json under the key
 * `interventions` (absent means "none"), so declaring it needed no protocol change.
 */
export type InterventionMode = "none" | "on_stall" | "scripted";
const INTERVENTION_MODES: readonly InterventionMode[] = ["none", "on_stall", "scripted"];

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
  interventions: InterventionMode;
  seed: number;
  controlRateHz: number;
  maxDurationS: number;
  /**
   * Seconds the robot may stand idle with the task unfinished before the episode ends early,
   * unsuccessful (the plan's idle_end_s; 0: never). Applies to runs without interventions only.
   */
  idleEndS: number;
  /** Replay spec to reproduce exactly, or undefined. */
  replaySpec?: Record<string, unknown>;
  /** The run's judge endpoint (task_json `judge`, docs/judges.md), or undefined. */
  judge?: JudgeSpec;
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
  const instructionSet = raw.instruction_set ?? "sampled";
  if (instructionSet !== "sampled" && instructionSet !== "held_out") {
    throw new Error(`task instruction_set must be "sampled" or "held_out"; got ${JSON.stringify(instructionSet)}`);
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
    instructionSet,
    kits: toKits(raw.kits),
  };
}

/** Colour of a kit whose description names none (the coordinator's default teal, coordinator/kits/kit-physics.ts). */
const KIT_FALLBACK_COLOUR_RGB: [number, number, number] = [38, 150, 160];

/** task_json `kits` (snake_case, from the scheduler) to typed descriptions; malformed ones fail naming the field. */
function toKits(raw: unknown): Record<string, KitPhysical> {
  const kits: Record<string, KitPhysical> = {};
  if (typeof raw !== "object" || raw === null) return kits;
  const triple = (value: unknown, field: string): [number, number, number] => {
    if (!Array.isArray(value) || value.length !== 3 || !value.every((v) => typeof v === "number" && Number.isFinite(v) && v > 0)) {
      throw new Error(`task kits.${field} must be three positive numbers; got ${JSON.stringify(value)}`);
    }
    return value as [number, number, number];
  };
  for (const [name, kit] of Object.entries(raw as Record<string, Record<string, unknown>>)) {
    const massG = kit?.mass_g;
    if (!(typeof massG === "number" && massG > 0)) throw new Error(`task kits.${name}.mass_g must be a positive number; got ${JSON.stringify(massG)}`);
    kits[name] = {
      name,
      massG,
      dimensionsMm: triple(kit.dimensions_mm, `${name}.dimensions_mm`),
      colourRgb: Array.isArray(kit.colour_rgb) && kit.colour_rgb.length === 3 ? (kit.colour_rgb as [number, number, number]) : KIT_FALLBACK_COLOUR_RGB,
    };
  }
  return kits;
}

function toInterventions(raw: Record<string, unknown> | undefined): InterventionMode {
  const mode = raw?.interventions ?? "none";
  if (!INTERVENTION_MODES.includes(mode as InterventionMode)) {
    throw new Error(`AssignEpisode.perturbation_json interventions must be one of ${INTERVENTION_MODES.join(", ")}; got ${JSON.stringify(mode)}`);
  }
  return mode as InterventionMode;
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
  const perturbation = parseObject(message.perturbationJson, "perturbation_json", false);
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
    perturbation: toPerturbation(perturbation),
    interventions: toInterventions(perturbation),
    seed: message.seed,
    controlRateHz,
    maxDurationS,
    idleEndS: message.idleEndS > 0 ? message.idleEndS : 0,
    replaySpec: parseObject(message.replaySpecJson, "replay_spec_json", false),
    judge: parseJudgeSpec(taskJson.judge),
  };
}
