import assert from "node:assert/strict";
import { describeOnnxModel, describeOnnxStream } from "../../protocol/policy/onnx/model-description.js";
import { ONNX_READ_LIMITS } from "../../protocol/policy/onnx/onnx-wire-reader.js";
import { cameraStatePolicy, encodeModel, floatTensor, linearStatePolicy, manyNodesModel, mlpStatePolicy, node, shapeBombModel, valueInfo } from "../support/onnx-models.js";

/** The bytes as a stream of `size`-byte chunks. */
async function* chunksOf(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.slice(at, at + size);
}

describe("the bounded ONNX wire reader", () => {
  it("reads the same description from memory and from chunks of any size", async () => {
    const bytes = cameraStatePolicy({ stateWidth: 6, dof: 6, chunk: 2, camera: "top", height: 96, width: "w" });
    const whole = describeOnnxModel(bytes);
    assert.deepEqual(whole.inputs, [
      { name: "observation.state", elementType: "float32", dims: [1, 6] },
      { name: "observation.images.top", elementType: "float32", dims: [1, 3, 96, "w"] },
    ]);
    for (const size of [1, 7, 4096]) assert.deepEqual(await describeOnnxStream(chunksOf(bytes, size), bytes.length), whole, `chunks of ${size} bytes`);
  });

  it("counts nodes and weight bytes without keeping the weights", () => {
    const description = describeOnnxModel(mlpStatePolicy({ stateWidth: 6, dof: 6, chunk: 4, hidden: [64, 64] }));
    assert.equal(description.nodeCount, 3 * 2 + 2 + 1); // MatMul+Add(+Relu) per layer, Reshape
    assert.equal(description.initializerCount, 7);
    assert.equal(description.initializerBytes, 4 * (6 * 64 + 64 + 64 * 64 + 64 + 64 * 24 + 24) + 8 * 3);
  });

  it("refuses a declared shape past the rank bound at its ninth dimension, however many follow", async () => {
    const bomb = shapeBombModel(200_000);
    const message = /^Error: the model declares more than Assay accepts: the model's input observation\.images\.top declares more than 8 dimensions \(\[1, 1, 1, 1, 1, 1, 1, 1, \.\.\.\]\); at most 8 are accepted$/;
    assert.throws(() => describeOnnxModel(bomb), message);
    await assert.rejects(describeOnnxStream(chunksOf(bomb, 65_536), bomb.length), message);
  });

  it("refuses dimensions, element counts, names and input counts past their bounds", () => {
    const huge = linearStatePolicy({ stateWidth: 6, dof: 6, extraInputs: [{ name: "noise", dims: [1, 2 ** 21] }] });
    assert.throws(() => describeOnnxModel(huge), /the model's input noise declares a dimension of 2097152; a fixed dimension must be 0 to 1048576/);
    const many = linearStatePolicy({ stateWidth: 6, dof: 6, extraInputs: [{ name: "noise", dims: [1, 3, 20_000, 20_000] }] });
    assert.throws(() => describeOnnxModel(many), /the model's input noise declares the shape \[1, 3, 20000, 20000\], 1200000000 elements; at most 134217728/);
    const long = linearStatePolicy({ stateWidth: 6, dof: 6, extraInputs: [{ name: "x".repeat(300), dims: [1] }] });
    assert.throws(() => describeOnnxModel(long), /the name of graph input #2 is 300 bytes long \("x{60}\.\.\."\); at most 256 bytes are accepted/);
    assert.throws(() => describeOnnxModel(manyNodesModel(ONNX_READ_LIMITS.maxNodes - 2)), /the graph has more than 500000 nodes; at most 500000 are accepted/);
    const inputs = Array.from({ length: ONNX_READ_LIMITS.maxInputs }, (_, i) => ({ name: `extra${i}`, dims: [1] }));
    assert.throws(() => describeOnnxModel(linearStatePolicy({ stateWidth: 6, dof: 6, extraInputs: inputs })), /the graph declares 33 inputs \(besides initializers\); at most 32 are accepted/);
  });

  it("refuses a truncated file and a field longer than its message", async () => {
    const bytes = linearStatePolicy({ stateWidth: 6, dof: 6 });
    const cut = bytes.subarray(0, bytes.length - 5);
    assert.throws(() => describeOnnxModel(cut), /^Error: not an ONNX model: the bytes do not decode as an ONNX ModelProto/);
    await assert.rejects(describeOnnxStream(chunksOf(cut, 3), cut.length), /not an ONNX model: the bytes do not decode/);
    // Claims more bytes than the stream carries.
    await assert.rejects(describeOnnxStream(chunksOf(bytes, 64), bytes.length + 100), /not an ONNX model/);
  });

  it("skips weight data by length: a model of mostly weights reads in chunks without buffering them", async () => {
    const weights = new Float32Array(1_000_000);
    const bytes = encodeModel({
      node: [node("Add", ["observation.state", "W"], ["action"])],
      initializer: [floatTensor("W", [1, 1_000_000], weights)],
      input: [valueInfo("observation.state", [1, 1_000_000])],
      output: [valueInfo("action", [1, 1_000_000])],
    });
    const description = await describeOnnxStream(chunksOf(bytes, 65_536), bytes.length);
    assert.equal(description.initializerBytes, 4_000_000);
    assert.deepEqual(description.outputs[0].dims, [1, 1_000_000]);
  });
});
