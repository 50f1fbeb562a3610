/**
 * A minimal MCAP reader written from the format's specification (https://mcap.dev/spec, version 0),
 * independent of @mcap/core, which writes the recordings: if the writer (or the agent's use of it)
 * got the layout wrong, this reader does not agree by construction. It walks the data section record
 * by record in file order (no summary or index needed), opens chunks (uncompressed, or zstd as the
 * agent writes them since chunks were compressed), checks their CRC over the uncompressed records, and
 * returns the schemas, channels and messages. zstd is undone with @foxglove/wasm-zstd, the library the
 * production code uses (writing a zstd decoder here would be a project of its own); everything after
 * it, the records and the protobuf of camera frames and transforms, is decoded here from the
 * specifications (`imageMessages`, `transformMessages`), not by the production helpers.
 *
 * Layout used (all integers little-endian):
 *   magic            0x89 "MCAP0" "\r\n" at the start and the end of the file
 *   record           opcode uint8, length uint64, content
 *   Schema   0x03    id uint16, name String, encoding String, data uint32-prefixed bytes
 *   Channel  0x04    id uint16, schema_id uint16, topic String, message_encoding String, metadata Map<String,String>
 *   Message  0x05    channel_id uint16, sequence uint32, log_time uint64, publish_time uint64, data (rest)
 *   Chunk    0x06    message_start_time uint64, message_end_time uint64, uncompressed_size uint64,
 *                    uncompressed_crc uint32 (0: not computed), compression String, records uint64-prefixed bytes
 *   Data End 0x0F    data_section_crc uint32: CRC-32 of every byte before this record, leading magic included (0: not computed)
 *   Footer   0x02    ends the records; String is uint32 length + UTF-8 bytes
 */
import { crc32 } from "node:zlib";
import { decompress, isLoaded } from "@foxglove/wasm-zstd";

await isLoaded;

export const MCAP_MAGIC = Uint8Array.from([0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a]);

const OP_FOOTER = 0x02;
const OP_DATA_END = 0x0f;
const OP_SCHEMA = 0x03;
const OP_CHANNEL = 0x04;
const OP_MESSAGE = 0x05;
const OP_CHUNK = 0x06;

export interface SpecMcapSchema {
  id: number;
  name: string;
  encoding: string;
  data: Uint8Array;
}

export interface SpecMcapChannel {
  id: number;
  schemaId: number;
  topic: string;
  messageEncoding: string;
}

export interface SpecMcapMessage {
  topic: string;
  channelId: number;
  sequence: number;
  logTimeNs: bigint;
  publishTimeNs: bigint;
  data: Uint8Array;
}

export interface SpecMcapFile {
  schemas: Map<number, SpecMcapSchema>;
  channels: Map<number, SpecMcapChannel>;
  /** Data End's CRC and the CRC of the bytes it covers (undefined without a Data End record). */
  dataSectionCrc?: { stated: number; computed: number };
  /** Compression of each chunk in file order ("" for none). */
  chunkCompressions: string[];
  /** Every message in file order (the order the writer added them). */
  messages: SpecMcapMessage[];
}

class Cursor {
  offset = 0;
  private readonly view: DataView;
  constructor(readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  get remaining(): number {
    return this.bytes.byteLength - this.offset;
  }
  private need(n: number, what: string): void {
    if (this.remaining < n) throw new Error(`MCAP truncated: ${what} needs ${n} bytes at offset ${this.offset}, ${this.remaining} left`);
  }
  u8(): number {
    this.need(1, "uint8");
    return this.view.getUint8(this.offset++);
  }
  u16(): number {
    this.need(2, "uint16");
    const v = this.view.getUint16(this.offset, true);
    this.offset += 2;
    return v;
  }
  u32(): number {
    this.need(4, "uint32");
    const v = this.view.getUint32(this.offset, true);
    this.offset += 4;
    return v;
  }
  u64(): bigint {
    this.need(8, "uint64");
    const v = this.view.getBigUint64(this.offset, true);
    this.offset += 8;
    return v;
  }
  take(n: number | bigint, what: string): Uint8Array {
    const size = Number(n);
    this.need(size, what);
    const out = this.bytes.subarray(this.offset, this.offset + size);
    this.offset += size;
    return out;
  }
  string(): string {
    return new TextDecoder("utf-8", { fatal: true }).decode(this.take(this.u32(), "string"));
  }
}

/** Parses a whole MCAP file; throws on a bad magic, a truncated record, a compressed chunk or a CRC mismatch. */
export function readMcapFromSpec(bytes: Uint8Array): SpecMcapFile {
  const head = bytes.subarray(0, MCAP_MAGIC.length);
  const tail = bytes.subarray(bytes.byteLength - MCAP_MAGIC.length);
  if (!MCAP_MAGIC.every((b, i) => head[i] === b)) throw new Error("not an MCAP file: the leading magic is missing");
  if (!MCAP_MAGIC.every((b, i) => tail[i] === b)) throw new Error("MCAP file not finished: the trailing magic is missing");
  const file: SpecMcapFile = { schemas: new Map(), channels: new Map(), chunkCompressions: [], messages: [] };
  const records = new Cursor(bytes.subarray(MCAP_MAGIC.length, bytes.byteLength - MCAP_MAGIC.length));
  walk(records, file, true, bytes);
  return file;
}

function walk(cursor: Cursor, file: SpecMcapFile, topLevel: boolean, whole?: Uint8Array): void {
  while (cursor.remaining > 0) {
    const recordStart = MCAP_MAGIC.length + cursor.offset;
    const opcode = cursor.u8();
    const content = new Cursor(cursor.take(cursor.u64(), `record 0x${opcode.toString(16)}`));
    if (opcode === OP_SCHEMA) {
      const id = content.u16();
      const name = content.string();
      const encoding = content.string();
      file.schemas.set(id, { id, name, encoding, data: content.take(content.u32(), "schema data") });
    } else if (opcode === OP_CHANNEL) {
      const id = content.u16();
      const schemaId = content.u16();
      const topic = content.string();
      const messageEncoding = content.string();
      file.channels.set(id, { id, schemaId, topic, messageEncoding });
    } else if (opcode === OP_MESSAGE) {
      const channelId = content.u16();
      const sequence = content.u32();
      const logTimeNs = content.u64();
      const publishTimeNs = content.u64();
      const channel = file.channels.get(channelId);
      if (!channel) throw new Error(`MCAP message on channel ${channelId} before its Channel record`);
      file.messages.push({ topic: channel.topic, channelId, sequence, logTimeNs, publishTimeNs, data: content.take(content.remaining, "message data") });
    } else if (opcode === OP_CHUNK && topLevel) {
      content.u64(); // message_start_time
      content.u64(); // message_end_time
      const uncompressedSize = content.u64();
      const crc = content.u32();
      const compression = content.string();
      const stored = content.take(content.u64(), "chunk records");
      file.chunkCompressions.push(compression);
      let inner: Uint8Array;
      if (compression === "") inner = stored;
      else if (compression === "zstd") inner = decompress(stored, Number(uncompressedSize));
      else throw new Error(`MCAP chunk compressed with "${compression}"; this reader opens uncompressed and zstd chunks`);
      if (BigInt(inner.byteLength) !== uncompressedSize) throw new Error(`MCAP chunk says ${uncompressedSize} bytes, holds ${inner.byteLength}`);
      if (crc !== 0 && crc32(inner) !== crc) throw new Error("MCAP chunk CRC mismatch");
      walk(new Cursor(inner), file, false);
    } else if (opcode === OP_DATA_END && topLevel && whole) {
      file.dataSectionCrc = { stated: content.u32(), computed: crc32(whole.subarray(0, recordStart)) };
    } else if (opcode === OP_FOOTER && topLevel) {
      return;
    }
    // Header, Schema, indexes, statistics, summary offsets, data end, attachments, metadata: not needed here.
  }
}

/** The messages of one topic, their data parsed as JSON (every channel but the cameras and `/tf`). */
export function jsonMessages(file: SpecMcapFile, topic: string): Array<{ logTimeNs: bigint; publishTimeNs: bigint; body: any }> {
  return file.messages.filter((m) => m.topic === topic).map((m) => ({ logTimeNs: m.logTimeNs, publishTimeNs: m.publishTimeNs, body: JSON.parse(new TextDecoder().decode(m.data)) }));
}

// ---- protobuf, from https://protobuf.dev/programming-guides/encoding/ -----------------------------

/** A protobuf message's fields: number -> values in order (varints as bigint, I64 as 8 bytes, LEN as bytes). */
function protoFields(bytes: Uint8Array): Map<number, Array<bigint | Uint8Array>> {
  const fields = new Map<number, Array<bigint | Uint8Array>>();
  let at = 0;
  const varint = () => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= bytes.length) throw new Error("protobuf truncated in a varint");
      const b = bytes[at++]!;
      value |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return value;
    }
  };
  const take = (n: number) => {
    if (at + n > bytes.length) throw new Error("protobuf field runs past the message");
    const out = bytes.subarray(at, at + n);
    at += n;
    return out;
  };
  while (at < bytes.length) {
    const key = Number(varint());
    const wire = key & 7;
    const value = wire === 0 ? varint() : wire === 1 ? take(8) : wire === 2 ? take(Number(varint())) : wire === 5 ? take(4) : undefined;
    if (value === undefined) throw new Error(`protobuf wire type ${wire} unexpected`);
    fields.set(key >>> 3, [...(fields.get(key >>> 3) ?? []), value]);
  }
  return fields;
}

const lenField = (f: Map<number, Array<bigint | Uint8Array>>, n: number) => (f.get(n)?.at(-1) as Uint8Array | undefined) ?? new Uint8Array();
const varintField = (f: Map<number, Array<bigint | Uint8Array>>, n: number) => Number((f.get(n)?.at(-1) as bigint | undefined) ?? 0n);
const doubleField = (f: Map<number, Array<bigint | Uint8Array>>, n: number) => {
  const b = f.get(n)?.at(-1) as Uint8Array | undefined;
  return b ? new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true) : 0;
};
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const timestampOf = (b: Uint8Array) => {
  const f = protoFields(b);
  return { sec: varintField(f, 1), nsec: varintField(f, 2) };
};

export interface SpecImage {
  logTimeNs: bigint;
  timestamp: { sec: number; nsec: number };
  frameId: string;
  format: string;
  data: Uint8Array;
}

/** A camera topic's frames, from either layout: protobuf foxglove.CompressedImage (fields 1 timestamp, 2 data, 3 format, 4 frame_id) or JSON with base64 data. */
export function imageMessages(file: SpecMcapFile, topic: string): SpecImage[] {
  return file.messages.filter((m) => m.topic === topic).map((m) => {
    if (file.channels.get(m.channelId)!.messageEncoding === "json") {
      const body = JSON.parse(text(m.data)) as { timestamp: { sec: number; nsec: number }; frame_id: string; format: string; data: string };
      return { logTimeNs: m.logTimeNs, timestamp: body.timestamp, frameId: body.frame_id, format: body.format, data: Buffer.from(body.data, "base64") };
    }
    const f = protoFields(m.data);
    return { logTimeNs: m.logTimeNs, timestamp: timestampOf(lenField(f, 1)), frameId: text(lenField(f, 4)), format: text(lenField(f, 3)), data: lenField(f, 2) };
  });
}

export interface SpecTransform {
  timestamp: { sec: number; nsec: number };
  parent: string;
  child: string;
  translation: [number, number, number];
  rotation: [number, number, number, number];
}

/** `/tf`'s foxglove.FrameTransforms messages (field 1: FrameTransform {1 timestamp, 2 parent, 3 child, 4 Vector3, 5 Quaternion}). */
export function transformMessages(file: SpecMcapFile, topic = "/tf"): Array<{ logTimeNs: bigint; transforms: SpecTransform[] }> {
  return file.messages.filter((m) => m.topic === topic).map((m) => ({
    logTimeNs: m.logTimeNs,
    transforms: (protoFields(m.data).get(1) ?? []).map((raw) => {
      const f = protoFields(raw as Uint8Array);
      const v = protoFields(lenField(f, 4));
      const q = protoFields(lenField(f, 5));
      return {
        timestamp: timestampOf(lenField(f, 1)), parent: text(lenField(f, 2)), child: text(lenField(f, 3)),
        translation: [doubleField(v, 1), doubleField(v, 2), doubleField(v, 3)] as [number, number, number],
        rotation: [doubleField(q, 1), doubleField(q, 2), doubleField(q, 3), doubleField(q, 4)] as [number, number, number, number],
      };
    }),
  }));
}
