/**
 * The simulated cameras draw what a camera on the cell would see: the arm's links and gripper where
 * forward kinematics puts them and the published calibration projects them, the objects where their
 * poses project, at the cameras' full resolution.
 */
import assert from "node:assert/strict";
import { SimCamera } from "../../simulators/devices/sim-camera.js";
import { TOP_CAMERA, topWorldToPixel, WRIST_CAMERA, wristMetresPerPx, wristWorldToPixel } from "../../simulators/render/camera-calibration.js";
import { decodeJpeg } from "../../simulators/render/jpeg-codec.js";
import { CameraRenderer, type RenderScene } from "../../simulators/render/rasterizer.js";
import { adaptiveRedMask, fixedRedMask } from "../../simulators/policies/vision.js";
import { fingerPoints } from "../../simulators/world/grasp.js";
import { chainPoints, forwardKinematics, inverseKinematics } from "../../simulators/world/kinematics.js";
import { makeObject, type SimObject } from "../../simulators/world/objects.js";
import { SimWorld } from "../../simulators/world/sim-world.js";

type Image = { width: number; height: number; rgb: Uint8Array };

function armAt(x: number, y: number, z: number, yawRad: number): number[] {
  const arm = inverseKinematics([x, y, z], yawRad);
  assert.ok(arm, `reachable: ${x}, ${y}, ${z}`);
  return arm;
}

function cube(x: number, y: number, yawRad = 0.2): SimObject {
  return makeObject("cube", "cube", [x, y, 0.015], yawRad);
}

function scene(arm: number[], opening: number, objects: SimObject[], lighting = "nominal"): RenderScene {
  return { objects, tool: forwardKinematics(arm), opening, arm, lighting, noiseSeed: 12345 };
}

function pixel(image: Image, column: number, row: number): [number, number, number] {
  const i = (Math.floor(row) * image.width + Math.floor(column)) * 3;
  return [image.rgb[i], image.rgb[i + 1], image.rgb[i + 2]];
}

/** Centroid (column, row) and count of strongly red pixels. */
function redBlob(image: Image): [number, number, number] {
  let sc = 0, sr = 0, n = 0;
  for (let p = 0; p < image.width * image.height; p++) {
    const [r, g, b] = [image.rgb[p * 3], image.rgb[p * 3 + 1], image.rgb[p * 3 + 2]];
    if (r > 2 * Math.max(g, b) + 20) {
      sc += (p % image.width) + 0.5;
      sr += Math.floor(p / image.width) + 0.5;
      n++;
    }
  }
  return [sc / n, sr / n, n];
}

const isLink = ([r, g, b]: number[]) => Math.min(r, g, b) > 170 && Math.max(r, g, b) - Math.min(r, g, b) < 25;
const isDark = ([r, g, b]: number[]) => Math.max(r, g, b) < 90;
const isTable = ([r, g, b]: number[]) => [r, g, b].every((v) => Math.abs(v - 140) < 16);

describe("simulated camera rendering", () => {
  it("captures 640x480 overhead and oblique frames and 320x240 wrist frames, JPEG and RGB alike", async () => {
    const world = new SimWorld({ model: "so101", seed: 1, engine: "kinematic" });
    for (const [name, width, height] of [["top", 640, 480], ["wrist", 320, 240], ["head", 640, 480]] as const) {
      const frame = await new SimCamera(world, name).capture();
      assert.deepEqual([frame.width, frame.height], [width, height], name);
      assert.equal(frame.rgb!.length, width * height * 3);
      const decoded = decodeJpeg(frame.jpeg);
      assert.deepEqual([decoded.width, decoded.height], [width, height], `${name} JPEG`);
    }
    assert.deepEqual([TOP_CAMERA.width, TOP_CAMERA.height, WRIST_CAMERA.width, WRIST_CAMERA.height], [640, 480, 320, 240]);
  });

  it("shows the scene as it was at capture, whether the frame is read at once or later", async () => {
    const world = new SimWorld({ model: "so101", seed: 2, engine: "kinematic" });
    world.resetScene({ objects: { cube: { object: "cube", positionM: [0.2, 0, 0.015], yawRad: 0 } }, lighting: "nominal", distractors: [], homeRad: new Array(6).fill(0) });
    const camera = new SimCamera(world, "top");
    const first = await camera.capture(); // read at once, below
    const [c0] = redBlob({ width: first.width, height: first.height, rgb: decodeJpeg(first.jpeg).rgb });
    const unread = await camera.capture(); // left unread while the next one is taken
    world.object("cube")!.positionM[0] = 0.3;
    await camera.capture();
    const late = await camera.capture();
    const rgb = unread.rgb!;
    assert.ok(Math.abs(redBlob({ width: 640, height: 480, rgb })[0] - c0) < 1, "the unread frame, read later, still has the cube at x = 0.2 m");
    const [cLate] = redBlob({ width: 640, height: 480, rgb: decodeJpeg(late.jpeg).rgb });
    assert.ok(Math.abs(cLate - topWorldToPixel(0.3, 0)[0]) < 2, `the cube moved to x = 0.3 m: column ${cLate}`);
    // A frame's RGB is the picture its JPEG encodes.
    const decoded = decodeJpeg(unread.jpeg).rgb;
    let error = 0;
    for (let i = 0; i < rgb.length; i++) error += Math.abs(rgb[i] - decoded[i]);
    assert.ok(error / rgb.length < 3, `mean JPEG error ${error / rgb.length} levels`);
  });

  it("draws the arm's links in the overhead image where forward kinematics and the calibration put them", () => {
    const arm = armAt(0.26, 0.07, 0.1, 0.4);
    const image = new CameraRenderer("top").render(scene(arm, 1, []));
    const [, shoulder, elbow, wrist] = chainPoints(arm);
    for (const [a, b, name] of [[shoulder, elbow, "upper arm"], [elbow, wrist, "forearm"]] as const) {
      const across = [-(b[1] - a[1]), b[0] - a[0]];
      const norm = Math.hypot(across[0], across[1]);
      for (const t of [0.3, 0.5, 0.7]) {
        const x = a[0] + (b[0] - a[0]) * t;
        const y = a[1] + (b[1] - a[1]) * t;
        if (x < TOP_CAMERA.xMinM + 0.01) continue; // the base end is outside the view
        const [c, r] = topWorldToPixel(x, y);
        assert.ok(isLink(pixel(image, c, r)), `${name} at ${t}: ${pixel(image, c, r)} at ${c},${r}`);
        // 4 cm to the side of the link's axis is bare table.
        const [c2, r2] = topWorldToPixel(x + (0.04 * across[0]) / norm, y + (0.04 * across[1]) / norm);
        assert.ok(isTable(pixel(image, c2, r2)), `beside the ${name} at ${t}: ${pixel(image, c2, r2)}`);
      }
    }
    // The gripper seen from above: the dark palm over the fingers.
    for (const [fx, fy] of fingerPoints(forwardKinematics(arm), 1)) {
      const [c, r] = topWorldToPixel(fx, fy);
      assert.ok(isDark(pixel(image, c, r)), `finger at ${c},${r}: ${pixel(image, c, r)}`);
    }
  });

  it("draws the cube where its pose projects, and the gripper above it hides it from the overhead camera", () => {
    const renderer = new CameraRenderer("top");
    const away = renderer.render(scene(armAt(0.25, 0.09, 0.1, 0), 1, [cube(0.21, -0.05)]));
    const [c, r, n] = redBlob(away);
    const [ec, er] = topWorldToPixel(0.21, -0.05);
    assert.ok(Math.hypot(c - ec, r - er) < 0.5, `centroid ${c},${r} vs ${ec},${er}`);
    const area = (0.03 / TOP_CAMERA.metresPerPx) ** 2;
    assert.ok(Math.abs(n - area) < 0.03 * area, `area ${n} vs ${area}`);
    const over = renderer.render(scene(armAt(0.21, -0.05, 0.05, 0.2), 1, [cube(0.21, -0.05)]));
    assert.ok(redBlob(over)[2] < 0.5 * n, `with the gripper above it the cube shows ${redBlob(over)[2]} of ${n} px`);
  });

  it("draws the cube's top face and the closing fingers in the wrist image where the pinhole projects them", () => {
    const arm = armAt(0.21 + 0.01, -0.05 + 0.006, 0.07, 0.2);
    const tool = forwardKinematics(arm);
    const tip = { xM: tool.positionM[0], yM: tool.positionM[1], zM: tool.positionM[2], yawRad: tool.yawRad };
    const renderer = new CameraRenderer("wrist");
    // Wide open, the fingers are outside the view.
    const open = renderer.render(scene(arm, 1, [cube(0.21, -0.05, 0.2)]));
    assert.deepEqual([open.width, open.height], [320, 240]);
    const [c, r, n] = redBlob(open);
    const [ec, er] = wristWorldToPixel(0.21, -0.05, 0.03, tip);
    assert.ok(Math.hypot(c - ec, r - er) < 1, `cube centroid ${c},${r} vs top face ${ec},${er}`);
    const topFacePx = (0.03 / wristMetresPerPx(tip.zM, 0.03)) ** 2;
    assert.ok(Math.abs(n - topFacePx) < 0.05 * topFacePx, `${n} red px; the top face alone is ${topFacePx}`);
    // Closing, each finger rod 1 cm above its lower end (4 cm below the camera) is dark, near the top or bottom edge.
    const image = renderer.render(scene(arm, 0.4, [cube(0.21, -0.05, 0.2)]));
    for (const [fx, fy] of fingerPoints(tool, 0.4)) {
      const [fc, fr] = wristWorldToPixel(fx, fy, tip.zM + 0.01, tip);
      assert.ok(fr > 0 && fr < image.height, `finger row ${fr}`);
      assert.ok(isDark(pixel(image, fc, fr)), `finger at ${fc},${fr}: ${pixel(image, fc, fr)}`);
    }
  });

  it("never shows the arm as red to the reference policies' vision, under any lighting", () => {
    const arm = armAt(0.24, 0.02, 0.04, 0.5);
    for (const lighting of ["nominal", "dim", "bright", "warm"]) {
      for (const name of ["top", "wrist"]) {
        const image = new CameraRenderer(name).render(scene(arm, 0.5, [], lighting));
        const adaptive = adaptiveRedMask(image).reduce((a, b) => a + b, 0);
        const fixed = fixedRedMask(image).reduce((a, b) => a + b, 0);
        assert.equal(adaptive + fixed, 0, `${name} under ${lighting}: ${adaptive} adaptive, ${fixed} fixed red pixels`);
      }
    }
  });
});
