/**
 * Building an openpi request from an observation: shapes and dtypes per the resolved map, images
 * resized as openpi's resize_with_pad (black bars where it pads) or stretched, HWC or CHW, nested
 * key paths, and what a frame's pixels are read from.
 */
import assert from "node:assert/strict";
import sharp from "sharp";
import { buildOpenpiObservation, imageArray } from "../../protocol/policy/openpi/build-observation.js";
import type { NdArray } from "../../protocol/policy/openpi/msgpack-numpy.js";
import { resolveObservationMap, type ResolvedImage } from "../../protocol/policy/openpi/observation-map.js";
import type { PolicyCameraFrame, PolicyObservation } from "../../protocol/policy/policy-observation.js";

const CONTEXT = { cameras: ["top", "wrist"], state: ["joint_positions", "gripper_state"], dof: 6 };
const RED = [200, 40, 30];

function solid(width: number, height: number, [r, g, b]: number[]): Uint8Array {
  const rgb = new Uint8Array(width * height * 3);
  for (let p = 0; p < width * height; p++) rgb.set([r, g, b], p * 3);
  return rgb;
}

async function jpegFrame(width: number, height: number, colour = RED): Promise<PolicyCameraFrame> {
  const jpeg = await sharp(solid(width, height, colour), { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
  return { width, height, jpeg: new Uint8Array(jpeg) };
}

function pixel(image: NdArray, row: number, column: number): number[] {
  const data = image.data as Uint8Array;
  if (image.shape[0] === 3) {
    const [, h, w] = image.shape;
    return [0, 1, 2].map((c) => data[c * h * w + row * w + column]);
  }
  const w = image.shape[1];
  return [...data.subarray((row * w + column) * 3, (row * w + column) * 3 + 3)];
}

function near(actual: number[], expected: number[], tolerance = 10): void {
  assert.ok(actual.every((v, i) => Math.abs(v - expected[i]) <= tolerance), `${JSON.stringify(actual)} is not near ${JSON.stringify(expected)}`);
}

const target = (over: Partial<ResolvedImage>): ResolvedImage => ({ path: ["img"], camera: "top", width: 224, height: 224, layout: "hwc", resize: "pad", ...over });

describe("openpi build-observation", () => {
  it("preset droid: uint8 224x224x3 images, float32 state [6] and gripper [1], the prompt", async () => {
    const observation: PolicyObservation = {
      tNs: 0n, jointPositionsRad: [0.1, -0.2, 0.3, 0, 0, 1.5], gripperOpening: 0.25, instruction: "pick up the red cube",
      cameras: { top: await jpegFrame(640, 480), wrist: await jpegFrame(320, 240) },
    };
    const request = await buildOpenpiObservation(observation, resolveObservationMap({ preset: "droid" }, CONTEXT));
    assert.deepEqual(Object.keys(request).sort(), ["observation/exterior_image_1_left", "observation/gripper_position", "observation/joint_position", "observation/wrist_image_left", "prompt"]);
    for (const key of ["observation/exterior_image_1_left", "observation/wrist_image_left"]) {
      const image = request[key] as NdArray;
      assert.deepEqual([image.dtype, image.shape], ["|u1", [224, 224, 3]]);
    }
    const state = request["observation/joint_position"] as NdArray;
    assert.deepEqual([state.dtype, state.shape], ["<f4", [6]]);
    assert.deepEqual(state.toNumbers(), [0.1, -0.2, 0.3, 0, 0, 1.5].map(Math.fround));
    const gripper = request["observation/gripper_position"] as NdArray;
    assert.deepEqual([gripper.dtype, gripper.shape, gripper.toNumbers()], ["<f4", [1], [0.25]]);
    assert.equal(request.prompt, "pick up the red cube");
  });

  it("preset aloha: nested images.cam_high as 3x224x224, state, and no prompt key without an instruction", async () => {
    const observation: PolicyObservation = { tNs: 0n, jointPositionsRad: [0, 0, 0, 0, 0, 0], cameras: { top: await jpegFrame(640, 480), wrist: await jpegFrame(320, 240) } };
    const request = await buildOpenpiObservation(observation, resolveObservationMap({ preset: "aloha" }, CONTEXT));
    assert.deepEqual(Object.keys(request).sort(), ["images", "state"]);
    const images = request.images as Record<string, NdArray>;
    assert.deepEqual(Object.keys(images), ["cam_high", "cam_left_wrist"]);
    assert.deepEqual(images.cam_high.shape, [3, 224, 224]);
    near(pixel(images.cam_high, 112, 112), RED);
  });

  it("pads 640x480 to 224x224 as resize_with_pad: 224x168 centred, 28 black rows above and below", async () => {
    const image = await imageArray(await jpegFrame(640, 480), target({}));
    for (const row of [0, 27, 196, 223]) near(pixel(image, row, 112), [0, 0, 0], 0);
    for (const row of [29, 112, 194]) near(pixel(image, row, 112), RED);
    near(pixel(image, 112, 0), RED);
  });

  it("pads a wide frame in CHW with the same geometry (100x50 -> 64x64: 64x32 at row 16)", async () => {
    const image = await imageArray(await jpegFrame(100, 50), target({ width: 64, height: 64, layout: "chw" }));
    assert.deepEqual(image.shape, [3, 64, 64]);
    near(pixel(image, 15, 32), [0, 0, 0], 0);
    near(pixel(image, 17, 32), RED);
    near(pixel(image, 46, 32), RED);
    near(pixel(image, 48, 32), [0, 0, 0], 0);
  });

  it("stretch fills the whole size", async () => {
    const image = await imageArray(await jpegFrame(640, 480), target({ resize: "stretch", width: 96, height: 96 }));
    for (const row of [0, 48, 95]) near(pixel(image, row, 0), RED);
  });

  it("uses the RGB pixels a frame holds (exact at the same size), and decodes the JPEG instead of asking a lazy rgb getter", async () => {
    const rgb = solid(8, 4, [1, 2, 3]);
    const held = await imageArray({ width: 8, height: 4, jpeg: new Uint8Array([0xff]), rgb }, target({ width: 8, height: 4 }));
    assert.deepEqual([...(held.data as Uint8Array)], [...rgb]);

    const jpeg = (await jpegFrame(64, 48)).jpeg;
    const lazy = {
      width: 64, height: 48, jpeg,
      get rgb(): Uint8Array {
        throw new Error("rendered again");
      },
    };
    near(pixel(await imageArray(lazy, target({ width: 32, height: 24 })), 12, 16), RED);
  });

  it("says what is missing when the observation lacks a mapped camera, the joints or the gripper", async () => {
    const map = resolveObservationMap({ preset: "droid" }, CONTEXT);
    const frames = { top: await jpegFrame(64, 48), wrist: await jpegFrame(64, 48) };
    await assert.rejects(buildOpenpiObservation({ tNs: 0n, cameras: { top: frames.top }, jointPositionsRad: [0, 0, 0, 0, 0, 0], gripperOpening: 1 }, map), /camera "wrist" has no frame in this observation \(it has: top\)/);
    await assert.rejects(buildOpenpiObservation({ tNs: 0n, cameras: frames, gripperOpening: 1 }, map), /no joint positions/);
    await assert.rejects(buildOpenpiObservation({ tNs: 0n, cameras: frames, jointPositionsRad: [0, 0, 0, 0, 0, 0] }, map), /no gripper opening/);
  });
});
