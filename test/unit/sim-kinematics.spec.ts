import assert from "node:assert/strict";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { embodimentFor, jointsOf, armOf, openingOf } from "../../simulators/world/embodiments.js";
import { forwardKinematics, inverseKinematics, squareYawError } from "../../simulators/world/kinematics.js";

describe("simulated arm kinematics", () => {
  it("inverse kinematics round-trips through forward kinematics over the workspace", () => {
    for (let x = 0.15; x <= 0.3001; x += 0.025) {
      for (let y = -0.1; y <= 0.1001; y += 0.025) {
        for (const z of [0.015, 0.05, 0.12]) {
          const yaw = 0.3;
          const arm = inverseKinematics([x, y, z], yaw);
          assert.ok(arm, `unreachable: ${x}, ${y}, ${z}`);
          const tool = forwardKinematics(arm);
          assert.ok(Math.hypot(tool.positionM[0] - x, tool.positionM[1] - y, tool.positionM[2] - z) < 1e-9);
          assert.ok(Math.abs(tool.yawRad - yaw) < 1e-9);
        }
      }
    }
  });

  it("points the tool straight down where it can", () => {
    const tool = forwardKinematics(inverseKinematics([0.2, 0, 0.02], 0)!);
    assert.ok(Math.abs(tool.pitchRad + Math.PI / 2) < 1e-9);
  });

  it("measures yaw error with a square's 90 degree symmetry", () => {
    const deg = Math.PI / 180;
    assert.ok(Math.abs(squareYawError(85 * deg, -3 * deg) - 2 * deg) < 1e-12);
    assert.ok(Math.abs(squareYawError(40 * deg, -40 * deg) - 10 * deg) < 1e-12);
  });

  it("gives every catalog model an arm and a gripper within its joints", () => {
    for (const model of loadFirmwarePins().models) {
      const e = embodimentFor(model.id);
      const used = [...e.armJoints, e.gripperJoint];
      assert.equal(new Set(used).size, 6, model.id);
      assert.ok(used.every((i) => i >= 0 && i < model.dof), model.id);
      const joints = jointsOf(e, [0.1, 0.2, 0.3, 0.4, 0.5], 0.5);
      assert.equal(joints.length, model.dof);
      assert.deepEqual(armOf(e, joints), [0.1, 0.2, 0.3, 0.4, 0.5]);
      assert.ok(Math.abs(openingOf(e, joints) - 0.5) < 1e-12);
    }
  });
});
