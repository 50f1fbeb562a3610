import assert from "node:assert/strict";
import { SUPPORTED_RUNTIMES, checkOnnxContract, planOnnxIo, type OnnxContract } from "../../protocol/policy/onnx/contract-check.js";
import { onnxContractOf } from "../../protocol/policy/onnx/contract-from-policy.js";
import { describeOnnxModel, type OnnxModelDescription } from "../../protocol/policy/onnx/model-description.js";
import { cameraStatePolicy, encodeModel, floatTensor, linearStatePolicy, node, noisyLinearPolicy, valueInfo } from "../support/onnx-models.js";

/** so101: 6 joints; the contract reads joint positions and the gripper, and two cameras. */
const CONTRACT: OnnxContract = { dof: 6, cameras: ["top", "wrist"], state: ["joint_positions", "gripper_state"] };
const linear = (options: Partial<Parameters<typeof linearStatePolicy>[0]> = {}) =>
  describeOnnxModel(linearStatePolicy({ stateWidth: 7, dof: 6, chunk: 4, ...options }));
const problems = (description: OnnxModelDescription, contract: Partial<OnnxContract> = {}) => checkOnnxContract(description, { ...CONTRACT, ...contract });

describe("checkOnnxContract", () => {
  it("supports the onnx runtime only", () => {
    assert.deepEqual([...SUPPORTED_RUNTIMES], ["onnx"]);
  });

  it("accepts models that follow the convention, and plans their I/O", () => {
    assert.deepEqual(problems(linear()), []);
    assert.deepEqual(problems(linear({ batch: "batch" })), []);
    assert.deepEqual(problems(linear({ chunk: undefined })), []);
    assert.deepEqual(problems(linear({ chunkDim: "chunk" }), { chunkSize: 4, actionHorizon: 2 }), []);
    const camera = describeOnnxModel(cameraStatePolicy({ stateWidth: 7, dof: 6, chunk: 4, camera: "wrist", height: 96, width: "w" }));
    assert.deepEqual(problems(camera), []);
    assert.deepEqual(planOnnxIo(camera, { ...CONTRACT, actionHorizon: 2 }), {
      state: { channels: ["joint_positions", "gripper_state"], width: 7 },
      images: [{ camera: "wrist", input: "observation.images.wrist", height: 96, width: undefined }],
      chunk: 4, actionHorizon: 2, temp: 1, dof: 6,
    });
  });

  it("names a state width that the contract's channels do not make", () => {
    assert.deepEqual(problems(linear({ stateWidth: 6 })), ["observation.state has 6 values; the contract's state channels joint_positions + gripper_state make 7"]);
    assert.deepEqual(
      problems(linear({ stateWidth: 19 }), { state: ["joint_positions", "joint_velocities", "gripper_state", "ft_wrist"] }),
      [],
      "6 + 6 + 1 + 6 = 19",
    );
  });

  it("names a camera the contract does not list", () => {
    const side = linear({ extraInputs: [{ name: "observation.images.side", dims: [1, 3, 64, 64] }] });
    assert.deepEqual(problems(side), ["the model reads observation.images.side, which is not in policy.observation_contract.cameras (top, wrist)"]);
    assert.deepEqual(problems(side, { cameras: [] }), ["the model reads observation.images.side, which is not in policy.observation_contract.cameras (none)"]);
  });

  it("names an action dimension other than action_space.dim", () => {
    assert.deepEqual(problems(linear({ dofDim: 7 })), ["the model's output action has last dimension 7; policy.action_space.dim is 6"]);
    assert.deepEqual(problems(linear({ dofDim: "d" })), [`the model's output action has a symbolic last dimension ("d"); export it fixed at policy.action_space.dim 6`]);
  });

  it("names inputs outside the convention and a missing action output", () => {
    assert.deepEqual(problems(linear({ extraInputs: [{ name: "task_tokens", dims: [1, 16] }] })), [
      "the model reads an input named task_tokens, which Assay does not provide; inputs must be named observation.state, observation.images.<camera> (cameras: top, wrist) or noise",
    ]);
    assert.deepEqual(problems(linear({ stateInput: "obs" })), [
      "the model reads an input named obs, which Assay does not provide; inputs must be named observation.state, observation.images.<camera> (cameras: top, wrist) or noise",
      "the model reads no observation (its inputs: obs); it must read observation.state or an observation.images.<camera>",
    ]);
    assert.deepEqual(problems(linear({ output: "actions" })), ["the model has no output named action (its outputs: actions); name the joint-target output action"]);
  });

  it("names element types, batch sizes and ranks it cannot feed or read", () => {
    const base = linear();
    const int64State = { ...base, inputs: [{ ...base.inputs[0], elementType: "int64" }] };
    assert.deepEqual(problems(int64State), ["the model's input observation.state is int64; Assay feeds float32 (cast in the graph, or export in float32)"]);
    const float64Action = { ...base, outputs: [{ ...base.outputs[0], elementType: "float64" }] };
    assert.deepEqual(problems(float64Action), ["the model's output action is float64; Assay reads float32 (cast in the graph, or export in float32)"]);
    assert.deepEqual(problems(linear({ batch: 4 })), [
      "the model's input observation.state has batch dimension 4 ([4, 7]); Assay runs one observation at a time: export the batch dimension as 1 or symbolic",
      "the model's output action has batch dimension 4 ([4, 4, 6]); Assay runs one observation at a time: export the batch dimension as 1 or symbolic",
    ]);
    const noShape = { ...base, outputs: [{ ...base.outputs[0], dims: undefined }] };
    assert.deepEqual(problems(noShape), ["the model's output action declares no shape; export it with its shape (batch dimension first)"]);
    const flatAction = { ...base, outputs: [{ ...base.outputs[0], dims: [1, 2, 4, 6] }] };
    assert.deepEqual(problems(flatAction), ["the model's output action must be [1, chunk, dof] or [1, dof]; the model declares [1, 2, 4, 6]"]);
  });

  it("names state inputs of the wrong shape or with no channels to fill them", () => {
    assert.deepEqual(problems(linear(), { state: [] }), [
      "the model reads observation.state, but policy.observation_contract.state lists no channels; list the ones the model was trained on (joint_positions, joint_velocities, gripper_state, ft_wrist)",
    ]);
    assert.deepEqual(problems(linear({ stateDim: "n" })), [`observation.state has a symbolic width ("n"); export it fixed: the contract's state channels joint_positions + gripper_state make 7`]);
    const base = linear();
    const rank3 = { ...base, inputs: [{ ...base.inputs[0], dims: [1, 2, 7] }] };
    assert.deepEqual(problems(rank3), ["observation.state must be [1, S] (or [batch, S]); the model declares [1, 2, 7]"]);
    assert.deepEqual(problems(base, { state: ["joint_positions", "gripper"] }), [
      `policy.observation_contract.state: unknown channel "gripper"; the state channels are joint_positions, joint_velocities, gripper_state, ft_wrist`,
    ]);
  });

  it("names image inputs that are not [1, 3, H, W]", () => {
    const channelsLast = describeOnnxModel(cameraStatePolicy({ stateWidth: 7, dof: 6, chunk: 4, camera: "top", height: 224, width: 224 }));
    channelsLast.inputs[1] = { ...channelsLast.inputs[1], dims: [1, 224, 224, 3] };
    assert.deepEqual(problems(channelsLast), ["observation.images.top must be [1, 3, H, W] (channels first, RGB in [0, 1]); the model declares [1, 224, 224, 3]"]);
  });

  it("matches chunk_size to the model's chunk dimension", () => {
    assert.deepEqual(problems(linear(), { chunkSize: 10 }), ["policy.inference.chunk_size is 10; the model's output action has chunk dimension 4"]);
    assert.deepEqual(problems(linear(), { chunkSize: 4 }), []);
    assert.deepEqual(problems(linear({ chunk: undefined }), { chunkSize: 4 }), [
      "policy.inference.chunk_size is 4, but the model's output action [1, 6] is one step; leave chunk_size out or set it to 1",
    ]);
    assert.deepEqual(problems(linear(), { chunkSize: 0 }), ["policy.inference.chunk_size must be a positive integer; got 0"]);
  });

  it("keeps action_horizon within the chunk", () => {
    assert.deepEqual(problems(linear(), { actionHorizon: 5 }), ["policy.inference.action_horizon is 5; it must be at most the model's chunk of 4 rows"]);
    assert.deepEqual(problems(linear({ chunk: undefined }), { actionHorizon: 2 }), ["policy.inference.action_horizon is 2; it must be at most the model's chunk of 1 row"]);
    assert.deepEqual(problems(linear({ chunkDim: "chunk" }), { chunkSize: 4, actionHorizon: 5 }), ["policy.inference.action_horizon is 5; it must be at most the model's chunk of 4 rows"]);
    assert.deepEqual(problems(linear({ chunkDim: "chunk" }), { actionHorizon: 5 }), [], "a symbolic chunk without chunk_size is checked when the model runs");
    assert.deepEqual(problems(linear(), { actionHorizon: 1.5 }), ["policy.inference.action_horizon must be a positive integer; got 1.5"]);
  });

  it("accepts temp only for a model with a noise input", () => {
    assert.deepEqual(problems(linear(), { temp: 0.7 }), [
      "policy.inference.temp is 0.7, but the model has no noise input: without one the graph is deterministic and temp would change nothing; leave temp out, or export the sampler's noise as an input named noise",
    ]);
    const noisy = describeOnnxModel(noisyLinearPolicy({ stateWidth: 7, dof: 6, chunk: 4 }));
    assert.deepEqual(problems(noisy, { temp: 0.7 }), []);
    assert.deepEqual(planOnnxIo(noisy, { ...CONTRACT, temp: 0.7 }).noise, { dims: [1, 4, 6] });
    assert.equal(planOnnxIo(noisy, CONTRACT).temp, 1);
    const symbolicNoise = { ...noisy, inputs: [noisy.inputs[0], { ...noisy.inputs[1], dims: [1, "chunk", 6] }] };
    assert.deepEqual(problems(symbolicNoise), ["noise has symbolic dimensions after the batch ([1, chunk, 6]); export it with fixed sizes, e.g. [1, chunk, action_dim]"]);
    assert.deepEqual(problems(noisy, { temp: -1 }), ["policy.inference.temp must be a number >= 0; got -1"]);
  });

  it("names opsets and operator domains the cells' onnxruntime-web cannot run, and external weights", () => {
    assert.deepEqual(problems(linear({ opset: 27 })), ["the model's opset is 27; onnxruntime-web 1.30 on the cells runs opsets 7 to 26 (export with an opset_version in that range, e.g. 17)"]);
    assert.deepEqual(problems(linear({ opset: 6 })), ["the model's opset is 6; onnxruntime-web 1.30 on the cells runs opsets 7 to 26 (export with an opset_version in that range, e.g. 17)"]);
    assert.deepEqual(problems(linear({ extraOpsets: [{ domain: "com.example", version: 1 }, { domain: "com.microsoft", version: 1 }] })), [
      `the model uses operators of domain "com.example" (version 1), which onnxruntime-web cannot run`,
    ]);
    const external = describeOnnxModel(encodeModel({
      node: [node("Add", ["observation.state", "W"], ["action"])],
      initializer: [{ ...floatTensor("W", [6], []), rawData: null, dataLocation: 1, externalData: [{ key: "location", value: "weights.bin" }] }],
      input: [valueInfo("observation.state", [1, 6])],
      output: [valueInfo("action", [1, 6])],
    }));
    assert.deepEqual(problems(external, { state: ["joint_positions"] }), [
      "the model keeps 1 weight tensor(s) in external data files (W), which an upload does not carry; export a single-file model (onnx.save(model, path, save_as_external_data=False); under 2 GB)",
    ]);
  });

  it("throws every problem at once from planOnnxIo", () => {
    assert.throws(() => planOnnxIo(linear({ stateWidth: 6, dofDim: 7 }), CONTRACT), (error: Error) =>
      error.message === "the ONNX model does not fit the policy's contracts: observation.state has 6 values; the contract's state channels joint_positions + gripper_state make 7; the model's output action has last dimension 7; policy.action_space.dim is 6");
  });
});

describe("onnxContractOf", () => {
  it("reads the policy's wire fields", () => {
    const policy = {
      type: "checkpoint", hf: "acme/pick", runtime: "onnx",
      inference: { action_horizon: 2, chunk_size: 4, temp: 0.5 },
      action_space: { type: "joint_position", dim: 6 },
      observation_contract: { cameras: ["top"], state: ["joint_positions", "gripper_state"] },
    };
    assert.deepEqual(onnxContractOf(policy, 6), { dof: 6, cameras: ["top"], state: ["joint_positions", "gripper_state"], chunkSize: 4, actionHorizon: 2, temp: 0.5 });
  });

  it("falls back to the robot's dof and empty lists, and passes malformed values on for the check to name", () => {
    assert.deepEqual(onnxContractOf({ type: "checkpoint", observation_contract: { cameras: { top: {} } } }, 8), { dof: 8, cameras: ["top"], state: [] });
    const contract = onnxContractOf({ inference: { chunk_size: "4" } }, 6);
    assert.deepEqual(problems(linear({ stateWidth: 6 }), { ...contract, state: ["joint_positions"] }), [`policy.inference.chunk_size must be a positive integer; got "4"`]);
  });
});
