/**
 * MessagePack with NumPy arrays, byte for byte as openpi-client's `msgpack_numpy.py` writes and
 * reads it (the wire of openpi and RoboArena policy servers).
 *
 * An ndarray travels as a 4-entry map whose keys are MessagePack *bin* (Python `bytes`), not str:
 *   {b"__ndarray__": true, b"data": <bin: the array's bytes, C order>, b"dtype": "<f4", b"shape": [h, w, 3]}
 * The Python side looks the keys up as bytes (`b"__ndarray__" in obj`), so an array sent with str
 * keys arrives as a plain dict and the policy fails. A NumPy scalar (np.generic) travels as
 * {b"__npgeneric__": true, b"data": <its Python value>, b"dtype": "<f8"}; we decode it to the plain
 * JS value and never send one. Every other value is plain MessagePack (Python str as str, bytes
 * as bin, tuples as arrays, floats as float64).
 *
 * Decoding is liberal: it accepts the marker keys as bin or str, any byte order, and dtypes we do
 * not compute with (strings, datetimes) as raw bytes.
 */
import { Decoder, Encoder } from "@msgpack/msgpack";

export type NdData =
  | Float32Array | Float64Array | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | BigInt64Array | BigUint64Array;

type NumericKind = "f" | "i" | "u" | "b";

interface DtypeInfo {
  byteOrder: "<" | ">" | "|";
  kind: string;
  itemBytes: number;
}

function parseDtype(dtype: string): DtypeInfo {
  // numpy's dtype.str: byte order, kind, item size, and for datetimes a unit ("<M8[ns]").
  const match = /^([<>|=]?)([a-zA-Z])(\d*)/.exec(dtype);
  if (!match) throw new Error(`not a numpy dtype string: ${JSON.stringify(dtype)}`);
  const order = match[1] === "=" || match[1] === "" ? "<" : (match[1] as "<" | ">" | "|");
  return { byteOrder: order, kind: match[2], itemBytes: Number(match[3] || 0) };
}

const CONSTRUCTORS: Record<string, new (buffer: ArrayBuffer) => NdData> = {
  f4: Float32Array, f8: Float64Array, i1: Int8Array, u1: Uint8Array, b1: Uint8Array, i2: Int16Array, u2: Uint16Array,
  i4: Int32Array, u4: Uint32Array, i8: BigInt64Array, u8: BigUint64Array,
};

/** A NumPy array: numpy's dtype string (`<f4`, `|u1`...), its shape, and its elements in C order. */
export class NdArray {
  readonly dtype: string;
  readonly shape: readonly number[];
  /** Elements (numeric dtypes, little-endian in memory); raw bytes for dtypes we carry but do not compute with. */
  readonly data: NdData;

  constructor(dtype: string, shape: readonly number[], data: NdData) {
    const { byteOrder, kind, itemBytes } = parseDtype(dtype);
    if (isNumericKind(kind)) {
      const Typed = CONSTRUCTORS[`${kind}${itemBytes}`];
      if (!Typed || !(data instanceof Typed) || (byteOrder === ">" && itemBytes > 1)) {
        throw new TypeError(`an ndarray of dtype ${dtype} needs its elements little-endian in a ${Typed?.name ?? "supported typed array"}; got a ${data.constructor.name}`);
      }
      const size = shape.reduce((a, b) => a * b, 1);
      if (data.length !== size) throw new RangeError(`an ndarray of shape [${shape.join(", ")}] holds ${size} elements; got ${data.length}`);
    }
    this.dtype = dtype;
    this.shape = shape;
    this.data = data;
  }

  static float32(shape: readonly number[], values: ArrayLike<number>): NdArray {
    return new NdArray("<f4", shape, Float32Array.from(values));
  }

  static uint8(shape: readonly number[], values: Uint8Array): NdArray {
    return new NdArray("|u1", shape, values);
  }

  /** True for bool, integer and float dtypes. */
  get isNumeric(): boolean {
    return isNumericKind(parseDtype(this.dtype).kind);
  }

  /** The elements as JS numbers, flat in C order (64-bit integers rounded to the nearest double). */
  toNumbers(): number[] {
    if (!this.isNumeric) throw new TypeError(`an ndarray of dtype ${this.dtype} holds no numbers`);
    return Array.from(this.data as ArrayLike<number | bigint>, Number);
  }

  /** The bytes numpy's `tobytes()` gives for a little-endian array of this dtype. */
  bytes(): Uint8Array {
    return new Uint8Array(this.data.buffer, this.data.byteOffset, this.data.byteLength);
  }
}

function isNumericKind(kind: string): kind is NumericKind {
  return kind === "f" || kind === "i" || kind === "u" || kind === "b";
}

/** numpy float16 bits to a double. */
function halfToNumber(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/**
 * The elements of `bytes` as numpy would read them with `dtype`, little-endian in memory, and the
 * dtype that now describes them (big-endian becomes little-endian; float16 widens to float32).
 */
function elementsOf(bytes: Uint8Array, dtype: string, size: number): { dtype: string; data: NdData } {
  const { byteOrder, kind, itemBytes } = parseDtype(dtype);
  if (!isNumericKind(kind)) return { dtype, data: new Uint8Array(bytes) };
  if (bytes.byteLength !== size * itemBytes) {
    throw new Error(`an ndarray of dtype ${dtype} and ${size} elements needs ${size * itemBytes} bytes; got ${bytes.byteLength}`);
  }
  // A copy, aligned for the typed array and free of the message buffer (not slice(): on a Buffer that is a view).
  const copy = new Uint8Array(bytes);
  if (byteOrder === ">" && itemBytes > 1) {
    for (let i = 0; i < copy.length; i += itemBytes) copy.subarray(i, i + itemBytes).reverse();
  }
  if (kind === "f" && itemBytes === 2) return { dtype: "<f4", data: Float32Array.from(new Uint16Array(copy.buffer), halfToNumber) };
  const Typed = CONSTRUCTORS[`${kind}${itemBytes}`];
  if (!Typed) throw new Error(`unsupported numpy dtype ${JSON.stringify(dtype)}`);
  return { dtype: itemBytes === 1 ? `|${kind}1` : `<${kind}${itemBytes}`, data: new Typed(copy.buffer) };
}

const utf8 = new TextDecoder();
const textBytes = new TextEncoder();

// Python bytes keys: MessagePack bin.
const KEY_NDARRAY = textBytes.encode("__ndarray__");
const KEY_DATA = textBytes.encode("data");
const KEY_DTYPE = textBytes.encode("dtype");
const KEY_SHAPE = textBytes.encode("shape");

/** The private Encoder methods we hook; checked once, so an upgrade that renames them fails loudly. */
interface EncoderInternals {
  doEncode(object: unknown, depth: number): void;
  encodeObject(object: unknown, depth: number): void;
  encodeBinary(bytes: Uint8Array): void;
  writeU8(value: number): void;
}

let encoder: Encoder | undefined;

/**
 * @msgpack/msgpack writes map keys only as str and has no public hook for a bin-keyed map, so we
 * intercept its `encodeObject` for NdArray values and write the 4-entry map with bin keys through
 * its own primitives. Everything else is @msgpack/msgpack's encoding, unchanged.
 */
function numpyEncoder(): Encoder {
  if (encoder) return encoder;
  const created = new Encoder();
  const internals = created as unknown as EncoderInternals;
  for (const name of ["doEncode", "encodeObject", "encodeBinary", "writeU8"] as const) {
    if (typeof internals[name] !== "function") {
      throw new Error(`@msgpack/msgpack's Encoder has no ${name}(); protocol/policy/openpi/msgpack-numpy.ts needs updating for this version`);
    }
  }
  const encodeObject = internals.encodeObject.bind(created);
  internals.encodeObject = (object: unknown, depth: number) => {
    if (!(object instanceof NdArray)) return encodeObject(object, depth);
    internals.writeU8(0x84); // fixmap, 4 entries
    internals.encodeBinary(KEY_NDARRAY);
    internals.doEncode(true, depth + 1);
    internals.encodeBinary(KEY_DATA);
    internals.encodeBinary(object.bytes());
    internals.encodeBinary(KEY_DTYPE);
    internals.doEncode(object.dtype, depth + 1);
    internals.encodeBinary(KEY_SHAPE);
    internals.doEncode([...object.shape], depth + 1);
  };
  encoder = created;
  return created;
}

/** Packs a value as `msgpack_numpy.packb` does: NdArray values become ndarray maps. */
export function packOpenpi(value: unknown): Uint8Array {
  return numpyEncoder().encode(value);
}

const decoder = new Decoder({
  // Python bytes keys (the ndarray markers) arrive as bin: read them as their UTF-8 text.
  mapKeyConverter: (key) => {
    if (typeof key === "string" || typeof key === "number") return key;
    if (key instanceof Uint8Array) return utf8.decode(key);
    throw new Error(`a MessagePack map key must be a string, number or bytes; got ${typeof key}`);
  },
});

function revive(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revive);
  if (value === null || typeof value !== "object" || ArrayBuffer.isView(value)) return value;
  const map = value as Record<string, unknown>;
  if (map.__ndarray__ === true) {
    const { data, dtype, shape } = map;
    if (!(data instanceof Uint8Array) || typeof dtype !== "string" || !Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw new Error("an ndarray map needs data (bytes), dtype (a numpy dtype string) and shape (non-negative integers)");
    }
    const dims = shape as number[];
    const elements = elementsOf(data, dtype, dims.reduce((a, b) => a * b, 1));
    return new NdArray(elements.dtype, dims, elements.data);
  }
  if (map.__npgeneric__ === true) return map.data;
  for (const key of Object.keys(map)) map[key] = revive(map[key]);
  return map;
}

/** Unpacks as `msgpack_numpy.unpackb` does: ndarray maps become NdArray, numpy scalars plain values. Throws on bytes that are not MessagePack. */
export function unpackOpenpi(bytes: Uint8Array): unknown {
  return revive(decoder.decode(bytes));
}
