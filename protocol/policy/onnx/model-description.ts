/**
 * What an ONNX model declares about itself, read statically from its protobuf (onnx-proto): the
 * graph's inputs and outputs with element type and dims, the opsets it imports, who produced it.
 * No runtime is started, so the coordinator can describe an upload at submission in milliseconds.
 *
 * Exporters before ONNX IR 4 (and torch.onnx.export with `keep_initializers_as_inputs=True`) also
 * list every weight as a graph input; those are not inputs anyone feeds and are left out of
 * `inputs` (ONNX Runtime does the same: such an input only lets a caller override the weight).
 */
import onnxProto from "onnx-proto";

const { onnx } = onnxProto;

/** A dimension: a fixed size, or the symbolic name an exporter gave a dynamic axis ("?" when unnamed). */
export type OnnxDim = number | string;

/** One graph input or output as declared. */
export interface OnnxValueDescription {
  name: string;
  /**
   * numpy-style element type of a tensor ("float32", "int64", "uint8", ...); for values that are not
   * dense tensors, their kind ("sequence", "map", "optional", "sparse_tensor").
   */
  elementType: string;
  /** The declared shape; undefined when the model declares no shape (rank unknown). */
  dims: OnnxDim[] | undefined;
}

/** What describeOnnxModel reads from a model file. */
export interface OnnxModelDescription {
  irVersion: number;
  /** The version of the default operator set (domain "" or "ai.onnx"); undefined when not imported. */
  opset: number | undefined;
  /** Every operator set the model imports; domain "" is the default one. */
  opsetImports: Array<{ domain: string; version: number }>;
  producer: { name: string; version: string };
  inputs: OnnxValueDescription[];
  outputs: OnnxValueDescription[];
  /** Names of initializers also listed as graph inputs (old exporters); not in `inputs`. */
  initializerInputs: string[];
  /** Names of initializers whose data lives in external files next to the model (not in these bytes). */
  externalDataTensors: string[];
  /** Free-form key/value metadata the exporter attached (`metadata_props`). */
  metadata: Record<string, string>;
}

/** ONNX TensorProto.DataType codes to numpy-style names (onnx.proto, codes 1-23). */
const ELEMENT_TYPES: Record<number, string> = {
  1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string",
  9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128",
  16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz",
  21: "uint4", 22: "int4", 23: "float4e2m1",
};

/** protobufjs decodes int64 fields as Long objects when the `long` package is around, else as numbers. */
function toNumber(value: number | { toNumber(): number } | null | undefined): number {
  if (value === null || value === undefined) return 0;
  return typeof value === "number" ? value : value.toNumber();
}

function describeValue(value: onnxProto.onnx.IValueInfoProto): OnnxValueDescription {
  const name = value.name ?? "";
  const type = value.type;
  if (type?.tensorType) {
    const code = type.tensorType.elemType ?? 0;
    const shape = type.tensorType.shape;
    const dims = shape
      ? (shape.dim ?? []).map((d): OnnxDim => (d.dimParam ? d.dimParam : d.dimValue !== null && d.dimValue !== undefined ? toNumber(d.dimValue) : "?"))
      : undefined;
    return { name, elementType: ELEMENT_TYPES[code] ?? `type#${code}`, dims };
  }
  const kind = type?.sequenceType ? "sequence" : type?.mapType ? "map" : type?.optionalType ? "optional" : type?.sparseTensorType ? "sparse_tensor" : "unknown";
  return { name, elementType: kind, dims: undefined };
}

/** A hint for files people upload by mistake instead of an ONNX export. */
function notOnnxHint(bytes: Uint8Array): string {
  const ascii = (from: number, to: number) => String.fromCharCode(...bytes.subarray(from, to));
  if (bytes.length === 0) return "the file is empty";
  if (ascii(0, 4) === "PK\u0003\u0004") return "it is a zip archive, as a PyTorch .pt/.pth checkpoint is; export the policy with torch.onnx.export";
  if (bytes.length > 8 && bytes[8] === 0x7b /* "{" */ && bytes.subarray(4, 8).every((b) => b === 0)) return "it looks like a safetensors file (weights without a graph); export the policy with torch.onnx.export";
  if (ascii(0, 6) === "\u0093NUMPY") return "it is a numpy array file";
  if (ascii(4, 8) === "TFL3") return "it is a TensorFlow Lite model";
  return "";
}

/**
 * Reads an ONNX model's declared interface. Throws `Error("not an ONNX model: ...")` when the bytes
 * do not decode as an ONNX ModelProto with a graph.
 */
export function describeOnnxModel(bytes: Uint8Array): OnnxModelDescription {
  const hint = notOnnxHint(bytes);
  if (hint) throw new Error(`not an ONNX model: ${hint}`);
  let model: onnxProto.onnx.ModelProto;
  try {
    model = onnx.ModelProto.decode(bytes);
  } catch (error) {
    throw new Error(`not an ONNX model: the bytes do not decode as an ONNX ModelProto (${(error as Error).message})`);
  }
  const graph = model.graph;
  const irVersion = toNumber(model.irVersion);
  if (!graph || irVersion <= 0 || (graph.output ?? []).length === 0) {
    const missing = [irVersion <= 0 ? "no ir_version" : "", !graph ? "no graph" : (graph.output ?? []).length === 0 ? "a graph with no outputs" : ""].filter(Boolean);
    throw new Error(`not an ONNX model: the bytes decode to a ModelProto with ${missing.join(" and ")}`);
  }

  const initializers = graph.initializer ?? [];
  const initializerNames = new Set(initializers.map((t) => t.name ?? ""));
  const declaredInputs = (graph.input ?? []).map(describeValue);
  const opsetImports = (model.opsetImport ?? []).map((o) => ({ domain: o.domain ?? "", version: toNumber(o.version) }));
  const defaultOpset = opsetImports.find((o) => o.domain === "" || o.domain === "ai.onnx");
  return {
    irVersion,
    opset: defaultOpset?.version,
    opsetImports,
    producer: { name: model.producerName ?? "", version: model.producerVersion ?? "" },
    inputs: declaredInputs.filter((i) => !initializerNames.has(i.name)),
    outputs: (graph.output ?? []).map(describeValue),
    initializerInputs: declaredInputs.filter((i) => initializerNames.has(i.name)).map((i) => i.name),
    externalDataTensors: initializers.filter((t) => t.dataLocation === onnx.TensorProto.DataLocation.EXTERNAL).map((t) => t.name ?? ""),
    metadata: Object.fromEntries((model.metadataProps ?? []).map((p) => [p.key ?? "", p.value ?? ""])),
  };
}

/** `[1, 3, 224, 224]`-style text of a declared shape, for messages. */
export function formatDims(dims: readonly OnnxDim[] | undefined): string {
  return dims === undefined ? "an undeclared shape" : `[${dims.join(", ")}]`;
}
