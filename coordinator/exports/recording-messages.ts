/**
 * The messages of chosen channels of an episode recording, in log-time order, read chunk by chunk in
 * file order: each chunk is read into one reused buffer and decompressed once, and a message's data
 * is a view into its decompressed chunk, not a copy.
 *
 * @mcap/core's `readMessages` yields the same messages in the same order (log time, ties by position
 * in the file), but copies every message's data and every chunk's compressed bytes into buffers of
 * their own and reads each chunk's message indexes: for a README episode about 2,400 small buffers and
 * 9 MB of copies, which start the garbage collector's major collections every couple of episodes of an
 * export (a third of an RLDS export's CPU, profiled). The recording's chunks come from one writer in
 * time order, so file order is log-time order across chunks; within a chunk, messages out of log-time
 * order are put in order as @mcap/core does. A recording whose chunks overlap in time is read through
 * @mcap/core instead (`ordered` is false).
 *
 * Given a ChunkDecompressor (chunk-decompressor.ts), chunks are decompressed into its reused buffers;
 * the messages then stay valid until its `recycle()`. Without one, each chunk gets a buffer of its own.
 *
 * Chunk CRCs are not checked: a stored recording's SHA-256 was verified when the cell uploaded it,
 * which covers every byte the CRCs do (as for the exports' other readers).
 */
import type { FileHandle } from "node:fs/promises";
import { Opcode, type McapIndexedReader } from "@mcap/core";
import { loadMcapCompression, MAX_UNCOMPRESSED_CHUNK_BYTES } from "../../protocol/recording/mcap-compression.js";
import type { ChunkDecompressor } from "./chunk-decompressor.js";

export interface RecordingMessage {
  channelId: number;
  logTime: bigint;
  /** A view into the decompressed chunk. */
  data: Uint8Array;
}

type ChunkIndex = McapIndexedReader["chunkIndexes"][number];

export class RecordingMessages {
  /** Chunks in file order. */
  private readonly chunks: readonly ChunkIndex[];
  /** The compressed chunk record, read into this buffer (grown as needed, reused). */
  private scratch = Buffer.alloc(0);
  /** The last chunk decompressed, by its offset: a shape read and the steps that follow share it. */
  private last: { offset: bigint; records: Uint8Array } | undefined;

  constructor(private readonly handle: FileHandle, reader: McapIndexedReader, private readonly decompressor?: ChunkDecompressor) {
    this.chunks = [...reader.chunkIndexes].sort((a, b) => (a.chunkStartOffset < b.chunkStartOffset ? -1 : a.chunkStartOffset > b.chunkStartOffset ? 1 : 0));
  }

  /** True when the chunks, in file order, do not overlap in time, so that file order is log-time order. */
  get ordered(): boolean {
    for (let i = 1; i < this.chunks.length; i++) if (this.chunks[i].messageStartTime < this.chunks[i - 1].messageEndTime) return false;
    return true;
  }

  /** The messages of `channels` in log-time order; only when `ordered`. */
  async *read(channels: ReadonlySet<number>): AsyncGenerator<RecordingMessage> {
    if (!this.ordered) throw new Error("RecordingMessages.read: the recording's chunks overlap in time; read it through @mcap/core");
    for (const chunk of this.chunks) {
      // A chunk whose index lists none of the channels holds none of their messages (a writer without
      // message indexes lists none at all: then every chunk is read).
      const indexed = chunk.messageIndexOffsets;
      if (indexed.size > 0 && ![...channels].some((id) => indexed.has(id))) continue;
      const records = await this.records(chunk);
      const messages: RecordingMessage[] = [];
      let sorted = true;
      const view = new DataView(records.buffer, records.byteOffset, records.byteLength);
      for (let at = 0; at + 9 <= records.byteLength; ) {
        const opcode = records[at];
        const length = Number(view.getBigUint64(at + 1, true));
        const body = at + 9;
        if (body + length > records.byteLength) throw new Error(`MCAP chunk at ${chunk.chunkStartOffset}: a record of ${length} bytes runs past the chunk's ${records.byteLength}`);
        if (opcode === Opcode.MESSAGE && length >= 22) {
          const channelId = view.getUint16(body, true);
          if (channels.has(channelId)) {
            const logTime = view.getBigUint64(body + 6, true);
            if (messages.length > 0 && logTime < messages[messages.length - 1].logTime) sorted = false;
            messages.push({ channelId, logTime, data: records.subarray(body + 22, body + length) });
          }
        }
        at = body + length;
      }
      // Stable: equal log times keep their order in the file, as @mcap/core breaks ties.
      if (!sorted) messages.sort((a, b) => (a.logTime < b.logTime ? -1 : a.logTime > b.logTime ? 1 : 0));
      yield* messages;
    }
  }

  /** The chunk's records, decompressed. */
  private async records(chunk: ChunkIndex): Promise<Uint8Array> {
    if (this.last?.offset === chunk.chunkStartOffset) return this.last.records;
    const size = Number(chunk.chunkLength);
    if (this.scratch.byteLength < size) this.scratch = Buffer.allocUnsafe(size);
    const record = this.scratch.subarray(0, size);
    for (let done = 0; done < size; ) {
      const { bytesRead } = await this.handle.read(record, done, size - done, Number(chunk.chunkStartOffset) + done);
      if (bytesRead === 0) throw new Error(`MCAP ended inside the chunk at ${chunk.chunkStartOffset} (${size} bytes)`);
      done += bytesRead;
    }
    if (record[0] !== Opcode.CHUNK) throw new Error(`MCAP chunk index points at ${chunk.chunkStartOffset}, which holds record 0x${record[0].toString(16)}, not a chunk`);
    const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
    // opcode, record length, message start and end time, uncompressed size, uncompressed CRC
    let at = 1 + 8 + 8 + 8;
    const uncompressedSize = view.getBigUint64(at, true);
    at += 8 + 4;
    const compressionLength = view.getUint32(at, true);
    at += 4;
    const compression = record.toString("utf8", at, at + compressionLength);
    at += compressionLength;
    const recordsLength = Number(view.getBigUint64(at, true));
    at += 8;
    if (at + recordsLength > size) throw new Error(`MCAP chunk at ${chunk.chunkStartOffset}: its records (${recordsLength} bytes) run past the chunk record (${size} bytes)`);
    const stored = record.subarray(at, at + recordsLength);
    let records: Uint8Array;
    if (this.decompressor) {
      records = this.decompressor.records(compression, stored, uncompressedSize, `MCAP chunk at ${chunk.chunkStartOffset}`);
    } else if (compression === "") {
      // The scratch buffer is reused for the next chunk: messages keep views into a copy of their own.
      records = Uint8Array.prototype.slice.call(stored);
    } else {
      if (uncompressedSize > BigInt(MAX_UNCOMPRESSED_CHUNK_BYTES)) {
        throw new Error(`MCAP chunk claims ${uncompressedSize} bytes uncompressed, over the ${MAX_UNCOMPRESSED_CHUNK_BYTES}-byte limit of a recorded chunk; the recording is damaged or was not written by an Assay cell`);
      }
      const decompress = (await loadMcapCompression()).decompressHandlers[compression];
      if (!decompress) throw new Error(`MCAP chunk at ${chunk.chunkStartOffset} is compressed with ${JSON.stringify(compression)}, which an Assay recording never is`);
      records = decompress(stored, uncompressedSize);
    }
    this.last = { offset: chunk.chunkStartOffset, records };
    return records;
  }
}
