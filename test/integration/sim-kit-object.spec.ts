/**
 * A customer kit in the simulated world: the task_json `kits` description becomes a reset-plan
 * shape, a MuJoCo body with the kit's mass and box, a drawn box in the top camera, and a mocap
 * rigid body reported under both its initial-condition name and `kit/<name>`.
 */
import assert from "node:assert/strict";
import { parseAssignment } from "../../cell-agent/episode/assignment.js";
import { realizeEpisodePlan } from "../../cell-agent/episode/plan.js";
import type { ResetPlan } from "../../cell-agent/hardware/types.js";
import { sceneMjcf } from "../../simulators/physics/mjcf.js";
import { TOP_CAMERA, topWorldToPixel } from "../../simulators/render/camera-calibration.js";
import { createSimulatedCell } from "../../simulators/sim-cell-hardware.js";
import { shapeFromSpec } from "../../simulators/world/objects.js";
import { SimWorld } from "../../simulators/world/sim-world.js";

const TASK = {
  name: "mug-lift",
  rev: "mug-lift@v1",
  initial_conditions: { mug: { object: "kit/mug-set", pose: [0.24, -0.04, 0.045, 0], randomize: { x_mm: 5, y_mm: 5, yaw_deg: 0 } } },
  success_predicates: [{ stays: "pose(kit/mug-set).z < 0.2" }],
  kits: { "mug-set": { name: "mug-set", mass_g: 350, dimensions_mm: [70, 50, 90], colour_rgb: [38, 150, 160], mocap_markers: 4, mesh_scan: true } },
};

function assignment(task: object = TASK) {
  return parseAssignment({
    episodeId: "ep", runId: "run", index: 0, attempt: 1, of: 1, robot: "so101@3.11", environment: "tabletop@1",
    taskJson: JSON.stringify(task), policyJson: "{}", perturbationJson: "{}", seed: 0, controlRateHz: 10, maxDurationS: 5, idleEndS: 0, replaySpecJson: "",
  });
}

function kitPlan(): ResetPlan {
  const a = assignment();
  return realizeEpisodePlan({ task: a.task, perturbation: a.perturbation, seed: 11, dof: 6, environment: "tabletop@1" }).reset;
}

/** Centroid and count of the kit's teal pixels. */
function tealCentroid(rgb: Uint8Array, width: number): [number, number, number] {
  let sc = 0, sr = 0, n = 0;
  for (let p = 0; p < rgb.length / 3; p++) {
    const [r, g, b] = [rgb[p * 3], rgb[p * 3 + 1], rgb[p * 3 + 2]];
    if (g > r + 50 && b > r + 50) {
      sc += (p % width) + 0.5;
      sr += Math.floor(p / width) + 0.5;
      n++;
    }
  }
  return [sc / n, sr / n, n];
}

describe("kit objects in the simulated world", function () {
  this.timeout(60_000);

  it("the plan places the kit with its shape, and /meta and the replay spec record it", () => {
    const a = assignment();
    const plan = realizeEpisodePlan({ task: a.task, perturbation: a.perturbation, seed: 11, dof: 6, environment: "tabletop@1" });
    const mug = plan.reset.objects.mug;
    assert.equal(mug.object, "kit/mug-set");
    assert.deepEqual(mug.shape, { kind: "box", dimensionsMm: [70, 50, 90], massG: 350, colourRgb: [38, 150, 160] });
    assert.deepEqual(plan.realized.objects.mug.kit, { name: "mug-set", mass_g: 350, dimensions_mm: [70, 50, 90] });
    assert.equal(plan.replaySpec.objects.mug.object, "kit/mug-set");
    // A replay of the spec places the same kit the same way.
    const replayed = realizeEpisodePlan({ task: a.task, perturbation: a.perturbation, seed: 11, dof: 6, environment: "tabletop@1", replaySpec: plan.replaySpec as unknown as Record<string, unknown> });
    assert.deepEqual(replayed.reset.objects, plan.reset.objects);
  });

  it("a task without kits sends no shape (stocked objects keep their catalogue shapes)", () => {
    const a = assignment({ ...TASK, initial_conditions: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0] } }, kits: {} });
    const plan = realizeEpisodePlan({ task: a.task, perturbation: a.perturbation, seed: 1, dof: 6, environment: "tabletop@1" });
    assert.equal(plan.reset.objects.cube.shape, undefined);
    assert.equal(plan.realized.objects.cube.kit, undefined);
  });

  it("the MJCF has a body for the kit with its mass and box", () => {
    const shape = shapeFromSpec(kitPlan().objects.mug.shape!);
    const xml = sceneMjcf([{ name: "mug", kind: "kit/mug-set", shape }]);
    assert.match(xml, /<body name="obj_mug" pos="0 0 0\.045">/);
    assert.match(xml, /<geom class="object" type="box" size="0\.035 0\.025 0\.045" mass="0\.35" rgba="0\.14902 0\.588235 0\.627451 1"\/>/);
  });

  for (const engine of ["mujoco", "kinematic"] as const) {
    it(`rests on the table in the ${engine} world and mocap reports it under its kit name`, () => {
      const world = new SimWorld({ model: "so101", seed: 2, engine });
      world.resetScene(kitPlan());
      world.advanceBy(2);
      const mug = world.object("mug")!;
      assert.equal(mug.kind, "kit/mug-set");
      assert.equal(mug.shape.massKg, 0.35);
      assert.ok(Math.abs(mug.positionM[2] - 0.045) < 0.002, `the kit's centre rests at half its 90 mm height: z ${mug.positionM[2]}`);
      assert.ok(Math.hypot(mug.positionM[0] - 0.24, mug.positionM[1] + 0.04) < 0.01, `the kit stays where it was placed: ${mug.positionM}`);
      const poses = new Map(world.poses().map((p) => [p.name, p.positionM]));
      assert.deepEqual(poses.get("mug"), mug.positionM);
      assert.deepEqual(poses.get("kit/mug-set"), mug.positionM);
    });
  }

  it("a kit dropped from above falls onto the table (MuJoCo)", () => {
    const world = new SimWorld({ model: "so101", seed: 2, engine: "mujoco" });
    world.resetScene(kitPlan());
    const mug = world.object("mug")!;
    mug.positionM[2] = 0.15;
    // Re-place with the raised pose: placeScene puts objects at rest, so rebuild physics from the world state.
    (world as unknown as { physics: { load(nowNs: bigint): void } }).physics.load(world.tNs);
    assert.ok(world.object("mug")!.positionM[2] > 0.14);
    world.advanceBy(1.5);
    assert.ok(Math.abs(world.object("mug")!.positionM[2] - 0.045) < 0.002, `fell and rests: z ${world.object("mug")!.positionM[2]}`);
  });

  it("is drawn in the top camera and reported by the cell's mocap source", async () => {
    const cell = await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 4, speed: Infinity });
    try {
      const plan = kitPlan();
      await cell.scene.reset(plan);
      const frame = await cell.cameras.find((c) => c.name === "top")!.capture();
      const [c, r, n] = tealCentroid(frame.rgb!, frame.width);
      const [x, y] = plan.objects.mug.positionM;
      const [ec, er] = topWorldToPixel(x, y);
      assert.ok(Math.hypot(c - ec, r - er) * TOP_CAMERA.metresPerPx < 0.0033, `centroid ${c},${r} vs ${ec},${er}`);
      const expectedArea = (0.07 * 0.05) / TOP_CAMERA.metresPerPx ** 2;
      assert.ok(Math.abs(n - expectedArea) < 0.2 * expectedArea, `area ${n} vs ${expectedArea}`);
      // Let a mocap frame of the placed scene go out.
      await cell.clock.sleepUntil(cell.clock.nowNs() + 100_000_000n);
      const { poses } = await cell.mocap!.readPoses();
      const kit = poses.find((p) => p.name === "kit/mug-set");
      assert.ok(kit, `mocap names: ${poses.map((p) => p.name).join(", ")}`);
      assert.ok(Math.hypot(kit.positionM[0] - x, kit.positionM[1] - y) < 0.005);
      assert.ok(poses.some((p) => p.name === "mug"));
    } finally {
      await cell.close();
    }
  });
});
