/**
 * Realizes an episode's initial conditions from its seed: object poses (nominal + uniform
 * randomization + layout jitter in a disc), a lighting preset, distractors from the versioned
 * `assay-perturb@1` table, and the instruction. The same inputs give the same plan everywhere; a
 * replay spec reproduces a plan exactly without drawing anything.
 */
import type { ObjectShapeSpec, ResetPlan } from "../hardware/types.js";
import type { InstructionSet, PerturbationSpec, TaskSpec } from "./assignment.js";
import {
  DEFAULT_LIGHTING, DISTRACTOR_CLEARANCE_M, DISTRACTOR_PLACEMENT_RADIUS_M, DISTRACTOR_REST_Z_M, PERTURBATION_REV, distractorSet,
} from "./perturbation-sets.js";
import { pick, streamFor, uniformInDisc, uniformInt, uniformSymmetric } from "./prng.js";

/** A pose as the task spec writes it: [x_m, y_m, z_m, yaw_deg]. */
export type SpecPose = [number, number, number, number];

/** The replay spec as it travels on the wire and into the episode resource (snake_case). */
export interface ReplaySpec {
  environment: string;
  layout_seed: number;
  lighting: string;
  /** Distractor set name, e.g. "color-blocks@1". */
  distractors: string;
  objects: Record<string, { object: string; pose: SpecPose }>;
  distractor_objects: Array<{ object: string; pose: SpecPose }>;
  instruction: string | null;
  /** The list `instruction` was drawn from; absent in replay specs written before held-out runs existed. */
  instruction_set?: InstructionSet;
  perturbation_rev: string;
}

/** A kit object's physical description as /meta records it. */
export interface RealizedKit {
  name: string;
  mass_g: number;
  dimensions_mm: [number, number, number];
}

/** The perturbations as realized, for /meta (`perturbations_realized`). */
export interface RealizedPerturbations {
  perturbation_rev: string;
  layout_seed: number;
  layout_jitter_mm: number;
  lighting: string;
  distractor_set: string;
  distractors: Array<{ object: string; pose: SpecPose }>;
  /** Distractors the set asked for that found no free spot. */
  distractors_unplaced: string[];
  objects: Record<string, { object: string; nominal: SpecPose; realized: SpecPose; offset_mm: [number, number]; kit?: RealizedKit }>;
  instruction: string | null;
  instruction_set: InstructionSet;
  replayed: boolean;
}

export interface EpisodePlan {
  reset: ResetPlan;
  instruction: string | undefined;
  realized: RealizedPerturbations;
  replaySpec: ReplaySpec;
}

export interface PlanInput {
  task: TaskSpec;
  perturbation: PerturbationSpec;
  /** The episode seed (AssignEpisode.seed). */
  seed: number;
  /** Robot degrees of freedom (home pose is zeros of this length). */
  dof: number;
  environment: string;
  /** A previous episode's replay spec: reproduce it exactly. */
  replaySpec?: Record<string, unknown>;
}

const DEG = Math.PI / 180;
const round = (value: number, digits: number) => Number(value.toFixed(digits));

function toResetPose(pose: SpecPose) {
  return { positionM: [pose[0], pose[1], pose[2]] as [number, number, number], yawRad: pose[3] * DEG };
}

const KIT_PREFIX = "kit/";

/** The kit a `kit/<name>` object refers to, from the task's `kits`; undefined for stocked objects. */
function kitOf(task: TaskSpec, object: string) {
  return object.startsWith(KIT_PREFIX) ? task.kits?.[object.slice(KIT_PREFIX.length)] : undefined;
}

/** The physical shape the reset plan carries for a kit object (none for stocked objects). */
function kitShapeOf(task: TaskSpec, object: string): ObjectShapeSpec | undefined {
  const kit = kitOf(task, object);
  return kit ? { kind: "box", dimensionsMm: kit.dimensionsMm, massG: kit.massG, colourRgb: kit.colourRgb } : undefined;
}

/** What /meta records of a kit object (spread into its realized entry). */
function realizedKitOf(task: TaskSpec, object: string): { kit?: RealizedKit } {
  const kit = kitOf(task, object);
  return kit ? { kit: { name: kit.name, mass_g: kit.massG, dimensions_mm: kit.dimensionsMm } } : {};
}

/**
 * The instructions an episode may draw from: `held_out` only when the run asks for it, otherwise
 * the sampled list without any held-out paraphrase (the spec: never sampled during iteration).
 */
export function instructionPool(task: TaskSpec): string[] {
  if ((task.instructionSet ?? "sampled") === "held_out") return [...task.instructions.heldOut];
  return task.instructions.sampledPerEpisode.filter((s) => !task.instructions.heldOut.includes(s));
}

function resetPlanOf(replay: ReplaySpec, dof: number, task: TaskSpec): ResetPlan {
  const objects: ResetPlan["objects"] = {};
  for (const [name, entry] of Object.entries(replay.objects)) {
    const shape = kitShapeOf(task, entry.object);
    objects[name] = { object: entry.object, ...toResetPose(entry.pose), ...(shape ? { shape } : {}) };
  }
  return {
    objects,
    lighting: replay.lighting,
    distractors: replay.distractor_objects.map((d) => ({ object: d.object, ...toResetPose(d.pose) })),
    homeRad: new Array<number>(dof).fill(0),
  };
}

/** Realizes (or, given a replay spec, reproduces) the plan of one episode. */
export function realizeEpisodePlan(input: PlanInput): EpisodePlan {
  if (input.replaySpec) return replayPlan(input);
  const { task, perturbation, seed } = input;
  const objectsRandom = streamFor(seed, "objects");
  const jitterM = perturbation.layoutJitterMm / 1000;
  const objects: ReplaySpec["objects"] = {};
  const realizedObjects: RealizedPerturbations["objects"] = {};
  // Sorted names: the draw order must not depend on JSON key order changes in storage.
  for (const name of Object.keys(task.initialConditions).sort()) {
    const spec = task.initialConditions[name];
    const [x, y, z, yaw] = spec.pose;
    const dx = uniformSymmetric(objectsRandom, (spec.randomize?.xMm ?? 0) / 1000);
    const dy = uniformSymmetric(objectsRandom, (spec.randomize?.yMm ?? 0) / 1000);
    const dyaw = uniformSymmetric(objectsRandom, spec.randomize?.yawDeg ?? 0);
    const [jx, jy] = uniformInDisc(objectsRandom, jitterM);
    const realized: SpecPose = [round(x + dx + jx, 5), round(y + dy + jy, 5), z, round(yaw + dyaw, 3)];
    objects[name] = { object: spec.object, pose: realized };
    realizedObjects[name] = {
      object: spec.object, nominal: spec.pose, realized,
      offset_mm: [round((realized[0] - x) * 1000, 2), round((realized[1] - y) * 1000, 2)],
      ...realizedKitOf(task, spec.object),
    };
  }

  const lightingChoices = perturbation.lighting.length > 0 ? perturbation.lighting : DEFAULT_LIGHTING;
  const lighting = pick(streamFor(seed, "lighting"), lightingChoices);

  const { placed, unplaced } = placeDistractors(perturbation.distractors, objects, task, streamFor(seed, "distractors"));

  const instructionSet = task.instructionSet ?? "sampled";
  const pool = instructionPool(task);
  const instruction = pool.length > 0 ? pick(streamFor(seed, "instruction"), pool) : undefined;

  const replaySpec: ReplaySpec = {
    environment: input.environment, layout_seed: seed, lighting, distractors: perturbation.distractors,
    objects, distractor_objects: placed, instruction: instruction ?? null, instruction_set: instructionSet, perturbation_rev: PERTURBATION_REV,
  };
  return {
    reset: resetPlanOf(replaySpec, input.dof, task),
    instruction,
    replaySpec,
    realized: {
      perturbation_rev: PERTURBATION_REV, layout_seed: seed, layout_jitter_mm: perturbation.layoutJitterMm, lighting,
      distractor_set: perturbation.distractors, distractors: placed, distractors_unplaced: unplaced,
      objects: realizedObjects, instruction: instruction ?? null, instruction_set: instructionSet, replayed: false,
    },
  };
}

function placeDistractors(setName: string, objects: ReplaySpec["objects"], task: TaskSpec, random: () => number) {
  const set = distractorSet(setName);
  const count = uniformInt(random, set.minCount, set.maxCount);
  const pool = [...set.objects];
  const chosen: string[] = [];
  for (let i = 0; i < count && pool.length > 0; i++) chosen.push(pool.splice(Math.floor(random() * pool.length), 1)[0]);

  const nominal = Object.values(task.initialConditions).map((c) => c.pose);
  const cx = nominal.length ? nominal.reduce((s, p) => s + p[0], 0) / nominal.length : 0.25;
  const cy = nominal.length ? nominal.reduce((s, p) => s + p[1], 0) / nominal.length : 0;
  const occupied = Object.values(objects).map((o) => [o.pose[0], o.pose[1]]);
  const placed: ReplaySpec["distractor_objects"] = [];
  const unplaced: string[] = [];
  for (const object of chosen) {
    let done = false;
    for (let attempt = 0; attempt < 200 && !done; attempt++) {
      const [dx, dy] = uniformInDisc(random, DISTRACTOR_PLACEMENT_RADIUS_M);
      const x = cx + dx;
      const y = cy + dy;
      if (occupied.every(([ox, oy]) => Math.hypot(x - ox, y - oy) >= DISTRACTOR_CLEARANCE_M)) {
        const yaw = uniformSymmetric(random, 180);
        placed.push({ object, pose: [round(x, 5), round(y, 5), DISTRACTOR_REST_Z_M[object] ?? 0.015, round(yaw, 3)] });
        occupied.push([x, y]);
        done = true;
      }
    }
    if (!done) unplaced.push(object);
  }
  return { placed, unplaced };
}

function replayPlan(input: PlanInput): EpisodePlan {
  const raw = input.replaySpec as Partial<ReplaySpec>;
  if (!raw.objects || typeof raw.objects !== "object") {
    throw new Error(`replay_spec_json has no "objects"; a replay spec must come from an earlier episode's replay_spec`);
  }
  const replaySpec: ReplaySpec = {
    environment: raw.environment ?? input.environment,
    layout_seed: raw.layout_seed ?? input.seed,
    lighting: raw.lighting ?? "nominal",
    distractors: raw.distractors ?? "none",
    objects: raw.objects,
    distractor_objects: raw.distractor_objects ?? [],
    instruction: raw.instruction ?? null,
    // A replay keeps the list its instruction came from; older specs say nothing, so infer it.
    instruction_set: raw.instruction_set ?? (raw.instruction && input.task.instructions.heldOut.includes(raw.instruction) ? "held_out" : "sampled"),
    perturbation_rev: raw.perturbation_rev ?? PERTURBATION_REV,
  };
  const realizedObjects: RealizedPerturbations["objects"] = {};
  for (const [name, entry] of Object.entries(replaySpec.objects)) {
    const nominal = input.task.initialConditions[name]?.pose ?? entry.pose;
    realizedObjects[name] = {
      object: entry.object, nominal, realized: entry.pose,
      offset_mm: [round((entry.pose[0] - nominal[0]) * 1000, 2), round((entry.pose[1] - nominal[1]) * 1000, 2)],
      ...realizedKitOf(input.task, entry.object),
    };
  }
  return {
    reset: resetPlanOf(replaySpec, input.dof, input.task),
    instruction: replaySpec.instruction ?? undefined,
    replaySpec,
    realized: {
      perturbation_rev: replaySpec.perturbation_rev, layout_seed: replaySpec.layout_seed, layout_jitter_mm: input.perturbation.layoutJitterMm,
      lighting: replaySpec.lighting, distractor_set: replaySpec.distractors, distractors: replaySpec.distractor_objects,
      distractors_unplaced: [], objects: realizedObjects, instruction: replaySpec.instruction,
      instruction_set: replaySpec.instruction_set ?? "sampled", replayed: true,
    },
  };
}
