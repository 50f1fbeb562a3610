/**
 * tf.train.Example in protobuf wire format (tensorflow/core/example/example.proto, feature.proto):
 *
 *   Example  { Features features = 1; }
 *   Features { map<string, Feature> feature = 1; }
 *   Feature  { oneof kind { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3; } }
 *   BytesList { repeated bytes value = 1; }
 *   FloatList { repeated float value = 1 [packed = true]; }
 *   Int64List { repeated int64 value = 1 [packed = true]; }
 *
 * Keys are written sorted so the same episode always serializes to the same bytes.
 *
 * Every message's size is computed first, then the Example is written front to back as pieces: its
 * framing (tags, lengths, keys, numbers, short byte strings) into one buffer of exactly the size it
 * needs, and every byte string of `REFERENCED_BYTES` or more (the camera frames) as the caller's own
 * buffer, never copied. The pieces go to the file with one writev and their CRC is a running one, so an
 * episode's frames are not copied at all in the writer. (A general protobuf writer forks a buffer per
 * nested message and copies it into its parent on join, about four copies of every frame; one buffer
 * of the whole Example was still one copy, 3.5 MB per README episode, and the garbage collector's
 * major collections, started by that much external memory, were a third of an RLDS export's CPU.)
 */

/** The values of one Example feature, flattened (TFDS stores every tensor as a flat list). */
export type FeatureValues =
  | { kind: "bytes"; values: readonly Uint8Array[] }
  | { kind: "float"; values: readonly number[] }
  | { kind: "int64"; values: readonly (number | bigint)[] };

export type FeatureKind = FeatureValues["kind"];

/** Wire types of the fields written here. */
const LEN = 2;
/** The tag byte of field 1, 2 or 3 with wire type LEN (every field number here is below 16). */
const tag = (field: number) => (field << 3) | LEN;

/** Bytes of an unsigned varint below 2^53. */
function varintBytes(value: number): number {
  let n = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    n++;
  }
  return n;
}

/** An int64 as protobuf writes it: two's complement in 64 bits (a negative value takes 10 bytes). */
function int64Unsigned(value: number | bigint): bigint | number {
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) return value;
  return BigInt.asUintN(64, BigInt(value));
}

function int64Bytes(value: number | bigint): number {
  const u = int64Unsigned(value);
  if (typeof u === "number") return varintBytes(u);
  let n = 1;
  for (let v = u; v >= 0x80n; v >>= 7n) n++;
  return n;
}

/** A length-delimited field: tag, length, body. */
const fieldBytes = (bodyBytes: number) => 1 + varintBytes(bodyBytes) + bodyBytes;

/** Size of the Feature message's body (its one oneof field, with the list inside). */
function listBytes(feature: FeatureValues): number {
  switch (feature.kind) {
    case "bytes": {
      let n = 0;
      for (const value of feature.values) n += fieldBytes(value.byteLength);
      return n;
    }
    case "float":
      return feature.values.length > 0 ? fieldBytes(4 * feature.values.length) : 0;
    case "int64":
      return feature.values.length > 0 ? fieldBytes(packedInt64Bytes(feature.values)) : 0;
  }
}

function packedInt64Bytes(values: readonly (number | bigint)[]): number {
  let n = 0;
  for (const value of values) n += int64Bytes(value);
  return n;
}

/** Byte strings at least this long are referenced as pieces of the Example; shorter ones are copied into its framing. */
export const REFERENCED_BYTES = 1024;

/** A serialized Example as consecutive pieces: framing buffers and the caller's referenced byte strings. */
export interface ExamplePieces {
  /** Total bytes: the record's length. */
  byteLength: number;
  pieces: Uint8Array[];
}

/** Writes the framing into one buffer of exactly its size and collects the pieces in order. */
class PieceWriter {
  readonly bytes: Buffer;
  private readonly view: DataView;
  readonly pieces: Uint8Array[] = [];
  /** Start of the framing not yet cut into a piece. */
  private cut = 0;
  at = 0;

  constructor(framingBytes: number) {
    this.bytes = Buffer.allocUnsafe(framingBytes);
    this.view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
  }

  byte(value: number): void {
    this.bytes[this.at++] = value;
  }

  varint(value: number): void {
    while (value >= 0x80) {
      this.bytes[this.at++] = (value % 128) | 0x80;
      value = Math.floor(value / 128);
    }
    this.bytes[this.at++] = value;
  }

  int64(value: number | bigint): void {
    const u = int64Unsigned(value);
    if (typeof u === "number") return this.varint(u);
    let v = u;
    while (v >= 0x80n) {
      this.bytes[this.at++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.bytes[this.at++] = Number(v);
  }

  /** Tag and length of a length-delimited field whose body follows. */
  field(field: number, bodyBytes: number): void {
    this.byte(tag(field));
    this.varint(bodyBytes);
  }

  /** A byte string: copied into the framing when short, else referenced as a piece of its own. */
  raw(data: Uint8Array): void {
    if (data.byteLength < REFERENCED_BYTES) {
      this.bytes.set(data, this.at);
      this.at += data.byteLength;
      return;
    }
    this.flush();
    this.pieces.push(data);
  }

  float32(value: number): void {
    this.view.setFloat32(this.at, value, true);
    this.at += 4;
  }

  /** Cuts the framing written since the last piece into a piece. */
  flush(): void {
    if (this.at > this.cut) this.pieces.push(this.bytes.subarray(this.cut, this.at));
    this.cut = this.at;
  }
}

/** Serializes a tf.train.Example holding `features` (flat key -> values), as pieces (byte strings referenced, not copied). */
export function encodeExample(features: ReadonlyMap<string, FeatureValues>): ExamplePieces {
  const keys = [...features.keys()].sort();
  let referenced = 0;
  const entries = keys.map((key) => {
    const feature = features.get(key)!;
    const keyBytes = Buffer.from(key, "utf8");
    const list = listBytes(feature);
    const value = fieldBytes(list); // Feature: its oneof field around the list
    const entry = fieldBytes(keyBytes.byteLength) + fieldBytes(value); // map entry: key = 1, value = 2
    if (feature.kind === "bytes") for (const v of feature.values) if (v.byteLength >= REFERENCED_BYTES) referenced += v.byteLength;
    return { feature, keyBytes, list, value, entry };
  });
  let featuresBytes = 0;
  for (const e of entries) featuresBytes += fieldBytes(e.entry);
  const byteLength = fieldBytes(featuresBytes);
  const w = new PieceWriter(byteLength - referenced);
  w.field(1, featuresBytes); // Example.features
  for (const { feature, keyBytes, list, value, entry } of entries) {
    w.field(1, entry); // Features.feature map entry
    w.field(1, keyBytes.byteLength);
    w.raw(keyBytes);
    w.field(2, value);
    writeFeature(w, feature, list);
  }
  w.flush();
  let written = 0;
  for (const piece of w.pieces) written += piece.byteLength;
  if (w.at !== w.bytes.byteLength || written !== byteLength) {
    throw new Error(`tf.train.Example encoder bug: wrote ${w.at} of ${w.bytes.byteLength} framing bytes, ${written} of ${byteLength} in all`);
  }
  return { byteLength, pieces: w.pieces };
}

function writeFeature(w: PieceWriter, feature: FeatureValues, list: number): void {
  switch (feature.kind) {
    case "bytes":
      w.field(1, list);
      for (const value of feature.values) {
        w.field(1, value.byteLength);
        w.raw(value);
      }
      return;
    case "float":
      // The oneof is set even when the list is empty (an empty sequence), as TFDS writes it.
      w.field(2, list);
      if (feature.values.length > 0) {
        w.field(1, 4 * feature.values.length);
        for (const value of feature.values) w.float32(value);
      }
      return;
    case "int64":
      w.field(3, list);
      if (feature.values.length > 0) {
        w.field(1, packedInt64Bytes(feature.values));
        for (const value of feature.values) w.int64(value);
      }
      return;
  }
}
