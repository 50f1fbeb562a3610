import assert from "node:assert/strict";
// These test the kinematic engine's scripted grasp rule; the MuJoCo engine grasps by contact (test/integration/physics-mujoco.spec.ts).
import type { ResetPlan } from "../../cell-agent/hardware/types.js";
import { embodimentFor, jointsOf } from "../../simulators/world/embodiments.js";
import { inverseKinematics } from "../../simulators/world/kinematics.js";
import { SimWorld } from "../../simulators/world/sim-world.js";

const DEG = Math.PI / 180;

function planWithCube(x: number, y: number, yawRad: number, distractors: ResetPlan["distractors"] = []): ResetPlan {
  return { objects: { cube: { object: "cube", positionM: [x, y, 0.015], yawRad } }, lighting: "nominal", distractors, homeRad: new Array(6).fill(0) };
}

/** Drives the so101 fingertip through waypoints: [x, y, z, toolYaw, opening, seconds]. */
function drive(world: SimWorld, waypoints: Array<[number, number, number, number, number, number]>): void {
  const e = embodimentFor("so101");
  for (const [x, y, z, yaw, opening, seconds] of waypoints) {
    world.setGoals(jointsOf(e, inverseKinematics([x, y, z], yaw)!, opening));
    world.advanceBy(seconds);
  }
}

function pickAt(world: SimWorld, x: number, y: number, toolYaw: number): void {
  drive(world, [
    [x, y, 0.08, toolYaw, 1, 2],
    [x, y, 0.016, toolYaw, 1, 1.5],
    [x, y, 0.016, toolYaw, 0, 1],
  ]);
}

describe("simulated grasp physics", () => {
  it("attaches the cube when the fingers close around it aligned with a face, and it lifts", () => {
    const world = new SimWorld({ model: "so101", seed: 1, engine: "kinematic" });
    world.resetScene(planWithCube(0.22, 0.02, 25 * DEG));
    pickAt(world, 0.22, 0.02, 25 * DEG - 90 * DEG);
    assert.equal(world.holding(), true);
    // A slow lift keeps the grip.
    for (let z = 0.016; z <= 0.12; z += 0.002) drive(world, [[0.22, 0.02, z, -65 * DEG, 0, 0.04]]);
    world.advanceBy(1);
    assert.equal(world.holding(), true);
    assert.ok(world.object("cube")!.positionM[2] > 0.1);
    // Opening drops it back onto the table.
    drive(world, [[0.22, 0.02, 0.12, -65 * DEG, 1, 1]]);
    assert.equal(world.holding(), false);
    assert.ok(Math.abs(world.object("cube")!.positionM[2] - 0.015) < 1e-9);
  });

  it("lands on the cube's top instead of closing around it when the wrist is 35 degrees off a face", () => {
    // The jaw opens 44 mm; a 30 mm cube turned 35 degrees is wider than that across the closing axis.
    const world = new SimWorld({ model: "so101", seed: 1, engine: "kinematic" });
    world.resetScene(planWithCube(0.22, 0, 35 * DEG));
    pickAt(world, 0.22, 0, 0);
    assert.equal(world.holding(), false);
    assert.ok(world.stats.landings > 0, "the fingers come down on the cube");
    assert.ok(world.toolPose().positionM[2] > 0.025, `the fingertip stops above the table: z ${world.toolPose().positionM[2]}`);
  });

  it("does not attach when the fingertip is 20 mm off the cube centre", () => {
    const world = new SimWorld({ model: "so101", seed: 2, engine: "kinematic" });
    world.resetScene(planWithCube(0.22, 0, 0));
    pickAt(world, 0.22, 0.02, 0);
    assert.equal(world.holding(), false);
  });

  it("stops the fingertip at the table and reports the contact on the wrist", () => {
    const world = new SimWorld({ model: "so101", seed: 3, engine: "kinematic" });
    world.resetScene(planWithCube(0.22, 0.08, 0));
    drive(world, [[0.2, -0.05, 0.05, 0, 1, 1.5]]);
    world.setGoals(jointsOf(embodimentFor("so101"), inverseKinematics([0.2, -0.05, -0.03], 0)!, 1));
    world.advanceBy(0.3);
    assert.ok(world.toolPose().positionM[2] >= 0);
    assert.ok(world.contactForceN[2] > 10);
  });

  it("is deterministic for a seed", () => {
    const run = () => {
      const world = new SimWorld({ model: "so101", seed: 9, engine: "kinematic" });
      world.resetScene(planWithCube(0.21, -0.03, 10 * DEG));
      pickAt(world, 0.215, -0.025, 0);
      return JSON.stringify([world.object("cube")!.positionM, world.measuredJoints().positionRad]);
    };
    assert.equal(run(), run());
  });
});
