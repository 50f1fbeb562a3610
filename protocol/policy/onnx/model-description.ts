/**
 * What an ONNX model declares about itself, read statically from its protobuf by the bounded wire
 * reader (onnx-wire-reader.ts): the graph's inputs and outputs with element type and dims, the
 * opsets it imports, who produced it, how many nodes and how many bytes of weights it holds. No
 * runtime is started and the file is never decoded whole: a stored upload is read as a stream.
 *
 * Exporters before ONNX IR 4 (and torch.onnx.export with `keep_initializers_as_inputs=True`) also
 * list every weight as a graph input; those are not inputs anyone feeds and are left out of
 * `inputs` (ONNX Runtime does the same: such an input only lets a caller override the weight).
 */
import { OnnxBoundError, OnnxDecodeError, readOnnxBytes, readOnnxStream, slicesOf, type OnnxDim, type WireModel } from "./onnx-wire-reader.js";

/** A dimension: a fixed size, or the symbolic name an exporter gave a dynamic axis ("?" when unnamed). */
export type { OnnxDim };

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
  /** Free-form key/value metadata the exporter attached (`metadata_props`; the first 32, cut to 256 characters). */
  metadata: Record<string, string>;
  /** Nodes of the graph. */
  nodeCount: number;
  /** Initializers (weights) of the graph, and the bytes of their data held in the file. */
  initializerCount: number;
  initializerBytes: number;
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

/** The description of what the wire reader found; throws when it is not a model with a graph. */
function descriptionOf(model: WireModel): OnnxModelDescription {
  const { irVersion, hasGraph, outputs } = model;
  if (!hasGraph || irVersion <= 0 || outputs.length === 0) {
    const missing = [irVersion <= 0 ? "no ir_version" : "", !hasGraph ? "no graph" : outputs.length === 0 ? "a graph with no outputs" : ""].filter(Boolean);
    throw new Error(`not an ONNX model: the bytes decode to a ModelProto with ${missing.join(" and ")}`);
  }
  const defaultOpset = model.opsetImports.find((o) => o.domain === "" || o.domain === "ai.onnx");
  return {
    irVersion,
    opset: defaultOpset?.version,
    opsetImports: model.opsetImports,
    producer: { name: model.producerName, version: model.producerVersion },
    inputs: model.declaredInputs.filter((i) => !model.initializerNames.has(i.name)),
    outputs,
    initializerInputs: model.declaredInputs.filter((i) => model.initializerNames.has(i.name)).map((i) => i.name),
    externalDataTensors: model.externalDataTensors,
    metadata: Object.fromEntries(model.metadata),
    nodeCount: model.nodeCount,
    initializerCount: model.initializerCount,
    initializerBytes: model.initializerBytes,
  };
}

function decodeError(error: unknown): Error {
  if (error instanceof OnnxDecodeError) return new Error(`not an ONNX model: the bytes do not decode as an ONNX ModelProto (${error.message})`);
  if (error instanceof OnnxBoundError) return new Error(`the model declares more than Assay accepts: ${error.message}`);
  return error as Error;
}

/**
 * Reads an ONNX model's declared interface from bytes in memory (small models, tests). Throws
 * `Error("not an ONNX model: ...")` when the bytes do not decode as an ONNX ModelProto with a
 * graph, `Error("the model declares more than Assay accepts: ...")` past ONNX_READ_LIMITS.
 */
export function describeOnnxModel(bytes: Uint8Array): OnnxModelDescription {
  const hint = notOnnxHint(bytes);
  if (hint) throw new Error(`not an ONNX model: ${hint}`);
  let model: WireModel;
  try {
    model = readOnnxBytes(bytes);
  } catch (error) {
    throw decodeError(error);
  }
  return descriptionOf(model);
}

/**
 * The same from a stream of the file's chunks (`totalBytes` long), pausing for the event loop as it
 * goes: what the coordinator runs on a stored upload and the cell on a model it is about to load.
 */
export async function describeOnnxStream(chunks: AsyncIterable<Uint8Array>, totalBytes: number): Promise<OnnxModelDescription> {
  const source = chunks[Symbol.asyncIterator]();
  const first = await source.next();
  const head = first.done ? new Uint8Array(0) : first.value;
  const hint = notOnnxHint(head.subarray(0, 16));
  if (hint) {
    await source.return?.();
    throw new Error(`not an ONNX model: ${hint}`);
  }
  async function* replay(): AsyncGenerator<Uint8Array> {
    if (!first.done) yield first.value;
    for (let next = await source.next(); !next.done; next = await source.next()) yield next.value;
  }
  let model: WireModel;
  try {
    model = await readOnnxStream(replay(), totalBytes);
  } catch (error) {
    throw decodeError(error);
  }
  return descriptionOf(model);
}

/** describeOnnxStream over bytes in memory (the cell's loaded model), pausing between slices. */
export function describeOnnxBytes(bytes: Uint8Array): Promise<OnnxModelDescription> {
  return describeOnnxStream(slicesOf(bytes), bytes.length);
}

/** `[1, 3, 224, 224]`-style text of a declared shape, for messages. */
export function formatDims(dims: readonly OnnxDim[] | undefined): string {
  return dims === undefined ? "an undeclared shape" : `[${dims.join(", ")}]`;
}
