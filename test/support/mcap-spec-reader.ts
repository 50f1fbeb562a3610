/**
 * A minimal MCAP reader written from the format's specification (https://mcap.dev/spec, version 0),
 * independent of @mcap/core, which writes the recordings: if the writer (or the agent's use of it)
 * got the layout wrong, this reader does not agree by construction. It walks the data section record
 * by record in file order (no summary or index needed), opens uncompressed chunks, checks their CRC,
 * and returns the channels and messages. Compressed chunks are refused (the agent writes none).
 *
 * Layout used (all integers little-endian):
 *   magic            0x89 "MCAP0" "\r\n" at the start and the end of the file
 *   record           opcode uint8, length uint64, content
 *   Channel  0x04    id uint16, schema_id uint16, topic String, message_encoding String, metadata Map<String,String>
 *   Message  0x05    channel_id uint16, sequence uint32, log_time uint64, publish_time uint64, data (rest)
 *   Chunk    0x06    message_start_time uint64, message_end_time uint64, uncompressed_size uint64,
 *                    uncompressed_crc uint32 (0: not computed), compression String, records uint64-prefixed bytes
 *   Footer   0x02    ends the records; String is uint32 length + UTF-8 bytes
 */
import { crc32 } from "node:zlib";

export const MCAP_MAGIC = Uint8Array.from([0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a]);

const OP_FOOTER = 0x02;
const OP_CHANNEL = 0x04;
const OP_MESSAGE = 0x05;
const OP_CHUNK = 0x06;

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
  channels: Map<number, SpecMcapChannel>;
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
  const file: SpecMcapFile = { channels: new Map(), messages: [] };
  const records = new Cursor(bytes.subarray(MCAP_MAGIC.length, bytes.byteLength - MCAP_MAGIC.length));
  walk(records, file, true);
  return file;
}

function walk(cursor: Cursor, file: SpecMcapFile, topLevel: boolean): void {
  while (cursor.remaining > 0) {
    const opcode = cursor.u8();
    const content = new Cursor(cursor.take(cursor.u64(), `record 0x${opcode.toString(16)}`));
    if (opcode === OP_CHANNEL) {
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
      if (compression !== "") throw new Error(`MCAP chunk compressed with "${compression}"; this reader opens uncompressed chunks only`);
      const inner = content.take(content.u64(), "chunk records");
      if (BigInt(inner.byteLength) !== uncompressedSize) throw new Error(`MCAP chunk says ${uncompressedSize} bytes, holds ${inner.byteLength}`);
      if (crc !== 0 && crc32(inner) !== crc) throw new Error("MCAP chunk CRC mismatch");
      walk(new Cursor(inner), file, false);
    } else if (opcode === OP_FOOTER && topLevel) {
      return;
    }
    // Header, Schema, indexes, statistics, summary offsets, data end, attachments, metadata: not needed here.
  }
}

/** The messages of one topic, their data parsed as JSON (the agent records JSON throughout). */
export function jsonMessages(file: SpecMcapFile, topic: string): Array<{ logTimeNs: bigint; publishTimeNs: bigint; body: any }> {
  return file.messages.filter((m) => m.topic === topic).map((m) => ({ logTimeNs: m.logTimeNs, publishTimeNs: m.publishTimeNs, body: JSON.parse(new TextDecoder().decode(m.data)) }));
}
