/**
 * The records of the MCAP chunk being filled: Message records (https://mcap.dev/spec#message-op0x05)
 * written straight into a buffer that is handed over whole when the chunk closes, with each channel's
 * message index. Closed chunks' buffers come back (`recycle`) once compressed or written, so a
 * recording allocates a few buffers, not one per chunk.
 *
 * @mcap/core's ChunkBuilder grows its own buffer and its `buffer` getter copies the records out at
 * every chunk (a 1 MiB allocation, zero-filled, then a copy): with the 32 KiB allocation of every
 * camera frame's encoding, that was what kept V8's major GC busy (15-20% of a recording's samples).
 */
import { Opcode, type McapTypes } from "@mcap/core";

/** A Message record up to its data: opcode, record length, channel id, sequence, log and publish time. */
const MESSAGE_HEAD = 1 + 8 + 2 + 4 + 8 + 8;

export interface ClosedChunk {
  /** The records: a view from offset 0 of a buffer the receiver now owns (see ChunkRecords.recycle). */
  records: Uint8Array;
  indexes: McapTypes.MessageIndex[];
  messageStartTime: bigint;
  messageEndTime: bigint;
}

export class ChunkRecords {
  private bytes: Uint8Array;
  private view: DataView;
  private used = 0;
  private count = 0;
  private startTime = 0n;
  private endTime = 0n;
  private readonly indexes = new Map<number, McapTypes.MessageIndex>();
  /** Buffers of closed chunks, handed back; at most `keep` are kept. */
  private readonly spare: ArrayBuffer[] = [];

  /** `capacity`: a buffer's size (the chunk size and room for the message that crosses it); `keep`: spare buffers kept. */
  constructor(private readonly capacity: number, private readonly keep: number) {
    this.bytes = new Uint8Array(capacity);
    this.view = new DataView(this.bytes.buffer);
  }

  get byteLength(): number {
    return this.used;
  }

  get messageCount(): number {
    return this.count;
  }

  add(message: McapTypes.Message): void {
    const size = MESSAGE_HEAD + message.data.byteLength;
    if (this.used + size > this.bytes.byteLength) this.grow(this.used + size);
    if (this.count === 0 || message.logTime < this.startTime) this.startTime = message.logTime;
    if (this.count === 0 || message.logTime > this.endTime) this.endTime = message.logTime;
    this.count++;
    let index = this.indexes.get(message.channelId);
    if (!index) this.indexes.set(message.channelId, (index = { channelId: message.channelId, records: [] }));
    index.records.push([message.logTime, BigInt(this.used)]);
    const view = this.view;
    let at = this.used;
    view.setUint8(at, Opcode.MESSAGE);
    view.setBigUint64(at + 1, BigInt(size - 9), true);
    view.setUint16(at + 9, message.channelId, true);
    view.setUint32(at + 11, message.sequence, true);
    view.setBigUint64(at + 15, message.logTime, true);
    view.setBigUint64(at + 23, message.publishTime, true);
    at += MESSAGE_HEAD;
    this.bytes.set(message.data, at);
    this.used = at + message.data.byteLength;
  }

  /** Closes the chunk: the caller owns the records' buffer from now on; the next chunk starts in a spare one. */
  close(): ClosedChunk {
    const closed: ClosedChunk = {
      records: this.bytes.subarray(0, this.used), indexes: [...this.indexes.values()], messageStartTime: this.startTime, messageEndTime: this.endTime,
    };
    this.use(this.spare.pop() ?? new ArrayBuffer(this.capacity));
    this.used = 0;
    this.count = 0;
    this.startTime = 0n;
    this.endTime = 0n;
    this.indexes.clear();
    return closed;
  }

  /** Hands back a closed chunk's buffer (the caller must not touch it again). */
  recycle(buffer: ArrayBuffer): void {
    if (buffer.byteLength === this.capacity && this.spare.length < this.keep) this.spare.push(buffer);
  }

  private use(buffer: ArrayBuffer): void {
    this.bytes = new Uint8Array(buffer);
    this.view = new DataView(buffer);
  }

  /** Rare: a message larger than the room left. The bigger buffer is not recycled (its size differs). */
  private grow(needed: number): void {
    const old = this.bytes.subarray(0, this.used);
    this.use(new ArrayBuffer(Math.max(needed, this.bytes.byteLength * 2)));
    this.bytes.set(old);
  }
}
