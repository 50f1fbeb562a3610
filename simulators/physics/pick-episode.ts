/**
 * One pick-cube@v1 episode on a simulated so101 in tabletop@1, outside the agent: the engine
 * comparison (scripts/bench/physics.ts) and the physics unit tests drive a reference policy
 * through the same devices a cell uses (cameras, motor bus, mocap, scene reset, lockstep clock).
 * Success is the task's predicate: cube z > 0.06 m for 1 s, read from motion capture.
 */
import { readFileSync } from "node:fs";
import type { PerturbationSpec, TaskSpec } from "../../cell-agent/episode/assignment.js";
import { realizeEpisodePlan, type EpisodePlan } from "../../cell-agent/episode/plan.js";
import type { CameraFrame, Observation } from "../../cell-agent/hardware/types.js";
import { SceneFaces } from "../render/scene-faces.js";
import { SimCamera } from "../devices/sim-camera.js";
import { SimClock } from "../devices/sim-clock.js";
import { SimEstopInput } from "../devices/sim-estop-input.js";
import { SimMocapSource } from "../devices/sim-instruments.js";
import { SimMotorBus } from "../devices/sim-motor-bus.js";
import { SimSceneReset } from "../devices/sim-scene-reset.js";
import { ReferencePolicyRuntime } from "../policies/reference-runtime.js";
import { SimWorld } from "../world/sim-world.js";
import type { SimEngine } from "./engine.js";
import type { CellVariation } from "../world/cell-variation.js";

/** pick-cube@v1 from the coordinator's catalog, in the agent's TaskSpec form. */
export function pickCubeTask(): TaskSpec {
  const raw = JSON.parse(readFileSync(new URL("../../coordinator/catalog/tasks/pick-cube-v1.json", import.meta.url), "utf8"));
  const cube = raw.initial_conditions.cube;
  return {
    name: "pick-cube",
    initialConditions: {
      cube: { object: "cube", pose: cube.pose, tolMm: cube.tol_mm, randomize: { xMm: cube.randomize.x_mm, yMm: cube.randomize.y_mm, yawDeg: cube.randomize.yaw_deg } },
    },
    successPredicates: raw.success_predicates,
    stages: raw.stages,
    instructions: { sampledPerEpisode: raw.instructions.sampled_per_episode, heldOut: raw.instructions.held_out },
  };
}

export interface PickEpisodeOptions {
  engine: SimEngine;
  /** "assay/ref-policy:expert" or "assay/ref-policy:novice". */
  image: string;
  seed: number;
  perturbation: PerturbationSpec;
  /** Replay this plan's replay spec instead of realizing one from the seed. */
  replaySpec?: Record<string, unknown>;
  controlRateHz?: number;
  /** Episode time limit, simulated seconds (default 12). */
  maxDurationS?: number;
  /** The cell's own variation (world/cell-variation.ts); default none. */
  variation?: CellVariation;
}

export interface PickEpisodeResult {
  success: boolean;
  /** Simulated seconds from the first action to the end. */
  durationS: number;
  /** Wall time of the whole episode including reset, ms. */
  wallMs: number;
  /** Simulated seconds including the reset's homing. */
  simulatedS: number;
  plan: EpisodePlan;
  /** Cube pose (x, y, z, yaw) after the reset, and at the end. */
  cubeStart: number[];
  cubeEnd: number[];
  stats: SimWorld["stats"];
}

/** Runs one episode to success or the time limit. */
export async function runPickEpisode(options: PickEpisodeOptions): Promise<PickEpisodeResult> {
  const wallStart = performance.now();
  const world = new SimWorld({ model: "so101", seed: options.seed, engine: options.engine, variation: options.variation });
  const clock = new SimClock(world, Number.POSITIVE_INFINITY);
  const motors = new SimMotorBus(world, "3.11", new SimEstopInput());
  const sceneFaces = new SceneFaces();
  const cameras = ["top", "wrist"].map((name) => new SimCamera(world, name, undefined, { sceneFaces }));
  const mocap = new SimMocapSource(world);
  const plan = realizeEpisodePlan({
    task: pickCubeTask(), perturbation: options.perturbation, seed: options.seed, dof: 6, environment: "tabletop@1", replaySpec: options.replaySpec,
  });
  await new SimSceneReset(world, clock).reset(plan.reset);
  const cubePose = () => {
    const cube = world.object("cube")!;
    return [...cube.positionM, cube.yawRad];
  };
  const cubeStart = cubePose();
  const session = await new ReferencePolicyRuntime().start({ type: "container", image: options.image }, { model: "so101", dof: 6 });
  const controlRateHz = options.controlRateHz ?? 30;
  await session.reset({ seed: options.seed, instruction: plan.instruction, controlRateHz });
  const periodNs = BigInt(Math.round(1e9 / controlRateHz));
  const limitNs = BigInt(Math.round((options.maxDurationS ?? 12) * 1e9));
  const start = clock.nowNs();
  let next = start;
  let liftedSince: bigint | undefined;
  let success = false;
  while (next - start < limitNs && !success) {
    const frames: Record<string, CameraFrame> = {};
    for (const camera of cameras) frames[camera.name] = await camera.capture();
    const joints = await motors.readState();
    const observation: Observation = { tNs: clock.nowNs(), jointPositionsRad: joints.positionRad, cameras: frames, instruction: plan.instruction };
    await motors.writeGoalPositions(await session.act(observation));
    next += periodNs;
    await clock.sleepUntil(next);
    const { poses } = await mocap.readPoses();
    if (poses.find((p) => p.name === "cube")!.positionM[2] > 0.06) {
      liftedSince ??= next;
      success = next - liftedSince >= 1_000_000_000n;
    } else {
      liftedSince = undefined;
    }
  }
  await session.close();
  return {
    success, durationS: Number(next - start) / 1e9, wallMs: performance.now() - wallStart, simulatedS: Number(world.tNs) / 1e9,
    plan, cubeStart, cubeEnd: cubePose(), stats: { ...world.stats },
  };
}
