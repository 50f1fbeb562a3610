/**
 * The exports' chunk-by-chunk message reader against @mcap/core's own `readMessages`: the same
 * messages of the chosen channels in the same order (log time, ties by position in the file), for
 * zstd and uncompressed chunks, with messages out of log-time order inside a chunk; and a recording
 * whose chunks overlap in time is read through @mcap/core, in log-time order. The same through an
 * export's ChunkDecompressor (reused buffers), which refuses a damaged or oversized chunk.
 */
import { strict as assert } from "node:assert";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McapIndexedReader, McapWriter, TempBuffer } from "@mcap/core";
import { ChunkDecompressor } from "../../coordinator/exports/chunk-decompressor.js";
import { EpisodeRecording, fileReadable } from "../../coordinator/exports/episode-steps.js";
import { RecordingMessages } from "../../coordinator/exports/recording-messages.js";
import { loadMcapCompression, MAX_UNCOMPRESSED_CHUNK_BYTES } from "../../protocol/recording/mcap-compression.js";
import { openRecordingReader } from "../../protocol/recording/recording-reader.js";
import { RecordingTopic } from "../../protocol/recording/recording-layout.js";

const JOINTS = ["a", "b"];

/** A message record here: opcode, length, channel, sequence, two times and a 60-byte body. */
const MESSAGE_RECORD_BYTES = 1 + 8 + 2 + 4 + 8 + 8 + 60;

/**
 * Writes joint states at `timesNs` (in that order) and returns the file. A chunk closes once it holds
 * `chunkSize` bytes: with 3.9 records' worth, the first chunk (which also holds the schema and
 * channel records) takes 3 messages, every later one 4.
 */
async function writeRecording(dir: string, name: string, timesNs: bigint[], options: { zstd: boolean; eventsOnlyFrom?: number }): Promise<string> {
  const buffer = new TempBuffer();
  const { compressChunk } = await loadMcapCompression();
  const writer = new McapWriter({ writable: buffer, chunkSize: Math.round(MESSAGE_RECORD_BYTES * 3.9), ...(options.zstd ? { compressChunk } : {}) });
  await writer.start({ profile: "", library: "test" });
  const schema = await writer.registerSchema({ name: "assay.JointState", encoding: "jsonschema", data: new TextEncoder().encode("{}") });
  const states = await writer.registerChannel({ topic: RecordingTopic.jointStates, schemaId: schema, messageEncoding: "json", metadata: new Map() });
  const events = await writer.registerChannel({ topic: RecordingTopic.events, schemaId: schema, messageEncoding: "json", metadata: new Map() });
  let sequence = 0;
  for (const [i, t] of timesNs.entries()) {
    // From message `eventsOnlyFrom` on, four messages go to /events instead (a chunk of its own).
    const channelId = options.eventsOnlyFrom !== undefined && i >= options.eventsOnlyFrom && i < options.eventsOnlyFrom + 4 ? events : states;
    const body = JSON.stringify({ name: JOINTS, position: [Number(t) / 1e9, sequence] }).padEnd(60, " ").slice(0, 60);
    await writer.addMessage({ channelId, sequence: sequence++, logTime: t, publishTime: t, data: new TextEncoder().encode(body) });
  }
  await writer.end();
  const path = join(dir, name);
  writeFileSync(path, buffer.get());
  return path;
}

async function both(path: string, topic: string, decompressor?: ChunkDecompressor) {
  const handle = await open(path, "r");
  try {
    const reader = await openRecordingReader(fileReadable(handle));
    const channels = new Set([...reader.channelsById.values()].filter((c) => c.topic === topic).map((c) => c.id));
    const core: Array<[number, bigint, string]> = [];
    for await (const m of reader.readMessages({ topics: [topic], validateCrcs: false })) core.push([m.channelId, m.logTime, Buffer.from(m.data).toString()]);
    const messages = new RecordingMessages(handle, reader, decompressor);
    const ours: Array<[number, bigint, string]> = [];
    if (messages.ordered) for await (const m of messages.read(channels)) ours.push([m.channelId, m.logTime, Buffer.from(m.data).toString()]);
    return { core, ours, ordered: messages.ordered, chunks: reader.chunkIndexes.length };
  } finally {
    await handle.close();
  }
}

describe("recording messages read chunk by chunk", () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), "assay-recording-messages-"))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const zstd of [true, false]) {
    it(`yields what @mcap/core yields, in its order, with messages out of order inside a chunk (${zstd ? "zstd" : "uncompressed"} chunks)`, async () => {
      // Chunks [3, 1, 2] [5, 4, 6, 6] [8, 7, 9, 10]: out of order and tied inside chunks, in order across them.
      const times = [3, 1, 2, 5, 4, 6, 6, 8, 7, 9, 10].map((s) => BigInt(s) * 1_000_000_000n);
      const path = await writeRecording(dir, `inside-${zstd}.mcap`, times, { zstd });
      const { core, ours, ordered, chunks } = await both(path, RecordingTopic.jointStates);
      assert.equal(chunks, 3, "the recording has the three chunks the test is about");
      assert.equal(ordered, true);
      assert.equal(core.length, times.length);
      assert.deepEqual(ours, core);
      // Through a ChunkDecompressor, twice: the second read decompresses into the buffers the first used.
      const decompressor = await ChunkDecompressor.create();
      for (let round = 0; round < 2; round++) {
        assert.deepEqual((await both(path, RecordingTopic.jointStates, decompressor)).ours, core, `round ${round} through the decompressor`);
        decompressor.recycle();
      }
    });
  }

  it("a ChunkDecompressor refuses a chunk over the size bound, a damaged frame and an unknown compression, and reuses its buffers after recycle()", async () => {
    const decompressor = await ChunkDecompressor.create();
    const { compressChunk } = await loadMcapCompression();
    const plain = new TextEncoder().encode("joint states ".repeat(200));
    const { compressedData } = compressChunk(plain);
    const first = decompressor.records("zstd", compressedData, BigInt(plain.byteLength), "chunk 1");
    assert.deepEqual(Buffer.from(first), Buffer.from(plain));
    decompressor.recycle();
    const again = decompressor.records("zstd", compressedData, BigInt(plain.byteLength), "chunk 1");
    assert.equal(again.buffer, first.buffer, "after recycle() the same buffer is written again");
    assert.throws(() => decompressor.records("zstd", compressedData, BigInt(MAX_UNCOMPRESSED_CHUNK_BYTES + 1), "chunk 2"), /over the 67108864-byte limit/);
    assert.throws(() => decompressor.records("zstd", compressedData, BigInt(plain.byteLength - 1), "chunk 3"), /chunk 3 does not decompress to the 2599 bytes its header states/);
    const damaged = Uint8Array.from(compressedData);
    damaged.fill(0xff, 4, 12);
    assert.throws(() => decompressor.records("zstd", damaged, BigInt(plain.byteLength), "chunk 4"), /chunk 4 does not decompress/);
    assert.throws(() => decompressor.records("lz4", compressedData, BigInt(plain.byteLength), "chunk 5"), /chunk 5 is compressed with "lz4"/);
  });

  it("skips a chunk that holds none of the chosen channels and still yields what @mcap/core yields", async () => {
    // Chunks [1, 2, 3] [4..7 on /events] [8, 9, 10, 11] [12]
    const times = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((s) => BigInt(s) * 1_000_000_000n);
    const path = await writeRecording(dir, "events-chunk.mcap", times, { zstd: true, eventsOnlyFrom: 3 });
    const handle = await open(path, "r");
    try {
      const reader = await openRecordingReader(fileReadable(handle));
      const statesId = [...reader.channelsById.values()].find((c) => c.topic === RecordingTopic.jointStates)!.id;
      assert.ok(reader.chunkIndexes.some((c) => c.messageIndexOffsets.size > 0 && !c.messageIndexOffsets.has(statesId)), "a chunk without joint states");
    } finally {
      await handle.close();
    }
    for (const topic of [RecordingTopic.jointStates, RecordingTopic.events]) {
      const { core, ours } = await both(path, topic);
      assert.equal(core.length, topic === RecordingTopic.events ? 4 : 8);
      assert.deepEqual(ours, core);
    }
  });

  it("a recording whose chunks overlap in time is read in log-time order through @mcap/core", async () => {
    const times = [1, 2, 3, 4, 2.5, 6, 7, 8].map((s) => BigInt(s * 1e9));
    const path = await writeRecording(dir, "overlap.mcap", times, { zstd: true });
    const { ordered } = await both(path, RecordingTopic.jointStates);
    assert.equal(ordered, false, "chunks that overlap in time are not read chunk by chunk");
    const recording = await EpisodeRecording.openForSteps(path);
    try {
      assert.deepEqual(recording.header.jointNames, JOINTS);
      const stepTimes: bigint[] = [];
      for await (const step of recording.steps()) stepTimes.push(step.tNs);
      assert.deepEqual(stepTimes, [...times].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    } finally {
      await recording.close();
    }
  });
});
