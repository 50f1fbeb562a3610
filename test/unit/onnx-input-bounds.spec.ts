import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { CheckpointPolicyRuntime } from "../../cell-agent/policy/checkpoint-runtime.js";
import { checkOnnxContract, type OnnxContract } from "../../protocol/policy/onnx/contract-check.js";
import { nominalCameraSize } from "../../protocol/policy/onnx/input-bounds.js";
import { describeOnnxModel } from "../../protocol/policy/onnx/model-description.js";
import { OnnxPolicy } from "../../protocol/policy/onnx/onnx-policy.js";
import { cameraStatePolicy, linearStatePolicy, noisyLinearPolicy } from "../support/onnx-models.js";

const CONTRACT: OnnxContract = { dof: 6, cameras: ["top", "wrist"], state: ["joint_positions"] };
const SIZES = { top: nominalCameraSize("top"), wrist: nominalCameraSize("wrist") };

describe("declared inputs bounded by the robot and its cameras", () => {
  it("accepts image inputs up to twice the camera's size, and names the input, its shape and the bound past that", () => {
    const fits = describeOnnxModel(cameraStatePolicy({ stateWidth: 6, dof: 6, chunk: 4, camera: "wrist", height: 480, width: 640 }));
    assert.deepEqual(checkOnnxContract(fits, { ...CONTRACT, cameraSizes: SIZES }), []);
    const big = describeOnnxModel(cameraStatePolicy({ stateWidth: 6, dof: 6, chunk: 4, camera: "top", height: 4000, width: 4000 }));
    assert.deepEqual(checkOnnxContract(big, { ...CONTRACT, cameraSizes: SIZES }), [
      "the model's input observation.images.top declares [1, 3, 4000, 4000], 4000x4000 pixels; camera top gives 640x480 frames, and an image input may be at most 2 times that (1280x960): export it at the size it was trained on, or symbolic to receive the camera's own size",
    ]);
    // Without the cameras' sizes (the cell, before its cameras start) the bound is 2048 a side.
    assert.match(checkOnnxContract(big, CONTRACT).join(), /4000x4000 pixels; an image input may be at most 2048x2048/);
  });

  it("refuses a noise input past 65536 values and a chunk past 4096 rows", () => {
    const noisy = describeOnnxModel(noisyLinearPolicy({ stateWidth: 6, dof: 6, chunk: 4 }));
    noisy.inputs[1].dims = [1, 40_000_000];
    assert.deepEqual(checkOnnxContract(noisy, CONTRACT).filter((p) => p.includes("noise")), [
      "the model's input noise declares [1, 40000000], 40000000 values; a noise input may have at most 65536 (a chunk of action rows, e.g. [1, chunk, action_dim])",
    ]);
    const long = describeOnnxModel(noisyLinearPolicy({ stateWidth: 6, dof: 6, chunk: 4 }));
    long.outputs[0].dims = [1, 5000, 6];
    assert.ok(checkOnnxContract(long, CONTRACT).includes("the model's output action has chunk dimension 5000; a chunk may have at most 4096 rows"));
  });

  it("fails a checkpoint on the cell against its cameras' own sizes, and the cell starts the next model as usual", async () => {
    const files = new Map<string, Uint8Array>();
    const runtime = new CheckpointPolicyRuntime({ load: async (ref) => files.get(ref.id)! });
    const policyOf = (id: string, bytes: Uint8Array) => {
      files.set(id, bytes);
      return {
        type: "checkpoint", hf: id, runtime: "onnx", action_space: { type: "joint_position", dim: 6 },
        observation_contract: { cameras: ["top"], state: ["joint_positions"] },
        checkpoint: { id, sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.length },
      };
    };
    const robot = { model: "so101", dof: 6, cameras: { top: { width: 320, height: 240 } } };
    // 1000x1000 is within the 2048 bound a cell without calibrations uses, but not twice a 320x240 camera.
    const big = policyOf("big", cameraStatePolicy({ stateWidth: 6, dof: 6, chunk: 4, camera: "top", height: 1000, width: 1000 }));
    await assert.rejects(runtime.start(big, robot), /observation\.images\.top declares \[1, 3, 1000, 1000\], 1000x1000 pixels; camera top gives 320x240 frames, and an image input may be at most 2 times that \(640x480\)/);
    const session = await runtime.start(policyOf("fits", linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 4 })), robot);
    assert.equal((await session.act({ tNs: 0n, jointPositionsRad: [1, 2, 3, 4, 5, 6], cameras: {} })).length, 6);
    await session.close();
    await runtime.close();
  });

  it("fails the load on the cell before onnxruntime allocates anything", async () => {
    const bytes = cameraStatePolicy({ stateWidth: 6, dof: 6, chunk: 4, camera: "top", height: 4000, width: 4000 });
    await assert.rejects(OnnxPolicy.load(bytes, CONTRACT), /^Error: the ONNX model does not fit the policy's contracts: the model's input observation\.images\.top declares \[1, 3, 4000, 4000\]/);
  });
});
