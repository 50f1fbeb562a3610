/**
 * Foxglove's well-known message schemas in protobuf encoding, as the episode recording carries them:
 * `foxglove.CompressedImage` (camera frames: the JPEG bytes as they are, no base64) and
 * `foxglove.FrameTransforms` (`/tf`). An MCAP channel in protobuf encoding carries its schema as a
 * serialized `google.protobuf.FileDescriptorSet` holding the message's file and every file it imports,
 * which is what Foxglove's own writers put there; Foxglove Studio and the MCAP CLI decode the messages
 * from it.
 *
 * The descriptors are the .proto files of Foxglove's schema repository (foxglove/schemas), field for
 * field:
 *
 *   message CompressedImage { google.protobuf.Timestamp timestamp = 1; string frame_id = 4; bytes data = 2; string format = 3; }
 *   message FrameTransforms { repeated foxglove.FrameTransform transforms = 1; }
 *   message FrameTransform  { google.protobuf.Timestamp timestamp = 1; string parent_frame_id = 2; string child_frame_id = 3;
 *                             foxglove.Vector3 translation = 4; foxglove.Quaternion rotation = 5; }
 *   message Vector3    { double x = 1; double y = 2; double z = 3; }
 *   message Quaternion { double x = 1; double y = 2; double z = 3; double w = 4; }
 *
 * Messages are encoded by hand here (a camera frame is written at every control step, and a
 * reflective encoder would copy the JPEG twice); test/unit/foxglove-protobuf.spec.ts checks the bytes
 * against @bufbuild/protobuf's encoder driven by these same descriptors.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label, FieldDescriptorProto_Type, file_google_protobuf_timestamp, FileDescriptorSetSchema, type FileDescriptorProto,
} from "@bufbuild/protobuf/wkt";

export const COMPRESSED_IMAGE = "foxglove.CompressedImage";
export const FRAME_TRANSFORMS = "foxglove.FrameTransforms";

type FieldSpec = [name: string, number: number, type: "double" | "string" | "bytes" | `.${string}`, repeated?: boolean];

const TYPES = { double: FieldDescriptorProto_Type.DOUBLE, string: FieldDescriptorProto_Type.STRING, bytes: FieldDescriptorProto_Type.BYTES };

function fileProto(name: string, message: string, dependency: string[], fields: FieldSpec[]): FileDescriptorProto {
  return create(FileDescriptorSetSchema, {
    file: [{
      name, package: "foxglove", dependency, syntax: "proto3",
      messageType: [{
        name: message,
        field: fields.map(([fieldName, number, type, repeated]) => ({
          name: fieldName, number, jsonName: fieldName.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
          label: repeated ? FieldDescriptorProto_Label.REPEATED : FieldDescriptorProto_Label.OPTIONAL,
          ...(type.startsWith(".") ? { type: FieldDescriptorProto_Type.MESSAGE, typeName: type } : { type: TYPES[type as keyof typeof TYPES] }),
        })),
      }],
    }],
  }).file[0]!;
}

const TIMESTAMP_FILE = file_google_protobuf_timestamp.proto;
const FILES = {
  compressedImage: fileProto("foxglove/CompressedImage.proto", "CompressedImage", ["google/protobuf/timestamp.proto"], [
    ["timestamp", 1, ".google.protobuf.Timestamp"], ["frame_id", 4, "string"], ["data", 2, "bytes"], ["format", 3, "string"],
  ]),
  vector3: fileProto("foxglove/Vector3.proto", "Vector3", [], [["x", 1, "double"], ["y", 2, "double"], ["z", 3, "double"]]),
  quaternion: fileProto("foxglove/Quaternion.proto", "Quaternion", [], [["x", 1, "double"], ["y", 2, "double"], ["z", 3, "double"], ["w", 4, "double"]]),
  frameTransform: fileProto("foxglove/FrameTransform.proto", "FrameTransform", ["foxglove/Quaternion.proto", "foxglove/Vector3.proto", "google/protobuf/timestamp.proto"], [
    ["timestamp", 1, ".google.protobuf.Timestamp"], ["parent_frame_id", 2, "string"], ["child_frame_id", 3, "string"],
    ["translation", 4, ".foxglove.Vector3"], ["rotation", 5, ".foxglove.Quaternion"],
  ]),
  frameTransforms: fileProto("foxglove/FrameTransforms.proto", "FrameTransforms", ["foxglove/FrameTransform.proto"], [["transforms", 1, ".foxglove.FrameTransform", true]]),
};

/** A serialized FileDescriptorSet: the files in dependency order (imports first). */
function descriptorSet(files: FileDescriptorProto[]): Uint8Array {
  return toBinary(FileDescriptorSetSchema, create(FileDescriptorSetSchema, { file: files }));
}

/** The schema data of each message: its FileDescriptorSet. */
export const FOXGLOVE_DESCRIPTOR_SETS: Readonly<Record<typeof COMPRESSED_IMAGE | typeof FRAME_TRANSFORMS, Uint8Array>> = {
  [COMPRESSED_IMAGE]: descriptorSet([TIMESTAMP_FILE, FILES.compressedImage]),
  [FRAME_TRANSFORMS]: descriptorSet([TIMESTAMP_FILE, FILES.vector3, FILES.quaternion, FILES.frameTransform, FILES.frameTransforms]),
};

// ---- encoding ------------------------------------------------------------------------------------

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const utf8 = new TextEncoder();

/** A growable protobuf writer: just what these messages need. */
class ProtoWriter {
  private buffer = new Uint8Array(256);
  private view = new DataView(this.buffer.buffer);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.buffer.length) return;
    const next = new Uint8Array(Math.max(this.buffer.length * 2, this.length + n));
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
    this.view = new DataView(next.buffer);
  }

  varint(value: number | bigint): void {
    let v = BigInt.asUintN(64, BigInt(value));
    this.reserve(10);
    while (v >= 0x80n) {
      this.buffer[this.length++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buffer[this.length++] = Number(v);
  }

  /** A small non-negative integer (field tags, lengths): no BigInt. */
  uint(value: number): void {
    this.reserve(5);
    while (value >= 0x80) {
      this.buffer[this.length++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    this.buffer[this.length++] = value;
  }

  tag(field: number, wire: number): void {
    this.uint((field << 3) | wire);
  }

  bytes(field: number, data: Uint8Array): void {
    if (data.byteLength === 0) return;
    this.tag(field, WIRE_LEN);
    this.uint(data.byteLength);
    this.reserve(data.byteLength);
    this.buffer.set(data, this.length);
    this.length += data.byteLength;
  }

  string(field: number, value: string): void {
    this.bytes(field, utf8.encode(value));
  }

  double(field: number, value: number): void {
    if (value === 0 && !Object.is(value, -0)) return;
    this.tag(field, WIRE_I64);
    this.reserve(8);
    this.view.setFloat64(this.length, value, true);
    this.length += 8;
  }

  /** A nested message, always written (an empty one too), as protobuf-es writes a set message field. */
  message(field: number, write: (w: ProtoWriter) => void): void {
    const inner = new ProtoWriter();
    write(inner);
    this.tag(field, WIRE_LEN);
    this.uint(inner.length);
    this.reserve(inner.length);
    this.buffer.set(inner.finish(), this.length);
    this.length += inner.length;
  }

  finish(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }
}

export interface ProtoTimestamp {
  sec: number;
  nsec: number;
}

function timestamp(w: ProtoWriter, t: ProtoTimestamp): void {
  if (t.sec !== 0) {
    w.tag(1, WIRE_VARINT);
    w.varint(t.sec);
  }
  if (t.nsec !== 0) {
    w.tag(2, WIRE_VARINT);
    w.uint(t.nsec);
  }
}

export interface CompressedImageMessage {
  timestamp: ProtoTimestamp;
  frameId: string;
  data: Uint8Array;
  format: string;
}

/** A `foxglove.CompressedImage` in protobuf wire format; the image bytes are copied once. */
export function encodeCompressedImage(image: CompressedImageMessage): Uint8Array {
  const head = new ProtoWriter();
  head.message(1, (w) => timestamp(w, image.timestamp));
  const tail = new ProtoWriter();
  tail.string(3, image.format);
  tail.string(4, image.frameId);
  const dataHead = new ProtoWriter();
  if (image.data.byteLength > 0) {
    dataHead.tag(2, WIRE_LEN);
    dataHead.uint(image.data.byteLength);
  }
  const out = new Uint8Array(head.length + dataHead.length + image.data.byteLength + tail.length);
  out.set(head.finish(), 0);
  out.set(dataHead.finish(), head.length);
  out.set(image.data, head.length + dataHead.length);
  out.set(tail.finish(), head.length + dataHead.length + image.data.byteLength);
  return out;
}

export interface FrameTransformMessage {
  timestamp: ProtoTimestamp;
  parentFrameId: string;
  childFrameId: string;
  translation: readonly [number, number, number];
  /** x, y, z, w */
  rotation: readonly [number, number, number, number];
}

/** A `foxglove.FrameTransforms` in protobuf wire format. */
export function encodeFrameTransforms(transforms: readonly FrameTransformMessage[]): Uint8Array {
  const w = new ProtoWriter();
  for (const t of transforms) {
    w.message(1, (f) => {
      f.message(1, (s) => timestamp(s, t.timestamp));
      f.string(2, t.parentFrameId);
      f.string(3, t.childFrameId);
      f.message(4, (v) => t.translation.forEach((x, i) => v.double(i + 1, x)));
      f.message(5, (q) => t.rotation.forEach((x, i) => q.double(i + 1, x)));
    });
  }
  return w.finish();
}

// ---- decoding (the readers need the image only) --------------------------------------------------

/** Decodes a `foxglove.CompressedImage`; `data` is a view into `bytes`. Unknown fields are skipped. */
export function decodeCompressedImage(bytes: Uint8Array): CompressedImageMessage {
  const out: CompressedImageMessage = { timestamp: { sec: 0, nsec: 0 }, frameId: "", data: new Uint8Array(), format: "" };
  const r = new ProtoReader(bytes);
  while (!r.done()) {
    const key = r.uint();
    const field = key >>> 3;
    const wire = key & 7;
    if (wire !== WIRE_LEN || field < 1 || field > 4) {
      r.skip(wire);
      continue;
    }
    const value = r.take(r.uint());
    if (field === 1) {
      const t = new ProtoReader(value);
      while (!t.done()) {
        const k = t.uint();
        if ((k & 7) !== WIRE_VARINT) t.skip(k & 7);
        else if (k >>> 3 === 1) out.timestamp.sec = Number(BigInt.asIntN(64, t.varint()));
        else if (k >>> 3 === 2) out.timestamp.nsec = Number(t.varint());
        else t.varint();
      }
    } else if (field === 2) out.data = value;
    else if (field === 3) out.format = new TextDecoder().decode(value);
    else out.frameId = new TextDecoder().decode(value);
  }
  return out;
}

/**
 * The image bytes (`data`, field 2) of a `foxglove.CompressedImage`, the last one as protobuf
 * decoders take it, without decoding the other fields: what the exports read of every frame (two
 * text decodings and a timestamp per frame less than `decodeCompressedImage`).
 */
export function compressedImageData(bytes: Uint8Array): Uint8Array {
  let data: Uint8Array = new Uint8Array();
  const r = new ProtoReader(bytes);
  while (!r.done()) {
    const key = r.uint();
    const wire = key & 7;
    if (wire !== WIRE_LEN) r.skip(wire);
    else if (key >>> 3 === 2) data = r.take(r.uint());
    else r.take(r.uint());
  }
  return data;
}

class ProtoReader {
  private offset = 0;
  constructor(private readonly bytes: Uint8Array) {}

  done(): boolean {
    return this.offset >= this.bytes.byteLength;
  }

  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (this.offset >= this.bytes.byteLength) throw new Error("protobuf message truncated inside a varint");
      const b = this.bytes[this.offset++]!;
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return result;
    }
    throw new Error("protobuf varint longer than 10 bytes");
  }

  uint(): number {
    const v = this.varint();
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`protobuf length or tag ${v} is too large`);
    return Number(v);
  }

  take(n: number): Uint8Array {
    if (this.offset + n > this.bytes.byteLength) throw new Error(`protobuf field of ${n} bytes runs past the message's end`);
    const out = this.bytes.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }

  skip(wire: number): void {
    if (wire === WIRE_VARINT) this.varint();
    else if (wire === WIRE_I64) this.take(8);
    else if (wire === WIRE_LEN) this.take(this.uint());
    else if (wire === 5) this.take(4);
    else throw new Error(`protobuf wire type ${wire} is not supported`);
  }
}
