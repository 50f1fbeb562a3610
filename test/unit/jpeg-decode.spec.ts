/**
 * The reference policies see the cameras through `decodeJpeg`: libjpeg-turbo (the binding that encodes the
 * frames) where it loads, jpeg-js otherwise. The two decoders round and upsample chroma differently; what a
 * policy reads from the picture (the red cube's mask, its centroid) must not depend on which one ran.
 */
import assert from "node:assert/strict";
import { CameraRenderer, type RenderScene } from "../../simulators/render/rasterizer.js";
import { decodeJpeg, decodeJpegInJavaScript, encodeJpegSync } from "../../simulators/render/jpeg-codec.js";
import { adaptiveRedMask, components, fixedRedMask, maskBoundingBox, squarePose } from "../../simulators/policies/vision.js";
import { forwardKinematics, inverseKinematics } from "../../simulators/world/kinematics.js";
import { makeObject } from "../../simulators/world/objects.js";

function frame(camera: string, lighting: string): { jpeg: Uint8Array; width: number; height: number } {
  const arm = inverseKinematics([0.21, 0.03, 0.1], 0);
  assert.ok(arm);
  const scene: RenderScene = { objects: [makeObject("cube", "cube", [0.21, 0.02, 0.015], 0.3)], tool: forwardKinematics(arm), opening: 1, arm, lighting, noiseSeed: 7 };
  const image = new CameraRenderer(camera).render(scene);
  return { jpeg: encodeJpegSync(image.rgb, image.width, image.height, 80), width: image.width, height: image.height };
}

/** What the expert reads from a red mask: its largest blob's pixel count, centre and yaw (in pixel units). */
function largestBlob(mask: Uint8Array, width: number): { n: number; column: number; row: number; yawRad: number } | null {
  const blobs = components(mask, width);
  if (blobs.length === 0) return null;
  const largest = blobs.reduce((a, b) => (b.length > a.length ? b : a));
  const pose = squarePose(largest.map((p) => [p % width, Math.floor(p / width)] as [number, number]));
  return { n: largest.length, column: pose.xM, row: pose.yM, yawRad: pose.yawRad };
}

describe("decoding the cameras' JPEGs for the reference policies", () => {
  for (const [camera, lighting] of ["nominal", "dim", "bright", "warm"].flatMap((l) => [["top", l], ["wrist", l]])) {
    it(`gives the policy the same picture and the same cube whichever decoder runs (${camera} camera, ${lighting} light)`, () => {
      const seen = frame(camera!, lighting!);
      const native = decodeJpeg(seen.jpeg);
      const js = decodeJpegInJavaScript(seen.jpeg);
      assert.equal(native.width, seen.width);
      assert.equal(native.height, seen.height);
      assert.equal(native.rgb.length, seen.width * seen.height * 3);
      assert.equal(js.rgb.length, native.rgb.length);
      let sum = 0;
      for (let i = 0; i < native.rgb.length; i++) sum += Math.abs(native.rgb[i] - js.rgb[i]);
      assert.ok(sum / native.rgb.length < 2, `mean difference ${(sum / native.rgb.length).toFixed(2)} levels`);
      // The expert: the largest blob of the adaptive mask, its centre and yaw (squarePose), its size against
      // the expected one (accepted between 0.35 and 2.2 times). The two decoders smooth the cube's edges
      // differently (libjpeg-turbo's chroma upsampling is interpolated), so its area differs by a few %.
      const a = largestBlob(adaptiveRedMask(native), seen.width);
      const b = largestBlob(adaptiveRedMask(js), seen.width);
      assert.ok(a && b && b.n > 100, "the cube is in the picture for both");
      assert.ok(Math.abs(a.n - b.n) <= 0.12 * b.n, `area ${a.n} against ${b.n} pixels`);
      assert.ok(Math.hypot(a.column - b.column, a.row - b.row) < 0.5, `centre (${a.column}, ${a.row}) against (${b.column}, ${b.row})`);
      assert.ok(Math.abs(a.yawRad - b.yawRad) < 0.02, `yaw ${a.yawRad} against ${b.yawRad} rad`);
      // The novice: the centre of the fixed mask's bounding box (nothing under dim light for either). A box
      // moves with its outermost pixel: within 2 px, 1.1 mm on the table (0.55 mm a top pixel).
      const boxA = maskBoundingBox(fixedRedMask(native), seen.width);
      const boxB = maskBoundingBox(fixedRedMask(js), seen.width);
      if (!boxB) assert.equal(boxA, null, "nothing red for either decoder");
      else {
        assert.ok(boxA, "the fixed mask finds the cube for both");
        assert.ok(Math.hypot((boxA.c0 + boxA.c1) / 2 - (boxB.c0 + boxB.c1) / 2, (boxA.r0 + boxA.r1) / 2 - (boxB.r0 + boxB.r1) / 2) <= 2, `box ${JSON.stringify(boxA)} against ${JSON.stringify(boxB)}`);
      }
    });
  }

  it("refuses bytes that are not a JPEG with an error, as jpeg-js does", () => {
    const notJpeg = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]);
    assert.throws(() => decodeJpeg(notJpeg));
    assert.throws(() => decodeJpegInJavaScript(notJpeg));
  });
});
