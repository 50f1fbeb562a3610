import assert from "node:assert/strict";
import sharp from "sharp";
import { imageTensorData } from "../../protocol/policy/onnx/image-input.js";
import { GaussianNoise } from "../../protocol/policy/onnx/noise-input.js";
import { OnnxPolicy } from "../../protocol/policy/onnx/onnx-policy.js";
import { stateVector, type PolicyCameraFrame } from "../../protocol/policy/onnx/policy-observation.js";
import { cameraStatePolicy, convImagePolicy, encodeModel, linearStatePolicy, mlpStatePolicy, node, noisyLinearPolicy, valueInfo } from "../support/onnx-models.js";

const close = (actual: number[][], expected: number[][], tolerance = 1e-6) => {
  assert.equal(actual.length, expected.length, `rows: ${JSON.stringify(actual)}`);
  actual.forEach((row, r) => row.forEach((v, c) => assert.ok(Math.abs(v - expected[r][c]) <= tolerance, `[${r}][${c}] ${v} != ${expected[r][c]}`)));
};
const rgbFrame = (width: number, height: number, rgb: number[] | Uint8Array): PolicyCameraFrame => ({ width, height, jpeg: new Uint8Array(0), rgb: Uint8Array.from(rgb) });
const mean = (values: ArrayLike<number>) => Array.from(values).reduce((a, b) => a + b, 0) / values.length;

describe("OnnxPolicy", function () {
  this.timeout(60_000);
  const fetches: unknown[] = [];
  const realFetch = globalThis.fetch;
  before(() => {
    globalThis.fetch = ((input: unknown) => {
      fetches.push(input);
      return Promise.reject(new Error("no network in this test"));
    }) as typeof fetch;
  });
  after(() => {
    globalThis.fetch = realFetch;
  });

  it("returns state @ W + b as the chunk's rows", async () => {
    // dof 2; state = joint_positions (2) + gripper_state (1).
    const weights = [[1, 0, 2, 0], [0, 1, 0, -1], [3, 0, 0, 1]];
    const policy = await OnnxPolicy.load(
      linearStatePolicy({ stateWidth: 3, dof: 2, chunk: 2, weights, bias: [0.1, 0.2, 0.3, 0.4] }),
      { dof: 2, cameras: [], state: ["joint_positions", "gripper_state"] },
    );
    // x = [0.5, -1, 0.25]: x @ W = [1.25, -1, 1, 1.25]; + b = [1.35, -0.8, 1.3, 1.65]
    close(await policy.infer({ jointPositionsRad: [0.5, -1], gripperOpening: 0.25, cameras: {} }), [[1.35, -0.8], [1.3, 1.65]]);
    await policy.release();
  });

  it("holds the pose with the default weights, one row per step for a one-step model", async () => {
    const policy = await OnnxPolicy.load(linearStatePolicy({ stateWidth: 7, dof: 6 }), { dof: 6, cameras: [], state: ["joint_positions", "gripper_state"] });
    const pose = [0.1, -0.2, 0.3, -0.4, 0.5, -0.6];
    close(await policy.infer({ jointPositionsRad: pose, gripperOpening: 1, cameras: {} }), [pose]);
    await policy.release();
  });

  it("runs a model whose initializers are also graph inputs, and one with a symbolic batch", async () => {
    for (const bytes of [linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 2, opset: 9, initializersAsInputs: true }), linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 2, batch: "batch" })]) {
      const policy = await OnnxPolicy.load(bytes, { dof: 6, cameras: [], state: ["joint_positions"] });
      close(await policy.infer({ jointPositionsRad: [1, 2, 3, 4, 5, 6], cameras: {} }), [[1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]]);
      await policy.release();
    }
  });

  it("feeds a camera as RGB in [0, 1]: the image-mean model adds the mean pixel to every target", async () => {
    const policy = await OnnxPolicy.load(
      cameraStatePolicy({ stateWidth: 2, dof: 2, chunk: 1, camera: "top", height: 2, width: 2 }),
      { dof: 2, cameras: ["top"], state: ["joint_positions"] },
    );
    // Same size: no resampling. (0*3 + 255*3 + 51+102+153 + 255) / 255 / 12 = 0.43333...
    const exact = rgbFrame(2, 2, [0, 0, 0, 255, 255, 255, 51, 102, 153, 255, 0, 0]);
    close(await policy.infer({ jointPositionsRad: [1, -1], cameras: { top: exact } }), [[1 + 1326 / 255 / 12, -1 + 1326 / 255 / 12]]);
    // Resized from raw RGB: a uniform image stays uniform.
    const uniform = rgbFrame(8, 6, new Uint8Array(8 * 6 * 3).fill(102));
    close(await policy.infer({ jointPositionsRad: [0, 0], cameras: { top: uniform } }), [[0.4, 0.4]]);
    // Decoded and resized from the JPEG: within JPEG's error of mid grey.
    const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 128, g: 128, b: 128 } } }).jpeg().toBuffer();
    close(await policy.infer({ jointPositionsRad: [0, 0], cameras: { top: { width: 64, height: 48, jpeg } } }), [[128 / 255, 128 / 255]], 2 / 255);
    await assert.rejects(policy.infer({ jointPositionsRad: [0, 0], cameras: {} }), /the observation has no frame from camera top, which the model reads as observation.images.top/);
    await policy.release();
  });

  it("reads the camera but adds nothing with image gain 0 (a hold-pose model over the image path)", async () => {
    const policy = await OnnxPolicy.load(
      cameraStatePolicy({ stateWidth: 2, dof: 2, chunk: 1, camera: "top", height: 2, width: 2, imageGain: 0 }),
      { dof: 2, cameras: ["top"], state: ["joint_positions"] },
    );
    close(await policy.infer({ jointPositionsRad: [0.3, -0.3], cameras: { top: rgbFrame(2, 2, new Uint8Array(12).fill(200)) } }), [[0.3, -0.3]]);
    await assert.rejects(policy.infer({ jointPositionsRad: [0, 0], cameras: {} }), /the observation has no frame from camera top/);
    await policy.release();
  });

  it("feeds a frame at its own size when the model's H and W are symbolic", async () => {
    const policy = await OnnxPolicy.load(
      cameraStatePolicy({ stateWidth: 2, dof: 2, camera: "wrist", height: "h", width: "w" }),
      { dof: 2, cameras: ["wrist"], state: ["joint_positions"] },
    );
    const pixels = Array.from({ length: 5 * 3 * 3 }, (_, i) => (i * 37) % 256);
    const expected = mean(pixels) / 255;
    close(await policy.infer({ jointPositionsRad: [0, 0], cameras: { wrist: rgbFrame(5, 3, pixels) } }), [[expected, expected]]);
    const tensor = await imageTensorData("wrist", rgbFrame(5, 3, pixels));
    assert.deepEqual([tensor.height, tensor.width, tensor.data.length], [3, 5, 45]);
    await policy.release();
  });

  it("lays pixels out channels first", async () => {
    const tensor = await imageTensorData("top", rgbFrame(2, 1, [10, 20, 30, 40, 50, 60]));
    assert.deepEqual(Array.from(tensor.data, (v) => Math.round(v * 255)), [10, 40, 20, 50, 30, 60]);
    await assert.rejects(imageTensorData("top", { width: 2, height: 1, jpeg: new Uint8Array(0) }), /camera top's frame has neither JPEG bytes nor RGB pixels/);
  });

  it("builds observation.state in the contract's channel order", () => {
    const observation = {
      jointPositionsRad: [1, 2], jointVelocitiesRadS: [3, 4], gripperOpening: 0.5,
      wristWrench: { forceN: [5, 6, 7], torqueNm: [8, 9, 10] }, cameras: {},
    };
    assert.deepEqual(Array.from(stateVector(observation, ["gripper_state", "joint_positions"], 2)), [0.5, 1, 2]);
    assert.deepEqual(Array.from(stateVector(observation, ["joint_velocities", "ft_wrist"], 2)), [3, 4, 5, 6, 7, 8, 9, 10]);
    assert.throws(() => stateVector({ cameras: {} }, ["ft_wrist"], 2), /the observation has no ft_wrist, which policy.observation_contract.state lists/);
    assert.throws(() => stateVector({ jointPositionsRad: [1, 2, 3], cameras: {} }, ["joint_positions"], 2), /the observation's joint_positions has 3 values; 2 expected/);
  });

  it("feeds seeded noise scaled by temp", async () => {
    const bytes = noisyLinearPolicy({ stateWidth: 2, dof: 2, chunk: 3 });
    const contract = { dof: 2, cameras: [], state: ["joint_positions"] };
    const observation = { jointPositionsRad: [1, 2], cameras: {} };
    const policy = await OnnxPolicy.load(bytes, { ...contract, temp: 0.5 });
    const a = await policy.infer(observation, new GaussianNoise(7, 0.5));
    const b = await policy.infer(observation, new GaussianNoise(7, 0.5));
    const c = await policy.infer(observation, new GaussianNoise(8, 0.5));
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    const draws = new GaussianNoise(7, 0.5).sample(6);
    close(a, [[1 + draws[0], 2 + draws[1]], [1 + draws[2], 2 + draws[3]], [1 + draws[4], 2 + draws[5]]]);
    await assert.rejects(policy.infer(observation), /the model reads noise: pass the episode's noise generator to infer\(\)/);
    await policy.release();
    const deterministic = await OnnxPolicy.load(bytes, { ...contract, temp: 0 });
    close(await deterministic.infer(observation, new GaussianNoise(7, 0)), [[1, 2], [1, 2], [1, 2]]);
    await deterministic.release();
  });

  it("draws standard normal noise", () => {
    const draws = new GaussianNoise(1, 2).sample(20_000);
    const m = mean(draws);
    const sd = Math.sqrt(mean(Array.from(draws, (v) => (v - m) ** 2)));
    assert.ok(Math.abs(m) < 0.05, `mean ${m}`);
    assert.ok(Math.abs(sd - 2) < 0.05, `sd ${sd}`);
  });

  it("refuses a model that breaks the contract, or that onnxruntime-web cannot load", async () => {
    await assert.rejects(
      OnnxPolicy.load(linearStatePolicy({ stateWidth: 7, dof: 7 }), { dof: 6, cameras: [], state: ["joint_positions", "gripper_state"] }),
      /^Error: the ONNX model does not fit the policy's contracts: the model's output action has last dimension 7; policy.action_space.dim is 6$/,
    );
    const unknownOp = encodeModel({ node: [node("NoSuchOp", ["observation.state"], ["action"])], input: [valueInfo("observation.state", [1, 6])], output: [valueInfo("action", [1, 6])] });
    await assert.rejects(OnnxPolicy.load(unknownOp, { dof: 6, cameras: [], state: ["joint_positions"] }), /^Error: onnxruntime-web could not load the model: .*NoSuchOp/);
  });

  it("prints the per-step inference cost of a state MLP and of a conv net over one 224x224 image", async () => {
    const steps = 50;
    const timeSteps = async (run: () => Promise<unknown>): Promise<number> => {
      for (let i = 0; i < 5; i++) await run();
      const started = performance.now();
      for (let i = 0; i < steps; i++) await run();
      return (performance.now() - started) / steps;
    };
    const mlp = await OnnxPolicy.load(mlpStatePolicy({ stateWidth: 7, dof: 6, chunk: 50, hidden: [256, 256] }), { dof: 6, cameras: [], state: ["joint_positions", "gripper_state"] });
    const stateMs = await timeSteps(() => mlp.infer({ jointPositionsRad: [0, 0.1, 0.2, 0.3, 0.4, 0.5], gripperOpening: 1, cameras: {} }));
    await mlp.release();

    const conv = await OnnxPolicy.load(convImagePolicy({ camera: "top", height: 224, width: 224, dof: 6, chunk: 50, channels: [16, 32] }), { dof: 6, cameras: ["top"], state: [] });
    const pixels = Uint8Array.from({ length: 640 * 480 * 3 }, (_, i) => (i * 7 + (i >> 11)) % 256);
    const jpeg = await sharp(pixels, { raw: { width: 640, height: 480, channels: 3 } }).jpeg({ quality: 80 }).toBuffer();
    const fromJpeg = { width: 640, height: 480, jpeg };
    const fromRgb = rgbFrame(640, 480, pixels);
    const jpegMs = await timeSteps(() => conv.infer({ cameras: { top: fromJpeg } }));
    const rgbMs = await timeSteps(() => conv.infer({ cameras: { top: fromRgb } }));
    const resizeMs = await timeSteps(() => imageTensorData("top", fromJpeg, { height: 224, width: 224 }));
    const ready = rgbFrame(224, 224, new Uint8Array(224 * 224 * 3).fill(90));
    const graphMs = await timeSteps(() => conv.infer({ cameras: { top: ready } }));
    await conv.release();
    console.log([
      `      per-step inference, onnxruntime-web wasm, 1 thread (${steps} steps after 5 warm-up):`,
      `        state MLP 7-256-256-300 (chunk 50 x 6):           ${stateMs.toFixed(2)} ms`,
      `        conv net on 224x224, from a 640x480 JPEG:          ${jpegMs.toFixed(2)} ms (decode + resize alone ${resizeMs.toFixed(2)} ms)`,
      `        conv net on 224x224, from 640x480 raw RGB:         ${rgbMs.toFixed(2)} ms`,
      `        conv net on 224x224, frame already 224x224 RGB:    ${graphMs.toFixed(2)} ms`,
    ].join("\n"));
  });

  it("fetched nothing over the network (the wasm binary comes from node_modules)", () => {
    assert.deepEqual(fetches, []);
  });
});
