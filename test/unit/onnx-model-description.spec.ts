import assert from "node:assert/strict";
import { describeOnnxModel } from "../../protocol/policy/onnx/model-description.js";
import {
  cameraStatePolicy, encodeModel, floatTensor, linearStatePolicy, node, noisyLinearPolicy, valueInfo,
} from "../support/onnx-models.js";

describe("describeOnnxModel", () => {
  it("reads a linear state policy's input, output, opset and producer", () => {
    const description = describeOnnxModel(linearStatePolicy({ stateWidth: 7, dof: 6, chunk: 4 }));
    assert.deepEqual(description.inputs, [{ name: "observation.state", elementType: "float32", dims: [1, 7] }]);
    assert.deepEqual(description.outputs, [{ name: "action", elementType: "float32", dims: [1, 4, 6] }]);
    assert.equal(description.opset, 17);
    assert.deepEqual(description.opsetImports, [{ domain: "", version: 17 }]);
    assert.deepEqual(description.producer, { name: "assay-tests", version: "1" });
    assert.equal(description.irVersion, 8);
    assert.deepEqual(description.initializerInputs, []);
    assert.deepEqual(description.externalDataTensors, []);
  });

  it("gives symbolic dimensions by name and unnamed ones as ?", () => {
    const symbolic = describeOnnxModel(linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 2, batch: "batch", chunkDim: "chunk" }));
    assert.deepEqual(symbolic.inputs[0].dims, ["batch", 6]);
    assert.deepEqual(symbolic.outputs[0].dims, ["batch", "chunk", 6]);
    const unnamed = describeOnnxModel(linearStatePolicy({ stateWidth: 6, dof: 6, batch: null }));
    assert.deepEqual(unnamed.inputs[0].dims, ["?", 6]);
  });

  it("reads a camera input and a noise input", () => {
    const camera = describeOnnxModel(cameraStatePolicy({ stateWidth: 6, dof: 6, chunk: 2, camera: "top", height: 96, width: 128 }));
    assert.deepEqual(camera.inputs.map((i) => [i.name, i.dims]), [["observation.state", [1, 6]], ["observation.images.top", [1, 3, 96, 128]]]);
    const noisy = describeOnnxModel(noisyLinearPolicy({ stateWidth: 6, dof: 6, chunk: 3 }));
    assert.deepEqual(noisy.inputs.map((i) => [i.name, i.dims]), [["observation.state", [1, 6]], ["noise", [1, 3, 6]]]);
  });

  it("leaves out initializers an old exporter listed as graph inputs", () => {
    const description = describeOnnxModel(linearStatePolicy({ stateWidth: 6, dof: 6, opset: 9, initializersAsInputs: true }));
    assert.deepEqual(description.inputs.map((i) => i.name), ["observation.state"]);
    assert.deepEqual(description.initializerInputs, ["W", "B", "action_shape"]);
    assert.equal(description.irVersion, 3);
  });

  it("names element types numpy-style and lists weights kept in external files", () => {
    const bytes = encodeModel({
      node: [node("Cast", ["steps"], ["as_float"], { to: 1 }), node("Add", ["as_float", "W"], ["action"])],
      initializer: [{ ...floatTensor("W", [6], []), rawData: null, dataLocation: 1, externalData: [{ key: "location", value: "weights.bin" }] }],
      input: [valueInfo("steps", [1, 6], 7)],
      output: [valueInfo("action", [1, 6], 11)],
    }, { extraOpsets: [{ domain: "com.microsoft", version: 1 }] });
    const description = describeOnnxModel(bytes);
    assert.equal(description.inputs[0].elementType, "int64");
    assert.equal(description.outputs[0].elementType, "float64");
    assert.deepEqual(description.externalDataTensors, ["W"]);
    assert.deepEqual(description.opsetImports, [{ domain: "", version: 17 }, { domain: "com.microsoft", version: 1 }]);
  });

  it("refuses bytes that are not an ONNX model, saying what they look like", () => {
    const zip = Uint8Array.from([0x50, 0x4b, 0x03, 0x04, 1, 2, 3, 4]);
    assert.throws(() => describeOnnxModel(zip), /^Error: not an ONNX model: it is a zip archive, as a PyTorch \.pt\/\.pth checkpoint is; export the policy with torch\.onnx\.export$/);
    const safetensors = Uint8Array.from([2, 0, 0, 0, 0, 0, 0, 0, 0x7b, 0x7d]);
    assert.throws(() => describeOnnxModel(safetensors), /not an ONNX model: it looks like a safetensors file/);
    assert.throws(() => describeOnnxModel(new Uint8Array(0)), /not an ONNX model: the file is empty/);
    assert.throws(() => describeOnnxModel(new TextEncoder().encode('{"policy": "not a model"}')), /^Error: not an ONNX model: /);
    assert.throws(() => describeOnnxModel(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff])), /^Error: not an ONNX model: the bytes do not decode as an ONNX ModelProto/);
  });
});
