import assert from "node:assert/strict";
import type { PerturbationSpec, TaskSpec } from "../../cell-agent/episode/assignment.js";
import { realizeEpisodePlan } from "../../cell-agent/episode/plan.js";
import type { CameraFrame, Observation } from "../../cell-agent/hardware/types.js";
import { pickCubeTask } from "../../simulators/physics/pick-episode.js";
import { ReferencePolicyRuntime } from "../../simulators/policies/reference-runtime.js";
import { createSimulatedCell, type SimulatedCell } from "../../simulators/sim-cell-hardware.js";

const PICK_CUBE: TaskSpec = pickCubeTask();

const CONTROL_PERIOD_NS = 1_000_000_000n / 30n;
const EPISODE_LIMIT_NS = 12_000_000_000n;

/** One pick-cube episode on a simulated so101 in tabletop@1; success = cube z > 0.06 m held 1 s (mocap). */
async function episode(image: string, seed: number, perturbation: PerturbationSpec): Promise<{ success: boolean; durationS: number }> {
  const cell = await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed, speed: Infinity });
  try {
    return await runEpisode(cell, image, seed, perturbation);
  } finally {
    await cell.close();
  }
}

async function runEpisode(cell: SimulatedCell, image: string, seed: number, perturbation: PerturbationSpec): Promise<{ success: boolean; durationS: number }> {
  const plan = realizeEpisodePlan({ task: PICK_CUBE, perturbation, seed, dof: 6, environment: "tabletop@1" });
  await cell.scene.reset(plan.reset);
  const session = await cell.policies.start({ type: "container", image }, { model: "so101", dof: 6 });
  await session.reset({ seed, instruction: plan.instruction, controlRateHz: 30 });
  const start = cell.clock.nowNs();
  let next = start;
  let liftedSince: bigint | undefined;
  while (next - start < EPISODE_LIMIT_NS) {
    const cameras: Record<string, CameraFrame> = {};
    for (const camera of cell.cameras) cameras[camera.name] = await camera.capture();
    const joints = await cell.motors.readState();
    const observation: Observation = { tNs: cell.clock.nowNs(), jointPositionsRad: joints.positionRad, cameras, instruction: plan.instruction };
    await cell.motors.writeGoalPositions(await session.act(observation));
    next += CONTROL_PERIOD_NS;
    await cell.clock.sleepUntil(next);
    const { poses } = await cell.mocap!.readPoses();
    const z = poses.find((p) => p.name === "cube")!.positionM[2];
    if (z > 0.06) {
      liftedSince ??= next;
      if (next - liftedSince >= 1_000_000_000n) return { success: true, durationS: Number(next - start) / 1e9 };
    } else {
      liftedSince = undefined;
    }
  }
  await session.close();
  return { success: false, durationS: Number(next - start) / 1e9 };
}

describe("reference policies on simulated pick-cube", function () {
  // A guard against a hang, not a bound: 24 simulated episodes run in this process (the novice's failures go to the
  // task's time limit), 20-30 s on a quiet 2-core machine and past 60 s when the machine is shared at load ~18
  // (a suite beside other work failed here on the old 60 s). Nothing here asserts a duration.
  this.timeout(300_000);

  it("refuses an image it cannot run, naming the ones it can", async () => {
    await assert.rejects(
      new ReferencePolicyRuntime().start({ type: "container", image: "acme/pi0:1" }, { model: "so101", dof: 6 }),
      /this cell cannot run image acme\/pi0:1; available: assay\/ref-policy:expert, assay\/ref-policy:novice/,
    );
  });

  it("the expert picks the cube more often than the novice across seeds, lighting and clutter", async () => {
    // Twelve seeds a policy, not thirty: the claim is the order of the two counts, not their size. The episodes are
    // deterministic for their seeds; at thirty the expert picked 30 and the novice 5 (seeds 7106, 7107, 7109, 7110 and
    // 7128). The first twelve still cycle the three distractor sets four times each and give 12 against 4.
    const episodes = 12;
    const distractorSets = ["none", "color-blocks@1", "office-clutter@1"];
    const results: Record<string, { successes: number; durations: number[] }> = {};
    for (const image of ["assay/ref-policy:expert", "assay/ref-policy:novice"]) {
      results[image] = { successes: 0, durations: [] };
      for (let i = 0; i < episodes; i++) {
        const perturbation: PerturbationSpec = {
          layoutJitterMm: 10, lighting: ["nominal", "dim", "bright", "warm"], distractors: distractorSets[i % distractorSets.length],
        };
        const outcome = await episode(image, 7100 + i, perturbation);
        if (outcome.success) results[image].successes++;
        results[image].durations.push(outcome.durationS);
      }
      const { successes, durations } = results[image];
      const meanS = durations.reduce((a, b) => a + b, 0) / durations.length;
      console.log(`      ${image}: ${successes}/${episodes} picked; mean simulated episode ${meanS.toFixed(2)} s`);
    }
    assert.ok(results["assay/ref-policy:expert"].successes > results["assay/ref-policy:novice"].successes);
  });
});
