/**
 * A bounded, streaming reader of what an ONNX file declares about itself, walking the protobuf wire
 * format (onnx.proto's ModelProto) field by field instead of decoding the whole message:
 *
 * - only the fields the checks need are read (ir_version, producer, opset imports, metadata, the
 *   graph's inputs and outputs with their types and shapes, each initializer's name and storage);
 *   everything else (nodes, initializers' raw_data, value_info, doc strings) is skipped by length
 *   without being buffered, so memory stays small whatever the file's size;
 * - every repeated or variable thing kept is bounded (ONNX_READ_LIMITS): a graph declaring a
 *   million-dimension shape is refused at its ninth dimension, not materialised;
 * - the work is linear in the bytes and pauses for the event loop between chunks
 *   (readOnnxStream), so a 2 GiB model never holds the loop for more than a few milliseconds.
 *
 * The parser is a set of generators that ask a driver for bytes ("need n", "skip n"); the same
 * parser runs over a buffer in memory (readOnnxBytes) or a stream of chunks (readOnnxStream).
 */
import { setImmediate as nextTurn } from "node:timers/promises";

/** Bounds of what a model may declare; past any of them the model is refused, naming the bound. */
export const ONNX_READ_LIMITS = {
  /** Graph inputs as declared, including initializers old exporters list as inputs. */
  maxDeclaredInputs: 4096,
  /** Inputs a caller feeds (declared inputs that are not initializers). */
  maxInputs: 32,
  maxOutputs: 32,
  /** Dimensions of one input or output. */
  maxRank: 8,
  /** Largest fixed dimension. */
  maxDim: 1 << 20,
  /** Largest product of an input's or output's fixed dimensions (512 MiB of float32). */
  maxElements: 1 << 27,
  /** Bytes of a value's, a symbolic dimension's or an initializer's name. */
  maxNameBytes: 256,
  maxInitializers: 65_536,
  /** Nodes of the graph (large transformer exports have tens of thousands). */
  maxNodes: 500_000,
  maxOpsetImports: 64,
  /** Metadata entries kept (later ones are ignored), and the characters kept of each key and value. */
  maxMetadataEntries: 32,
  maxMetadataChars: 256,
  /** Characters kept of the producer's name and version. */
  maxProducerChars: 128,
} as const;

export type OnnxDim = number | string;

export interface WireValue {
  name: string;
  elementType: string;
  dims: OnnxDim[] | undefined;
}

/** What the reader found; model-description.ts turns it into the OnnxModelDescription. */
export interface WireModel {
  irVersion: number;
  producerName: string;
  producerVersion: string;
  opsetImports: Array<{ domain: string; version: number }>;
  metadata: Array<[string, string]>;
  hasGraph: boolean;
  declaredInputs: WireValue[];
  outputs: WireValue[];
  initializerNames: Set<string>;
  externalDataTensors: string[];
  nodeCount: number;
  initializerCount: number;
  /** Bytes of the initializers' data fields (raw_data, float_data, ...) held in the file. */
  initializerBytes: number;
}

/** The bytes do not decode as a ModelProto. */
export class OnnxDecodeError extends Error {}
/** The model decodes but declares more than ONNX_READ_LIMITS allows. */
export class OnnxBoundError extends Error {}

/** ONNX TensorProto.DataType codes to numpy-style names (onnx.proto, codes 1-23). */
const ELEMENT_TYPES: Record<number, string> = {
  1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string",
  9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128",
  16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2", 20: "float8e5m2fnuz",
  21: "uint4", 22: "int4", 23: "float4e2m1",
};

type Request = { need: number } | { skip: number };
type Gen<T> = Generator<Request, T, void>;

/** The bytes at hand: `buf[pos]` is byte `base + pos` of the file. Drivers refill it. */
class Window {
  buf: Uint8Array = new Uint8Array(0);
  pos = 0;
  base = 0;
  at(): number {
    return this.base + this.pos;
  }
  available(): number {
    return this.buf.length - this.pos;
  }
}

const decodeFail = (why: string): never => {
  throw new OnnxDecodeError(why);
};
const utf8 = new TextDecoder("utf-8", { fatal: false });
const short = (text: string) => (text.length > 60 ? `${text.slice(0, 60)}...` : text);

function* need(w: Window, n: number): Gen<void> {
  if (w.available() < n) yield { need: n };
}

function* varint(w: Window, end: number): Gen<number> {
  yield* need(w, Math.min(10, end - w.at()));
  let value = 0;
  for (let i = 0; i < 10; i++) {
    if (w.at() >= end) decodeFail("a number runs past the end of its message");
    const byte = w.buf[w.pos++];
    value += (byte & 0x7f) * 2 ** (7 * i);
    if (byte < 0x80) return value >= 2 ** 63 ? value - 2 ** 64 : value; // int64 is two's complement
  }
  return decodeFail("a number is longer than 10 bytes");
}

function* key(w: Window, end: number): Gen<[number, number]> {
  const k = yield* varint(w, end);
  const field = Math.floor(k / 8);
  const wire = k % 8;
  if (field === 0 || (wire !== 0 && wire !== 1 && wire !== 2 && wire !== 5)) decodeFail(`field ${field} has wire type ${wire}, which ONNX does not use`);
  return [field, wire];
}

/** Length of a length-delimited field, checked to end within its message. */
function* lengthOf(w: Window, end: number): Gen<number> {
  const length = yield* varint(w, end);
  if (length < 0 || w.at() + length > end) decodeFail("a field's length runs past the end of its message");
  return length;
}

function* skip(w: Window, n: number): Gen<void> {
  if (n <= 0) return;
  if (w.available() >= n) w.pos += n;
  else yield { skip: n };
}

function* skipField(w: Window, wire: number, end: number): Gen<void> {
  if (wire === 0) yield* varint(w, end);
  else if (wire === 1) yield* skipFixed(w, 8, end);
  else if (wire === 5) yield* skipFixed(w, 4, end);
  else yield* skip(w, yield* lengthOf(w, end));
}

function* skipFixed(w: Window, n: number, end: number): Gen<void> {
  if (w.at() + n > end) decodeFail("a field runs past the end of its message");
  yield* skip(w, n);
}

/** A string field of `length` bytes; longer than `max` is refused (`what` names it) or, with `truncate`, cut. */
function* text(w: Window, length: number, max: number, what: string, truncate = false): Gen<string> {
  const kept = Math.min(length, max);
  if (length > max && !truncate) {
    yield* need(w, Math.min(length, 64));
    const start = utf8.decode(w.buf.subarray(w.pos, w.pos + Math.min(length, 64)));
    throw new OnnxBoundError(`${what} is ${length} bytes long (${JSON.stringify(short(start))}); at most ${max} bytes are accepted`);
  }
  yield* need(w, kept);
  const value = utf8.decode(w.buf.subarray(w.pos, w.pos + kept));
  w.pos += kept;
  yield* skip(w, length - kept);
  return value;
}

/** A message field's body: `body(end)` reads fields up to `end`. */
function* message<T>(w: Window, end: number, body: (end: number) => Gen<T>): Gen<T> {
  const length = yield* lengthOf(w, end);
  const inner = w.at() + length;
  const value = yield* body(inner);
  if (w.at() !== inner) decodeFail("a message's fields run past its length");
  return value;
}

function* dimension(w: Window, end: number, owner: string): Gen<OnnxDim> {
  let dim: OnnxDim = "?";
  while (w.at() < end) {
    const [field, wire] = yield* key(w, end);
    if (field === 1 && wire === 0) dim = yield* varint(w, end);
    else if (field === 2 && wire === 2) dim = yield* text(w, yield* lengthOf(w, end), ONNX_READ_LIMITS.maxNameBytes, `a symbolic dimension of ${owner}`);
    else yield* skipField(w, wire, end);
  }
  if (typeof dim === "number" && (dim < 0 || dim > ONNX_READ_LIMITS.maxDim)) {
    throw new OnnxBoundError(`${owner} declares a dimension of ${dim}; a fixed dimension must be 0 to ${ONNX_READ_LIMITS.maxDim} (or symbolic)`);
  }
  return dim;
}

function* shape(w: Window, end: number, owner: string): Gen<OnnxDim[]> {
  const dims: OnnxDim[] = [];
  while (w.at() < end) {
    const [field, wire] = yield* key(w, end);
    if (field === 1 && wire === 2) {
      if (dims.length === ONNX_READ_LIMITS.maxRank) {
        throw new OnnxBoundError(`${owner} declares more than ${ONNX_READ_LIMITS.maxRank} dimensions ([${dims.join(", ")}, ...]); at most ${ONNX_READ_LIMITS.maxRank} are accepted`);
      }
      dims.push(yield* message(w, end, (e) => dimension(w, e, owner)));
    } else yield* skipField(w, wire, end);
  }
  const elements = dims.reduce<number>((product, d) => (typeof d === "number" ? product * d : product), 1);
  if (elements > ONNX_READ_LIMITS.maxElements) {
    throw new OnnxBoundError(`${owner} declares the shape [${dims.join(", ")}], ${elements} elements; at most ${ONNX_READ_LIMITS.maxElements} are accepted`);
  }
  return dims;
}

function* tensorType(w: Window, end: number, value: WireValue, owner: string): Gen<void> {
  let code = 0;
  while (w.at() < end) {
    const [field, wire] = yield* key(w, end);
    if (field === 1 && wire === 0) code = yield* varint(w, end);
    else if (field === 2 && wire === 2) value.dims = yield* message(w, end, (e) => shape(w, e, owner));
    else yield* skipField(w, wire, end);
  }
  value.elementType = ELEMENT_TYPES[code] ?? `type#${code}`;
}

/** TypeProto: a dense tensor's type and shape, or the kind of a value that is not one. */
function* typeOf(w: Window, end: number, value: WireValue, owner: string): Gen<void> {
  const kinds: Record<number, string> = { 4: "sequence", 5: "map", 8: "sparse_tensor", 9: "optional" };
  while (w.at() < end) {
    const [field, wire] = yield* key(w, end);
    if (field === 1 && wire === 2) yield* message(w, end, (e) => tensorType(w, e, value, owner));
    else if (kinds[field] && wire === 2) {
      value.elementType = kinds[field];
      value.dims = undefined;
      yield* skipField(w, wire, end);
    } else yield* skipField(w, wire, end);
  }
}

function* valueInfo(w: Window, end: number, role: string, index: number): Gen<WireValue> {
  const value: WireValue = { name: "", elementType: "unknown", dims: undefined };
  while (w.at() < end) {
    const [field, wire] = yield* key(w, end);
    if (field === 1 && wire === 2) value.name = yield* text(w, yield* lengthOf(w, end), ONNX_READ_LIMITS.maxNameBytes, `the name of graph ${role} #${index + 1}`);
    else if (field === 2 && wire === 2) yield* message(w, end, (e) => typeOf(w, e, value, `the model's ${role} ${value.name ? short(value.name) : `#${index + 1}`}`));
    else yield* skipField(w, wire, end);
  }
  return value;
}

/** An initializer's name and where its data is (TensorProto.data_location 1 = EXTERNAL); its data is skipped. */
function* initializer(w: Window, end: number, model: WireModel): Gen<void> {
  let name = "";
  let external = false;
  const DATA_FIELDS = new Set([4, 5, 6, 7, 9, 10, 11]);
  while (w.at() < end) {
    const [field, wire] = yield* key(w, end);
    if (field === 8 && wire === 2) name = yield* text(w, yield* lengthOf(w, end), ONNX_READ_LIMITS.maxNameBytes, `the name of initializer #${model.initializerCount + 1}`);
    else if (field === 14 && wire === 0) external = (yield* varint(w, end)) === 1;
    else if (DATA_FIELDS.has(field) && wire === 2) {
      const length = yield* lengthOf(w, end);
      model.initializerBytes += length;
      yield* skip(w, length);
    } else yield* skipField(w, wire, end);
  }
  model.initializerCount++;
  if (model.initializerCount > ONNX_READ_LIMITS.maxInitializers) {
    throw new OnnxBoundError(`the graph has more than ${ONNX_READ_LIMITS.maxInitializers} initializers; at most ${ONNX_READ_LIMITS.maxInitializers} are accepted`);
  }
  model.initializerNames.add(name);
  if (external) model.externalDataTensors.push(name);
}

function* graph(w: Window, end: number, model: WireModel): Gen<void> {
  model.hasGraph = true;
  while (w.at() < end) {
    const [field, wire] = yield* key(w, end);
    if (field === 1 && wire === 2) {
      if (++model.nodeCount > ONNX_READ_LIMITS.maxNodes) {
        throw new OnnxBoundError(`the graph has more than ${ONNX_READ_LIMITS.maxNodes} nodes; at most ${ONNX_READ_LIMITS.maxNodes} are accepted`);
      }
      yield* skipField(w, wire, end);
    } else if (field === 5 && wire === 2) yield* message(w, end, (e) => initializer(w, e, model));
    else if (field === 11 && wire === 2) {
      if (model.declaredInputs.length === ONNX_READ_LIMITS.maxDeclaredInputs) {
        throw new OnnxBoundError(`the graph declares more than ${ONNX_READ_LIMITS.maxDeclaredInputs} inputs; at most ${ONNX_READ_LIMITS.maxDeclaredInputs} are accepted`);
      }
      model.declaredInputs.push(yield* message(w, end, (e) => valueInfo(w, e, "input", model.declaredInputs.length)));
    } else if (field === 12 && wire === 2) {
      if (model.outputs.length === ONNX_READ_LIMITS.maxOutputs) {
        throw new OnnxBoundError(`the graph declares more than ${ONNX_READ_LIMITS.maxOutputs} outputs; at most ${ONNX_READ_LIMITS.maxOutputs} are accepted`);
      }
      model.outputs.push(yield* message(w, end, (e) => valueInfo(w, e, "output", model.outputs.length)));
    } else yield* skipField(w, wire, end);
  }
}

function* opsetImport(w: Window, end: number): Gen<{ domain: string; version: number }> {
  const entry = { domain: "", version: 0 };
  while (w.at() < end) {
    const [field, wire] = yield* key(w, end);
    if (field === 1 && wire === 2) entry.domain = yield* text(w, yield* lengthOf(w, end), ONNX_READ_LIMITS.maxNameBytes, "an opset import's domain");
    else if (field === 2 && wire === 0) entry.version = yield* varint(w, end);
    else yield* skipField(w, wire, end);
  }
  return entry;
}

function* metadataEntry(w: Window, end: number): Gen<[string, string]> {
  const entry: [string, string] = ["", ""];
  while (w.at() < end) {
    const [field, wire] = yield* key(w, end);
    if ((field === 1 || field === 2) && wire === 2) entry[field - 1] = yield* text(w, yield* lengthOf(w, end), ONNX_READ_LIMITS.maxMetadataChars, "metadata", true);
    else yield* skipField(w, wire, end);
  }
  return entry;
}

function* modelProto(w: Window, end: number): Gen<WireModel> {
  const model: WireModel = {
    irVersion: 0, producerName: "", producerVersion: "", opsetImports: [], metadata: [], hasGraph: false,
    declaredInputs: [], outputs: [], initializerNames: new Set(), externalDataTensors: [], nodeCount: 0, initializerCount: 0, initializerBytes: 0,
  };
  const producer = (length: number) => text(w, length, ONNX_READ_LIMITS.maxProducerChars, "the producer", true);
  while (w.at() < end) {
    const [field, wire] = yield* key(w, end);
    if (field === 1 && wire === 0) model.irVersion = yield* varint(w, end);
    else if (field === 2 && wire === 2) model.producerName = yield* producer(yield* lengthOf(w, end));
    else if (field === 3 && wire === 2) model.producerVersion = yield* producer(yield* lengthOf(w, end));
    else if (field === 7 && wire === 2) yield* message(w, end, (e) => graph(w, e, model));
    else if (field === 8 && wire === 2) {
      if (model.opsetImports.length === ONNX_READ_LIMITS.maxOpsetImports) {
        throw new OnnxBoundError(`the model imports more than ${ONNX_READ_LIMITS.maxOpsetImports} opsets; at most ${ONNX_READ_LIMITS.maxOpsetImports} are accepted`);
      }
      model.opsetImports.push(yield* message(w, end, (e) => opsetImport(w, e)));
    } else if (field === 14 && wire === 2) {
      const entry = yield* message(w, end, (e) => metadataEntry(w, e));
      if (model.metadata.length < ONNX_READ_LIMITS.maxMetadataEntries) model.metadata.push(entry);
    } else yield* skipField(w, wire, end);
  }
  const inputs = model.declaredInputs.filter((i) => !model.initializerNames.has(i.name)).length;
  if (inputs > ONNX_READ_LIMITS.maxInputs) {
    throw new OnnxBoundError(`the graph declares ${inputs} inputs (besides initializers); at most ${ONNX_READ_LIMITS.maxInputs} are accepted`);
  }
  return model;
}

/** Reads a model held in memory; linear in its size, bounded in memory. Throws OnnxDecodeError or OnnxBoundError. */
export function readOnnxBytes(bytes: Uint8Array): WireModel {
  const w = new Window();
  w.buf = bytes;
  const parser = modelProto(w, bytes.length);
  for (let step = parser.next(); ; step = parser.next()) {
    if (step.done) return step.value;
    // Every request past the buffer means the file ends inside a field.
    decodeFail("the file ends inside a field (truncated?)");
  }
}

/** Work between two pauses for the event loop, in bytes walked or requests answered. */
const SLICE_BYTES = 256 * 1024;
const SLICE_REQUESTS = 20_000;

/**
 * Reads a model from a stream of chunks (a stored file), `totalBytes` long, pausing for the event
 * loop between slices of work; never holds more than a chunk and a name in memory.
 */
export async function readOnnxStream(chunks: AsyncIterable<Uint8Array>, totalBytes: number): Promise<WireModel> {
  const w = new Window();
  const source = chunks[Symbol.asyncIterator]();
  let requests = 0;
  let walked = 0;
  const pull = async (): Promise<Uint8Array> => {
    const next = await source.next();
    if (next.done) decodeFail(`the file ends inside a field (truncated?) at byte ${w.at()}`);
    walked += next.value.length;
    return next.value;
  };
  const parser = modelProto(w, totalBytes);
  try {
    for (let step = parser.next(); ; step = parser.next()) {
      if (step.done) return step.value;
      const request = step.value;
      if ("need" in request) {
        while (w.available() < request.need) {
          const chunk = await pull();
          const rest = w.buf.subarray(w.pos);
          const joined = new Uint8Array(rest.length + chunk.length);
          joined.set(rest);
          joined.set(chunk, rest.length);
          w.base += w.pos;
          w.buf = joined;
          w.pos = 0;
        }
      } else {
        let left = request.skip;
        while (w.available() < left) {
          left -= w.available();
          w.base += w.buf.length;
          w.buf = await pull();
          w.pos = 0;
        }
        w.pos += left;
      }
      if (++requests >= SLICE_REQUESTS || walked >= SLICE_BYTES) {
        requests = 0;
        walked = 0;
        await nextTurn();
      }
    }
  } finally {
    await source.return?.();
  }
}

/** A buffer in memory as a stream of slices, so readOnnxStream pauses between them. */
export async function* slicesOf(bytes: Uint8Array, sliceBytes = SLICE_BYTES): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += sliceBytes) yield bytes.subarray(at, at + sliceBytes);
}
