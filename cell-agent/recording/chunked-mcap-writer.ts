/**
 * An indexed, chunked MCAP writer (https://mcap.dev/spec) built on @mcap/core's record builders, with
 * its CRCs computed natively by @node-rs/crc32 (PCLMULQDQ / ARMv8 CRC: 4-5 GB/s here against 2 GB/s
 * for Node's `zlib.crc32`, where the two CRCs over every byte were a third of raw writes' CPU).
 * @mcap/core's own McapWriter computes the same CRCs in JavaScript over every byte twice (the chunk's
 * records, then the data section again), which was about the whole gap between recording and raw
 * writes of the same bytes, and offers no hook to swap the function.
 *
 * What it writes is what McapWriter writes with its defaults, less what the agent never uses
 * (attachments, metadata): Header; Schema and Channel records in the data section as they are
 * registered; Chunks (optionally compressed) each followed by its Message Indexes; Data End with
 * the data section's CRC; a summary of Schemas, Channels, Statistics and Chunk Indexes; Summary
 * Offsets; the Footer with the summary's CRC.
 *
 * NOTE: like McapWriter, a call must finish before the next starts (the recorder chains them).
 */
import { crc32 } from "@node-rs/crc32";
import { McapRecordBuilder, Opcode, type IWritable, type McapTypes } from "@mcap/core";
import { ChunkRecords } from "./chunk-records.js";
import { crc32Combine } from "./crc32-combine.js";

type Schema = McapTypes.Schema;
type Channel = McapTypes.Channel;
type Message = McapTypes.Message;
type ChunkIndex = McapTypes.ChunkIndex;

/**
 * `records`: the chunk's buffer handed back once the compressor is done with it, for the next chunks.
 * `uncompressedCrc`, `compressedCrc`: the CRC-32 of the records and of `compressedData`, when the
 * compressor computed them (the worker does, off the agent's main thread); the writer computes those missing.
 */
type Compressed = { compression: string; compressedData: Uint8Array; records?: ArrayBuffer; uncompressedCrc?: number; compressedCrc?: number };

/** An IWritable that may also take several buffers in one call (one system call: FileHandleWritable). */
export interface GatherWritable extends IWritable {
  writev?(parts: readonly Uint8Array[]): Promise<void>;
}

export interface ChunkedMcapWriterOptions {
  writable: GatherWritable;
  /** A chunk is closed once its records reach this many bytes (uncompressed). */
  chunkSize: number;
  /**
   * Compresses a chunk's records (it may take over their whole buffer, and hand it back as `records`);
   * none: chunks are stored uncompressed. When
   * it answers with a promise (a worker thread), the writer goes on filling the next chunk meanwhile
   * and writes chunks in order as they come back, at most MAX_CHUNKS_IN_FLIGHT at once.
   */
  compressChunk?: (records: Uint8Array) => Compressed | Promise<Compressed>;
}

/** Closed chunks waiting for compression or their write before `addMessage` waits for the oldest. */
const MAX_CHUNKS_IN_FLIGHT = 3;
/** A chunk buffer's room past the chunk size, for the message that crosses it (a larger one grows the buffer). */
const CHUNK_HEADROOM = 256 * 1024;

export class ChunkedMcapWriter {
  private readonly records = new McapRecordBuilder();
  /** Header, Schema and Channel records not written yet: they go out with the next write (see flush). */
  private readonly pending = new McapRecordBuilder();
  private readonly chunk: ChunkRecords;
  private readonly schemas = new Map<number, Schema>();
  private readonly channels = new Map<number, Channel>();
  private readonly chunkIndexes: ChunkIndex[] = [];
  private readonly channelMessageCounts = new Map<number, bigint>();
  private messageCount = 0n;
  private messageStartTime: bigint | undefined;
  private messageEndTime = 0n;
  private dataSectionCrc = 0;
  /** Chunk writes, in order; each waits for its compression. */
  private writes: Promise<void> = Promise.resolve();
  private readonly inFlight: Array<Promise<void>> = [];

  constructor(private readonly options: ChunkedMcapWriterOptions) {
    this.chunk = new ChunkRecords(options.chunkSize + CHUNK_HEADROOM, MAX_CHUNKS_IN_FLIGHT + 1);
  }

  /**
   * The magic and the Header, Schema and Channel records are batched: they are written with the next
   * chunk, by `flush()` (the recorder flushes once its channels are registered, so even a recording
   * that crashes before its first chunk has them), or by `end()`. A Schema or Channel registered
   * while earlier chunks wait for compression is written before those chunks, which the
   * specification allows (a channel must only come before its messages).
   */
  async start(header: McapTypes.Header): Promise<void> {
    this.pending.writeMagic();
    this.pending.writeHeader(header);
  }

  async registerSchema(schema: Omit<Schema, "id">): Promise<number> {
    const record = { ...schema, id: this.schemas.size + 1 };
    this.schemas.set(record.id, record);
    this.pending.writeSchema(record);
    return record.id;
  }

  async registerChannel(channel: Omit<Channel, "id">): Promise<number> {
    const record = { ...channel, id: this.channels.size };
    this.channels.set(record.id, record);
    this.pending.writeChannel(record);
    return record.id;
  }

  /** Writes the batched Header, Schema and Channel records now (after the chunks queued before). */
  async flush(): Promise<void> {
    await this.enqueue(() => this.write(this.takePending()));
  }

  /**
   * Adds a message to the open chunk; answers a promise only when it must be waited for (the chunk
   * closed with MAX_CHUNKS_IN_FLIGHT already waiting), so the common case costs no promise.
   */
  addMessage(message: Message): void | Promise<void> {
    if (!this.channels.has(message.channelId)) throw new Error(`MCAP message on unregistered channel ${message.channelId}`);
    this.messageCount++;
    this.channelMessageCounts.set(message.channelId, (this.channelMessageCounts.get(message.channelId) ?? 0n) + 1n);
    if (this.messageStartTime === undefined || message.logTime < this.messageStartTime) this.messageStartTime = message.logTime;
    if (message.logTime > this.messageEndTime) this.messageEndTime = message.logTime;
    this.chunk.add(message);
    if (this.chunk.byteLength >= this.options.chunkSize) return this.finishChunk();
  }

  /** Closes the last chunk and writes Data End, the summary and the Footer. */
  async end(): Promise<void> {
    await this.finishChunk();
    await this.writes;
    this.inFlight.length = 0;
    const lead = this.takePending();
    this.fold(lead);
    this.records.writeDataEnd({ dataSectionCrc: this.dataSectionCrc });
    await this.options.writable.write(lead.byteLength ? concat([lead, this.records.buffer]) : this.records.buffer);
    this.records.reset();

    const summaryStart = this.position();
    const offsets: McapTypes.SummaryOffset[] = [];
    const group = (groupOpcode: number, write: () => bigint) => {
      const groupStart = summaryStart + BigInt(this.records.length);
      const groupLength = write();
      if (groupLength > 0n) offsets.push({ groupOpcode, groupStart, groupLength });
    };
    group(Opcode.SCHEMA, () => [...this.schemas.values()].reduce((n, s) => n + this.records.writeSchema(s), 0n));
    group(Opcode.CHANNEL, () => [...this.channels.values()].reduce((n, c) => n + this.records.writeChannel(c), 0n));
    group(Opcode.STATISTICS, () => this.records.writeStatistics({
      messageCount: this.messageCount, schemaCount: this.schemas.size, channelCount: this.channels.size, attachmentCount: 0, metadataCount: 0,
      chunkCount: this.chunkIndexes.length, messageStartTime: this.messageStartTime ?? 0n, messageEndTime: this.messageEndTime,
      channelMessageCounts: this.channelMessageCounts,
    }));
    group(Opcode.CHUNK_INDEX, () => this.chunkIndexes.reduce((n, c) => n + this.records.writeChunkIndex(c), 0n));
    const summaryOffsetStart = summaryStart + BigInt(this.records.length);
    for (const offset of offsets) this.records.writeSummaryOffset(offset);
    // The summary CRC covers the summary, the summary offsets and the Footer up to the CRC itself.
    const footerHead = new DataView(new ArrayBuffer(1 + 8 + 8 + 8));
    footerHead.setUint8(0, Opcode.FOOTER);
    footerHead.setBigUint64(1, 8n + 8n + 4n, true);
    footerHead.setBigUint64(9, summaryStart, true);
    footerHead.setBigUint64(17, summaryOffsetStart, true);
    const summaryCrc = crc32(new Uint8Array(footerHead.buffer), crc32(this.records.buffer));
    this.records.writeFooter({ summaryStart, summaryOffsetStart, summaryCrc });
    this.records.writeMagic();
    await this.options.writable.write(this.records.buffer);
    this.records.reset();
  }

  /** Runs `write` after every write queued before it (chunks still compressing included). */
  private async enqueue(write: () => Promise<void>): Promise<void> {
    const done = this.writes.then(write);
    done.catch(() => undefined);
    this.writes = done;
    await done;
  }

  private position(): bigint {
    return this.options.writable.position();
  }

  /** Writes data-section bytes (in one call when the writable takes several), folding them into the data section's CRC. */
  private async write(...parts: Uint8Array[]): Promise<void> {
    for (const part of parts) this.fold(part);
    await this.writeFolded(parts);
  }

  /** Writes data-section bytes already folded into the data section's CRC. */
  private async writeFolded(parts: readonly Uint8Array[]): Promise<void> {
    const nonEmpty = parts.filter((part) => part.byteLength > 0);
    const { writable } = this.options;
    if (nonEmpty.length > 1 && writable.writev) await writable.writev(nonEmpty);
    else for (const part of nonEmpty) await writable.write(part);
  }

  private fold(bytes: Uint8Array): void {
    this.dataSectionCrc = crc32(bytes, this.dataSectionCrc);
  }

  /** The batched Header, Schema and Channel records (empty when there are none), taken out of the batch. */
  private takePending(): Uint8Array {
    if (this.pending.length === 0) return new Uint8Array(0);
    const bytes = this.pending.buffer;
    this.pending.reset();
    return bytes;
  }

  /** Closes the open chunk: compression starts now, the write follows in order (see compressChunk). */
  private finishChunk(): void | Promise<void> {
    if (this.chunk.messageCount === 0) return;
    // The chunk's buffer goes to the compressor (or is written as it is) and comes back for reuse.
    const { records, indexes, messageStartTime, messageEndTime } = this.chunk.close();
    const uncompressedSize = BigInt(records.byteLength);
    const stored = !this.options.compressChunk;
    // Stored as they are: one CRC for the chunk's field and the data section's; compressed: the worker's.
    const storedCrc = stored ? crc32(records) : undefined;
    const compressed = Promise.resolve(
      this.options.compressChunk?.(records) ?? { compression: "", compressedData: records, records: undefined, uncompressedCrc: storedCrc, compressedCrc: storedCrc },
    );
    const written = this.writes.then(async () => {
      const { compression, compressedData, records: spent, uncompressedCrc = crc32(records), compressedCrc = crc32(compressedData) } = await compressed;
      await this.writeChunk({ messageStartTime, messageEndTime, uncompressedSize, uncompressedCrc, compression, records: compressedData }, indexes, compressedCrc);
      if (spent) this.chunk.recycle(spent);
      else if (stored) this.chunk.recycle(records.buffer as ArrayBuffer);
    });
    // A failure is thrown from the next addMessage that waits, or from end(); never left unhandled.
    written.catch(() => undefined);
    compressed.catch(() => undefined);
    this.writes = written;
    this.inFlight.push(written);
    if (this.inFlight.length > MAX_CHUNKS_IN_FLIGHT) return this.drain();
  }

  private async drain(): Promise<void> {
    while (this.inFlight.length > MAX_CHUNKS_IN_FLIGHT) await this.inFlight.shift();
  }

  /** Any batched records, the Chunk record and its Message Indexes, in one write. */
  private async writeChunk(chunk: McapTypes.Chunk, indexes: McapTypes.MessageIndex[], recordsCrc: number): Promise<void> {
    const lead = this.takePending();
    const chunkStartOffset = this.position() + BigInt(lead.byteLength);
    // The Chunk record's fields, then its records as they came from the compressor: McapRecordBuilder's
    // writeChunk would copy them into its buffer and its `buffer` getter copy them out again.
    const head = chunkRecordHead(chunk);
    const chunkLength = BigInt(head.byteLength + chunk.records.byteLength);
    const messageIndexStart = chunkStartOffset + chunkLength;
    const messageIndexOffsets = new Map<number, bigint>();
    let messageIndexLength = 0n;
    for (const index of indexes) {
      messageIndexOffsets.set(index.channelId, messageIndexStart + messageIndexLength);
      messageIndexLength += this.records.writeMessageIndex(index);
    }
    const indexRecords = this.records.buffer;
    this.records.reset();
    this.fold(lead);
    this.fold(head);
    this.dataSectionCrc = crc32Combine(this.dataSectionCrc, recordsCrc, chunk.records.byteLength);
    this.fold(indexRecords);
    await this.writeFolded([lead, head, chunk.records, indexRecords]);
    this.chunkIndexes.push({
      messageStartTime: chunk.messageStartTime, messageEndTime: chunk.messageEndTime, chunkStartOffset, chunkLength, messageIndexOffsets, messageIndexLength,
      compression: chunk.compression, compressedSize: BigInt(chunk.records.byteLength), uncompressedSize: chunk.uncompressedSize,
    });
  }
}

/**
 * A Chunk record up to its records (https://mcap.dev/spec#chunk-op0x06): opcode, record length,
 * message start and end time, uncompressed size and CRC, compression, and the records' length.
 */
function chunkRecordHead(chunk: McapTypes.Chunk): Uint8Array {
  const compression = new TextEncoder().encode(chunk.compression);
  const fieldsBytes = 8 + 8 + 8 + 4 + 4 + compression.byteLength + 8;
  const head = new Uint8Array(1 + 8 + fieldsBytes);
  const view = new DataView(head.buffer);
  let at = 0;
  view.setUint8(at, Opcode.CHUNK);
  view.setBigUint64((at += 1), BigInt(fieldsBytes + chunk.records.byteLength), true);
  view.setBigUint64((at += 8), chunk.messageStartTime, true);
  view.setBigUint64((at += 8), chunk.messageEndTime, true);
  view.setBigUint64((at += 8), chunk.uncompressedSize, true);
  view.setUint32((at += 8), chunk.uncompressedCrc, true);
  view.setUint32((at += 4), compression.byteLength, true);
  head.set(compression, (at += 4));
  view.setBigUint64((at += compression.byteLength), BigInt(chunk.records.byteLength), true);
  return head;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
