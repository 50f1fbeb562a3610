/**
 * The simulated cameras' published calibration (recorded in every episode's /meta and shipped in
 * calibration exports) agrees with how the simulator renders: a pixel taken through the recorded
 * intrinsics and extrinsics lands where the renderer's own pixel-to-world mapping puts it.
 */
import assert from "node:assert/strict";
import { simCameraCalibration, topPixelToWorld, wristPixelToWorld, wristWorldToPixel } from "../../simulators/render/camera-calibration.js";

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
    assert.deepEqual([cal.width, cal.height], [640, 480]);
    for (const [column, row] of [[0, 0], [640, 480], [150, 361]] as const) {
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

  it("wrist: pinhole rays through the extrinsics meet the table (or a cube's top plane) where the renderer maps the pixel", () => {
    const cal = simCameraCalibration("wrist")!;
    assert.deepEqual([cal.width, cal.height], [320, 240]);
    const tip = { xM: 0.21, yM: -0.04, zM: 0.06, yawRad: 0.7 };
    const yaw = [0, 0, Math.sin(tip.yawRad / 2), Math.cos(tip.yawRad / 2)] as [number, number, number, number];
    // The table, and the plane of a 3 cm cube's top face.
    for (const planeZM of [0, 0.03]) {
      for (const [column, row] of [[160, 120], [0, 0], [301, 26]] as const) {
        const ray = rotate(cal.extrinsics.rotation_xyzw, [(column - cal.cx!) / cal.fx!, (row - cal.cy!) / cal.fy!, 1]);
        const origin = cal.extrinsics.translation_m;
        // Tool frame -> world: yaw about z, then the fingertip position.
        const o = rotate(yaw, origin).map((v, i) => v + [tip.xM, tip.yM, tip.zM][i]!) as Vec3;
        const d = rotate(yaw, ray);
        const s = (planeZM - o[2]) / d[2];
        const [x, y] = wristPixelToWorld(column, row, tip, planeZM);
        close(o[0] + s * d[0], x, `x of pixel ${column},${row} on z = ${planeZM}`);
        close(o[1] + s * d[1], y, `y of pixel ${column},${row} on z = ${planeZM}`);
        const [c, r] = wristWorldToPixel(x, y, planeZM, tip);
        close(c, column, `column back from ${x},${y},${planeZM}`);
        close(r, row, `row back from ${x},${y},${planeZM}`);
      }
    }
  });

  it("oblique cameras publish none", () => {
    assert.equal(simCameraCalibration("side"), undefined);
  });
});
