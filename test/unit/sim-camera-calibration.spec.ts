/**
 * The simulated cameras' published calibration (recorded in every episode's /meta and shipped in
 * calibration exports) agrees with how the simulator renders: a pixel taken through the recorded
 * intrinsics and extrinsics lands where the renderer's own pixel-to-world mapping puts it.
 */
import assert from "node:assert/strict";
import { simCameraCalibration, topPixelToWorld, wristPixelToWorld } from "../../simulators/render/camera-calibration.js";

type Vec3 = [number, number, number];

/** Rotates v by the unit quaternion q = [x, y, z, w]. */
function rotate(q: [number, number, number, number], v: Vec3): Vec3 {
  const [x, y, z, w] = q;
  const m = [
    [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
    [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
    [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
  ];
  return m.map((row) => row[0]! * v[0] + row[1]! * v[1] + row[2]! * v[2]) as Vec3;
}

const close = (a: number, b: number, what: string) => assert.ok(Math.abs(a - b) < 1e-9, `${what}: ${a} vs ${b}`);

describe("simulated camera calibration", () => {
  it("top: orthographic pixels through the extrinsics land where the renderer maps them", () => {
    const cal = simCameraCalibration("top")!;
    for (const [column, row] of [[0, 0], [160, 120], [37.5, 90.25]] as const) {
      // Camera frame: x right, y down, origin at the optical centre (the image centre).
      const local: Vec3 = [(column - cal.width / 2) * cal.metres_per_px!, (row - cal.height / 2) * cal.metres_per_px!, 0];
      const world = rotate(cal.extrinsics.rotation_xyzw, local).map((v, i) => v + cal.extrinsics.translation_m[i]!);
      const [x, y] = topPixelToWorld(column, row);
      close(world[0]!, x, `x of pixel ${column},${row}`);
      close(world[1]!, y, `y of pixel ${column},${row}`);
    }
    // Looking down: the optical axis is world -z.
    assert.deepEqual(rotate(cal.extrinsics.rotation_xyzw, [0, 0, 1]).map((v) => Math.round(v)), [0, 0, -1]);
  });

  it("wrist: pinhole rays through the extrinsics meet the table where the renderer maps the pixel", () => {
    const cal = simCameraCalibration("wrist")!;
    const tip = { xM: 0.21, yM: -0.04, zM: 0.06, yawRad: 0.7 };
    const yaw = [0, 0, Math.sin(tip.yawRad / 2), Math.cos(tip.yawRad / 2)] as [number, number, number, number];
    for (const [column, row] of [[80, 60], [0, 0], [150.5, 13]] as const) {
      const ray = rotate(cal.extrinsics.rotation_xyzw, [(column - cal.cx!) / cal.fx!, (row - cal.cy!) / cal.fy!, 1]);
      const origin = cal.extrinsics.translation_m;
      // Tool frame -> world: yaw about z, then the fingertip position.
      const o = rotate(yaw, origin).map((v, i) => v + [tip.xM, tip.yM, tip.zM][i]!) as Vec3;
      const d = rotate(yaw, ray);
      const s = -o[2] / d[2];
      const [x, y] = wristPixelToWorld(column, row, tip);
      close(o[0] + s * d[0], x, `x of pixel ${column},${row}`);
      close(o[1] + s * d[1], y, `y of pixel ${column},${row}`);
    }
  });

  it("oblique cameras publish none", () => {
    assert.equal(simCameraCalibration("side"), undefined);
  });
});
