import assert from "node:assert/strict";
import type { ResetPlan } from "../../cell-agent/hardware/types.js";
import { DEFAULT_SIM_ENGINE, parseSimEngine } from "../../simulators/physics/engine.js";
import { runPickEpisode } from "../../simulators/physics/pick-episode.js";
import { embodimentFor, jointsOf } from "../../simulators/world/embodiments.js";
import { inverseKinematics } from "../../simulators/world/kinematics.js";
import { SimWorld } from "../../simulators/world/sim-world.js";
import { contactOpening } from "../../simulators/world/grasp.js";

const DEG = Math.PI / 180;
const e = embodimentFor("so101");

function plan(x: number, y: number, yawRad: number, distractors: ResetPlan["distractors"] = []): ResetPlan {
  return { objects: { cube: { object: "cube", positionM: [x, y, 0.015], yawRad } }, lighting: "nominal", distractors, homeRad: new Array(6).fill(0) };
}

/** Drives the fingertip through waypoints [x, y, z, toolYaw, opening, seconds], optionally in chunks of chunkNs. */
function drive(world: SimWorld, waypoints: Array<[number, number, number, number, number, number]>, chunkNs?: bigint): void {
  for (const [x, y, z, yaw, opening, seconds] of waypoints) {
    world.setGoals(jointsOf(e, inverseKinematics([x, y, z], yaw)!, opening));
    const target = world.tNs + BigInt(Math.round(seconds * 1e9));
    if (!chunkNs) world.advanceTo(target);
    else while (world.tNs < target) world.advanceTo(world.tNs + chunkNs < target ? world.tNs + chunkNs : target);
  }
}

describe("MuJoCo world (engine seam)", function () {
  this.timeout(60_000);

  it("is the default engine, and the engine name parses strictly", () => {
    assert.equal(new SimWorld({ model: "so101", seed: 1 }).engine, DEFAULT_SIM_ENGINE);
    assert.equal(parseSimEngine(undefined), DEFAULT_SIM_ENGINE);
    assert.equal(parseSimEngine("kinematic"), "kinematic");
    assert.throws(() => parseSimEngine("bullet"), /one of mujoco, kinematic; got "bullet"/);
  });

  it("grasps by contact: the pads squeeze the cube, friction lifts it, opening drops it on the table", () => {
    const world = new SimWorld({ model: "so101", seed: 1, engine: "mujoco" });
    world.resetScene(plan(0.22, 0.02, 25 * DEG));
    const yaw = -65 * DEG;
    drive(world, [[0.22, 0.02, 0.08, yaw, 1, 2], [0.22, 0.02, 0.016, yaw, 1, 1.5], [0.22, 0.02, 0.016, yaw, 0, 1]]);
    assert.equal(world.holding(), true);
    const touching = contactOpening(0.015);
    assert.ok(Math.abs(world.opening() - touching) < 0.08, `fingers stop on the 30 mm cube: opening ${world.opening()}, touching at ${touching}`);
    for (let z = 0.016; z <= 0.12; z += 0.004) drive(world, [[0.22, 0.02, z, yaw, 0, 0.04]]);
    world.advanceBy(1);
    assert.equal(world.holding(), true);
    assert.ok(world.object("cube")!.positionM[2] > 0.1);
    assert.ok(world.contactForceN[2] < -0.1, `the wrist carries the cube's weight; fz ${world.contactForceN[2]}`);
    drive(world, [[0.22, 0.02, 0.12, yaw, 1, 1.5]]);
    assert.equal(world.holding(), false);
    assert.ok(Math.abs(world.object("cube")!.positionM[2] - 0.015) < 0.002, `cube back on the table: z ${world.object("cube")!.positionM[2]}`);
  });

  it("stops the fingertip at the table and the wrist feels the push", () => {
    const world = new SimWorld({ model: "so101", seed: 3, engine: "mujoco" });
    world.resetScene(plan(0.22, 0.08, 0));
    drive(world, [[0.2, -0.05, 0.05, 0, 1, 1.5], [0.2, -0.05, -0.03, 0, 1, 0.5]]);
    assert.ok(world.toolPose().positionM[2] > -0.003, `fingertip z ${world.toolPose().positionM[2]}`);
    assert.ok(world.contactForceN[2] > 1, `upward contact force ${world.contactForceN[2]}`);
    assert.ok(world.stats.tableHits > 0);
  });

  it("is deterministic for a plan, however time is chunked", () => {
    const once = (chunkNs?: bigint) => {
      const world = new SimWorld({ model: "so101", seed: 9, engine: "mujoco" });
      world.resetScene(plan(0.21, -0.03, 10 * DEG, [{ object: "mug", positionM: [0.3, 0.09, 0.045], yawRad: 0.3 }]));
      drive(world, [[0.215, -0.025, 0.08, 0, 1, 1], [0.215, -0.025, 0.016, 0, 1, 1], [0.215, -0.025, 0.016, 0, 0, 0.7], [0.215, -0.025, 0.1, 0, 0, 1]], chunkNs);
      return JSON.stringify([world.object("cube")!.positionM, world.measuredJoints().positionRad, world.holding()]);
    };
    const reference = once();
    assert.equal(once(), reference);
    assert.equal(once(33_333_333n), reference, "advancing in 33.3 ms control periods gives the same trajectory");
    assert.equal(once(1_000_000n), reference, "and in 1 ms slices (between physics steps)");
  });

  it("replays an episode from its replay spec: same initial poses, same outcome and end state", async () => {
    const perturbation = { layoutJitterMm: 10, lighting: ["nominal", "dim", "bright", "warm"], distractors: "office-clutter@1" };
    for (const image of ["assay/ref-policy:expert", "assay/ref-policy:novice"]) {
      const first = await runPickEpisode({ engine: "mujoco", image, seed: 4242, perturbation });
      const again = await runPickEpisode({
        engine: "mujoco", image, seed: 4242, perturbation, replaySpec: first.plan.replaySpec as unknown as Record<string, unknown>,
      });
      assert.deepEqual(again.plan.replaySpec, first.plan.replaySpec);
      assert.deepEqual(again.cubeStart, first.cubeStart, "initial conditions reproduce exactly");
      assert.equal(again.success, first.success);
      assert.deepEqual(again.cubeEnd, first.cubeEnd, "the whole episode reproduces");
    }
  });
});
