import assert from "node:assert/strict";
import type { ResetPlan } from "../../cell-agent/hardware/types.js";
import { TOP_CAMERA, topPixelToWorld, topWorldToPixel, wristPixelToWorld } from "../../simulators/render/camera-calibration.js";
import { decodeJpeg } from "../../simulators/render/jpeg-codec.js";
import { createSimulatedCell } from "../../simulators/sim-cell-hardware.js";
import { embodimentFor, jointsOf } from "../../simulators/world/embodiments.js";
import { inverseKinematics } from "../../simulators/world/kinematics.js";

function plan(lighting: string): ResetPlan {
  return {
    objects: { cube: { object: "cube", positionM: [0.24, -0.04, 0.015], yawRad: 0.3 } },
    lighting,
    distractors: [{ object: "block-blue", positionM: [0.17, 0.06, 0.015], yawRad: 0 }],
    homeRad: new Array(6).fill(0),
  };
}

/** Centroid of strongly red pixels. */
function redCentroid(rgb: Uint8Array, width: number): [number, number, number] {
  let sc = 0, sr = 0, n = 0;
  for (let p = 0; p < rgb.length / 3; p++) {
    const [r, g, b] = [rgb[p * 3], rgb[p * 3 + 1], rgb[p * 3 + 2]];
    if (r > 2 * Math.max(g, b) + 20) {
      sc += (p % width) + 0.5;
      sr += Math.floor(p / width) + 0.5;
      n++;
    }
  }
  return [sc / n, sr / n, n];
}

describe("simulated cameras", () => {
  it("draws the cube in the top image where the calibration says", async () => {
    const cell = await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 4, speed: Infinity });
    await cell.scene.reset(plan("nominal"));
    const top = cell.cameras.find((c) => c.name === "top")!;
    const frame = await top.capture();
    const [c, r, n] = redCentroid(frame.rgb!, frame.width);
    const [ec, er] = topWorldToPixel(0.24, -0.04);
    // Within 1.1 mm (2 px): the placement's settle noise is up to 0.5 mm per axis.
    assert.ok(Math.hypot(c - ec, r - er) < 2, `centroid ${c},${r} vs ${ec},${er}`);
    assert.ok(Math.abs(n - (0.03 / TOP_CAMERA.metresPerPx) ** 2) < 30 * 16, `area ${n}`);
    const [x, y] = topPixelToWorld(c, r);
    assert.ok(Math.hypot(x - 0.24, y + 0.04) < 0.001);
    // The JPEG is the same picture.
    const decoded = decodeJpeg(frame.jpeg);
    const [dc, dr] = redCentroid(decoded.rgb, decoded.width);
    assert.ok(Math.hypot(dc - ec, dr - er) < 4);
    await cell.close();
  });

  it("centres the wrist view under the fingertip", async () => {
    const cell = await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 5, speed: Infinity });
    await cell.scene.reset(plan("nominal"));
    const e = embodimentFor("so101");
    await cell.motors.writeGoalPositions(jointsOf(e, inverseKinematics([0.25, -0.03, 0.08], 0.7)!, 1));
    await cell.clock.sleepUntil(cell.clock.nowNs() + 2_000_000_000n);
    const frame = await cell.cameras.find((c) => c.name === "wrist")!.capture();
    const [c, r] = redCentroid(frame.rgb!, frame.width);
    const tool = cell.world.toolPose();
    // A pinhole: the cube's top face (z = 3 cm) is what it sees of the cube.
    const [x, y] = wristPixelToWorld(c, r, { xM: tool.positionM[0], yM: tool.positionM[1], zM: tool.positionM[2], yawRad: tool.yawRad }, 0.03);
    assert.ok(Math.hypot(x - 0.24, y + 0.04) < 0.002, `${x}, ${y}`);
    await cell.close();
  });

  it("darkens the image under dim light and tints it under warm light", async () => {
    const mean = async (lighting: string) => {
      const cell = await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 6, speed: Infinity });
      await cell.scene.reset(plan(lighting));
      const rgb = (await cell.cameras.find((c) => c.name === "top")!.capture()).rgb!;
      await cell.close();
      const sums = [0, 0, 0];
      rgb.forEach((v, i) => (sums[i % 3] += v));
      return sums.map((s) => s / (rgb.length / 3));
    };
    const [nominal, dim, warm] = [await mean("nominal"), await mean("dim"), await mean("warm")];
    assert.ok(dim[0] < nominal[0] * 0.6);
    assert.ok(warm[0] > warm[2] * 1.4 && nominal[0] < nominal[2] * 1.1);
  });

  it("builds only the instruments the environment has", async () => {
    const bench = await createSimulatedCell({ model: "stretch3", firmware: "0.8.4", environment: "bench-bare@1", seed: 1, speed: Infinity });
    assert.deepEqual(bench.cameras.map((c) => c.name), ["wrist"]);
    assert.equal(bench.mocap, undefined);
    assert.equal(bench.wristFt, undefined);
    assert.ok(bench.gripper);
    await bench.close();
    const kitchen = await createSimulatedCell({ model: "g1", firmware: "1.4.2", environment: "kitchen-replica@2", seed: 1, speed: Infinity });
    assert.deepEqual(kitchen.cameras.map((c) => c.name), ["top", "wrist", "head"]);
    assert.deepEqual(kitchen.motors.jointNames.length, 23);
    await kitchen.close();
    await assert.rejects(createSimulatedCell({ model: "so101", firmware: "9.9", environment: "tabletop@1", seed: 1, speed: 1 }), /releases: 3.10, 3.11/);
  });
});
