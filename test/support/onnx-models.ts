/**
 * Small ONNX models written with onnx-proto, for tests of the checkpoint runtime and its checks:
 * a linear state policy (MatMul + Add, Reshape to [1, chunk, dof]), one that also reads a camera,
 * one with a noise input, an MLP over state and a conv net over an image (for timing), and the
 * malformed variants the contract check must catch (wrong output dim, unknown input, ...).
 *
 * `linearStatePolicy` with its default weights holds the arm where it is: every row of the chunk is
 * the state's first `dof` values, which are the joint positions when the contract's state starts
 * with joint_positions. On a simulated cell that keeps every target safe.
 */
import onnxProto from "onnx-proto";
import { mulberry32 } from "../../protocol/prng.js";

const { onnx } = onnxProto;
/** A fixed size, a symbolic name, or null for a dimension declared with neither. */
type Dim = number | string | null;
type Graph = ConstructorParameters<typeof onnx.GraphProto>[0] & object;
type Node = ConstructorParameters<typeof onnx.NodeProto>[0] & object;
type Tensor = ConstructorParameters<typeof onnx.TensorProto>[0] & object;

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;

/** A graph input or output; `elemType` an ONNX DataType code (1 float32, 7 int64, 11 float64). */
export function valueInfo(name: string, dims: readonly Dim[], elemType: number = FLOAT) {
  return onnx.ValueInfoProto.create({
    name,
    type: { tensorType: { elemType, shape: { dim: dims.map((d) => (d === null ? {} : typeof d === "number" ? { dimValue: d } : { dimParam: d })) } } },
  });
}

export function floatTensor(name: string, dims: readonly number[], values: ArrayLike<number>): Tensor {
  const data = Float32Array.from(values);
  return { name, dims: [...dims], dataType: FLOAT, rawData: new Uint8Array(data.buffer) };
}

export function int64Tensor(name: string, dims: readonly number[], values: readonly number[]): Tensor {
  const data = BigInt64Array.from(values.map(BigInt));
  return { name, dims: [...dims], dataType: INT64, rawData: new Uint8Array(data.buffer) };
}

export function node(opType: string, input: string[], output: string[], attributes: Record<string, number | number[]> = {}): Node {
  const attribute = Object.entries(attributes).map(([name, value]) =>
    Array.isArray(value)
      ? { name, type: onnx.AttributeProto.AttributeType.INTS, ints: value }
      : Number.isInteger(value)
        ? { name, type: onnx.AttributeProto.AttributeType.INT, i: value }
        : { name, type: onnx.AttributeProto.AttributeType.FLOAT, f: value },
  );
  return { opType, input, output, attribute };
}

export interface ModelOptions {
  /** Default opset 17 (torch.onnx.export's default in torch 2.x). */
  opset?: number;
  /** List every initializer as a graph input too, as exporters before ONNX IR 4 did. */
  initializersAsInputs?: boolean;
  producerName?: string;
  /** Extra domains to import, e.g. [{domain: "com.example", version: 1}]. */
  extraOpsets?: Array<{ domain: string; version: number }>;
}

/** Encodes a graph as a model file's bytes. */
export function encodeModel(graph: Graph, options: ModelOptions = {}): Uint8Array {
  const opset = options.opset ?? 17;
  const initializerInputs = options.initializersAsInputs
    ? (graph.initializer ?? []).map((t) => valueInfo(t.name ?? "", (t.dims ?? []).map(Number), t.dataType ?? FLOAT))
    : [];
  const model = onnx.ModelProto.create({
    irVersion: options.initializersAsInputs ? 3 : 8,
    opsetImport: [{ domain: "", version: opset }, ...(options.extraOpsets ?? [])],
    producerName: options.producerName ?? "assay-tests",
    producerVersion: "1",
    graph: onnx.GraphProto.create({ name: "policy", ...graph, input: [...(graph.input ?? []), ...initializerInputs] }),
  });
  return onnx.ModelProto.encode(model).finish();
}

/** Weights [stateWidth][chunk * dof] that copy the state's first `dof` values into every row. */
export function holdPoseWeights(stateWidth: number, dof: number, chunk: number): number[][] {
  return Array.from({ length: stateWidth }, (_, i) => Array.from({ length: chunk * dof }, (_, j) => (i < dof && j % dof === i ? 1 : 0)));
}

export interface LinearStatePolicyOptions extends ModelOptions {
  stateWidth: number;
  dof: number;
  /** Rows per inference; undefined makes a one-step model (action [1, dof]). */
  chunk?: number;
  /** [stateWidth][chunk * dof]; default holdPoseWeights. */
  weights?: number[][];
  /** chunk * dof values (row-major over the chunk); default zeros. */
  bias?: number[];
  /** Batch dimension of the input and output; default 1. */
  batch?: Dim;
  /** Declared chunk dimension of the output; default `chunk` (a string makes it symbolic). */
  chunkDim?: Dim;
  /** Declared last dimension of the output; default `dof` (set it to get a wrong one). */
  dofDim?: Dim;
  /** Name of the state input; default observation.state. */
  stateInput?: string;
  /** Declared width of the state input; default `stateWidth`. */
  stateDim?: Dim;
  /** Inputs declared but not read by the graph, e.g. an unknown camera. */
  extraInputs?: Array<{ name: string; dims: Dim[]; elemType?: number }>;
  /** Name of the output; default action. */
  output?: string;
}

/** The declared batch dimension: 1 unless given (null declares it with neither size nor name). */
const batchOf = (o: { batch?: Dim }): Dim => (o.batch === undefined ? 1 : o.batch);

/** The linear pieces shared by the builders: state @ W + b as [1, chunk * dof], named "flat". */
function linearNodes(o: LinearStatePolicyOptions, rows: number): { nodes: Node[]; initializer: Tensor[] } {
  const width = rows * o.dof;
  const weights = o.weights ?? holdPoseWeights(o.stateWidth, o.dof, rows);
  const bias = o.bias ?? new Array<number>(width).fill(0);
  if (weights.length !== o.stateWidth || weights.some((row) => row.length !== width)) throw new Error(`weights must be [${o.stateWidth}][${width}]`);
  if (bias.length !== width) throw new Error(`bias must have ${width} values`);
  return {
    nodes: [node("MatMul", [o.stateInput ?? "observation.state", "W"], ["xw"]), node("Add", ["xw", "B"], ["flat"])],
    initializer: [floatTensor("W", [o.stateWidth, width], weights.flat()), floatTensor("B", [width], bias)],
  };
}

/** Reshapes "flat" (or `from`) to the action output: [batch, chunk, dof] or [batch, dof]. */
function actionNodes(o: LinearStatePolicyOptions, from = "flat"): { nodes: Node[]; initializer: Tensor[]; output: ReturnType<typeof valueInfo> } {
  const shape = o.chunk === undefined ? [-1, o.dof] : [-1, o.chunk, o.dof];
  const dims = o.chunk === undefined ? [batchOf(o), o.dofDim ?? o.dof] : [batchOf(o), o.chunkDim ?? o.chunk, o.dofDim ?? o.dof];
  return {
    nodes: [node("Reshape", [from, "action_shape"], [o.output ?? "action"])],
    initializer: [int64Tensor("action_shape", [shape.length], shape)],
    output: valueInfo(o.output ?? "action", dims),
  };
}

function stateInputs(o: LinearStatePolicyOptions) {
  return [
    valueInfo(o.stateInput ?? "observation.state", [batchOf(o), o.stateDim ?? o.stateWidth]),
    ...(o.extraInputs ?? []).map((i) => valueInfo(i.name, i.dims, i.elemType)),
  ];
}

/** action = reshape(state @ W + b): each row a linear function of the state. */
export function linearStatePolicy(o: LinearStatePolicyOptions): Uint8Array {
  const linear = linearNodes(o, o.chunk ?? 1);
  const action = actionNodes(o);
  return encodeModel({
    node: [...linear.nodes, ...action.nodes],
    initializer: [...linear.initializer, ...action.initializer],
    input: stateInputs(o),
    output: [action.output],
  }, o);
}

export interface CameraStatePolicyOptions extends LinearStatePolicyOptions {
  camera: string;
  /** Declared image height and width; strings make them symbolic. */
  height: Dim;
  width: Dim;
  /** Factor on the image mean; default 1. 0 still reads the camera but adds nothing: a hold-pose model that exercises the image path. */
  imageGain?: number;
}

/** action = reshape(state @ W + b + gain * mean(image)): the image's mean pixel value is added to every entry. */
export function cameraStatePolicy(o: CameraStatePolicyOptions): Uint8Array {
  const image = `observation.images.${o.camera}`;
  const linear = linearNodes(o, o.chunk ?? 1);
  const action = actionNodes(o, "with_image");
  return encodeModel({
    node: [
      ...linear.nodes,
      node("ReduceMean", [image], ["image_mean"], { axes: [1, 2, 3], keepdims: 0 }),
      node("Mul", ["image_mean", "image_gain"], ["image_term"]),
      node("Add", ["flat", "image_term"], ["with_image"]),
      ...action.nodes,
    ],
    initializer: [...linear.initializer, ...action.initializer, floatTensor("image_gain", [1], [o.imageGain ?? 1])],
    input: [...stateInputs(o), valueInfo(image, [batchOf(o), 3, o.height, o.width])],
    output: [action.output],
  }, o);
}

/** action = reshape(state @ W + b) + noise, noise declared [1, chunk, dof]. */
export function noisyLinearPolicy(o: LinearStatePolicyOptions & { chunk: number }): Uint8Array {
  const linear = linearNodes(o, o.chunk);
  const action = actionNodes({ ...o, output: "mean_action" });
  return encodeModel({
    node: [...linear.nodes, ...action.nodes, node("Add", ["mean_action", "noise"], ["action"])],
    initializer: [...linear.initializer, ...action.initializer],
    input: [...stateInputs(o), valueInfo("noise", [1, o.chunk, o.dof])],
    output: [valueInfo("action", [batchOf(o), o.chunk, o.dof])],
  }, o);
}

/** Seeded uniform weights in [-scale, scale]. */
function randomValues(count: number, seed: number, scale: number): Float32Array {
  const uniform = mulberry32(seed);
  return Float32Array.from({ length: count }, () => (2 * uniform() - 1) * scale);
}

/** A state MLP (hidden layers with Relu), the size of a small behaviour-cloning policy; for timing. */
export function mlpStatePolicy(o: { stateWidth: number; dof: number; chunk: number; hidden: number[] }): Uint8Array {
  const nodes: Node[] = [];
  const initializer: Tensor[] = [];
  let input = "observation.state";
  let width = o.stateWidth;
  [...o.hidden, o.chunk * o.dof].forEach((size, layer) => {
    initializer.push(floatTensor(`W${layer}`, [width, size], randomValues(width * size, layer + 1, 1 / Math.sqrt(width))));
    initializer.push(floatTensor(`B${layer}`, [size], new Float32Array(size)));
    nodes.push(node("MatMul", [input, `W${layer}`], [`mm${layer}`]), node("Add", [`mm${layer}`, `B${layer}`], [`lin${layer}`]));
    const last = layer === o.hidden.length;
    if (!last) nodes.push(node("Relu", [`lin${layer}`], [`h${layer}`]));
    input = last ? `lin${layer}` : `h${layer}`;
    width = size;
  });
  const action = actionNodes({ stateWidth: o.stateWidth, dof: o.dof, chunk: o.chunk }, input);
  return encodeModel({
    node: [...nodes, ...action.nodes],
    initializer: [...initializer, ...action.initializer],
    input: [valueInfo("observation.state", [1, o.stateWidth])],
    output: [action.output],
  });
}

/**
 * A conv net over one camera: two stride-2 3x3 convolutions with Relu, global average pooling, a
 * linear head to [1, chunk, dof]; for timing image policies.
 */
export function convImagePolicy(o: { camera: string; height: number; width: number; dof: number; chunk: number; channels: [number, number] }): Uint8Array {
  const [c1, c2] = o.channels;
  const image = `observation.images.${o.camera}`;
  const head = o.chunk * o.dof;
  return encodeModel({
    node: [
      node("Conv", [image, "K1", "C1"], ["conv1"], { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] }),
      node("Relu", ["conv1"], ["relu1"]),
      node("Conv", ["relu1", "K2", "C2"], ["conv2"], { kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1] }),
      node("Relu", ["conv2"], ["relu2"]),
      node("GlobalAveragePool", ["relu2"], ["pooled"]),
      node("Flatten", ["pooled"], ["features"], { axis: 1 }),
      node("MatMul", ["features", "W"], ["mm"]),
      node("Add", ["mm", "B"], ["flat"]),
      node("Reshape", ["flat", "action_shape"], ["action"]),
    ],
    initializer: [
      floatTensor("K1", [c1, 3, 3, 3], randomValues(c1 * 27, 11, 0.2)),
      floatTensor("C1", [c1], new Float32Array(c1)),
      floatTensor("K2", [c2, c1, 3, 3], randomValues(c2 * c1 * 9, 12, 0.1)),
      floatTensor("C2", [c2], new Float32Array(c2)),
      floatTensor("W", [c2, head], randomValues(c2 * head, 13, 0.1)),
      floatTensor("B", [head], new Float32Array(head)),
      int64Tensor("action_shape", [3], [-1, o.chunk, o.dof]),
    ],
    input: [valueInfo(image, [1, 3, o.height, o.width])],
    output: [valueInfo("action", [1, o.chunk, o.dof])],
  });
}

/** Protobuf wire helpers for hand-built hostile files (a varint, a length-delimited field). */
function wireVarint(value: number): number[] {
  const out: number[] = [];
  for (let v = value; ; v = Math.floor(v / 128)) {
    if (v < 128) return [...out, v];
    out.push((v % 128) | 0x80);
  }
}
function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
function wireField(field: number, body: Uint8Array): Uint8Array {
  return concatBytes(Uint8Array.from([...wireVarint(field * 8 + 2), ...wireVarint(body.length)]), body);
}

/**
 * The shape bomb of the hostile-model tests: a state policy whose graph also declares an input
 * `observation.images.top` of `dimCount` dimensions of 1 (4 bytes each on the wire), the structure
 * of the 192 MB upload that once held the coordinator's loop for 77 s. A decoder that builds the
 * message grows with `dimCount`; the bounded reader refuses it at its ninth dimension.
 */
export function shapeBombModel(dimCount: number): Uint8Array {
  const dim = Uint8Array.from([0x0a, 0x02, 0x08, 0x01]); // Dimension { dim_value: 1 }
  const shape = new Uint8Array(dim.length * dimCount);
  for (let i = 0; i < dimCount; i++) shape.set(dim, i * dim.length);
  const tensorType = concatBytes(Uint8Array.from([0x08, 0x01]), wireField(2, shape)); // elem_type float32, shape
  const bombInput = concatBytes(wireField(1, new TextEncoder().encode("observation.images.top")), wireField(2, wireField(1, tensorType)));
  const model = onnx.ModelProto.decode(linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 4 }));
  const graph = onnx.GraphProto.encode(model.graph!).finish();
  model.graph = null;
  return concatBytes(onnx.ModelProto.encode(model).finish(), wireField(7, concatBytes(graph, wireField(11, bombInput))));
}

/** A state policy whose graph also holds `count` empty nodes (2 bytes each on the wire): the node-count bound. */
export function manyNodesModel(count: number): Uint8Array {
  const model = onnx.ModelProto.decode(linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 4 }));
  const graph = onnx.GraphProto.encode(model.graph!).finish();
  model.graph = null;
  const nodes = new Uint8Array(2 * count);
  for (let i = 0; i < count; i++) nodes[2 * i] = 0x0a; // field 1 (node), length 0
  return concatBytes(onnx.ModelProto.encode(model).finish(), wireField(7, concatBytes(graph, nodes)));
}

/**
 * A hold-pose state policy that also carries an unused initializer of `weightBytes` zero bytes
 * (raw_data): a large model built without encoding its weights through protobufjs.
 */
export function paddedModel(weightBytes: number): Uint8Array {
  const model = onnx.ModelProto.decode(linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 4 }));
  const graph = onnx.GraphProto.encode(model.graph!).finish();
  model.graph = null;
  const name = wireField(8, new TextEncoder().encode("padding"));
  const tensor = concatBytes(Uint8Array.from([0x08, ...wireVarint(weightBytes / 4), 0x10, 0x01]), name, wireField(9, new Uint8Array(weightBytes)));
  return concatBytes(onnx.ModelProto.encode(model).finish(), wireField(7, concatBytes(graph, wireField(5, tensor))));
}
