/**
 * The agent's MCAP writer with many chunks compressed on the worker thread while later ones fill:
 * every message comes back in order through @mcap/core's indexed reader (indexes, summary CRC) and
 * through the independent reader (chunk and data-section CRCs).
 */
import { strict as assert } from "node:assert";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McapIndexedReader } from "@mcap/core";
import { startChunkCompressor } from "../../cell-agent/recording/chunk-compressor.js";
import { ChunkedMcapWriter } from "../../cell-agent/recording/chunked-mcap-writer.js";
import { FileHandleReadable, FileHandleWritable } from "../../cell-agent/recording/file-writable.js";
import { loadMcapCompression } from "../../protocol/recording/mcap-compression.js";
import { readMcapFromSpec } from "../support/mcap-spec-reader.js";

describe("chunked MCAP writer", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "chunked-mcap-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("writes 40 chunks compressed on the worker in order, indexed and with correct CRCs", async () => {
    const path = join(dir, "many.mcap");
    const handle = await open(path, "w");
    const compressor = startChunkCompressor();
    const writer = new ChunkedMcapWriter({ writable: new FileHandleWritable(handle), chunkSize: 4096, compressChunk: compressor.compress });
    await writer.start({ profile: "", library: "test" });
    const schemaId = await writer.registerSchema({ name: "s", encoding: "jsonschema", data: new TextEncoder().encode("{}") });
    const channels = [await writer.registerChannel({ topic: "/a", schemaId, messageEncoding: "json", metadata: new Map() }),
      await writer.registerChannel({ topic: "/b", schemaId, messageEncoding: "json", metadata: new Map() })];
    const sent: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const body = JSON.stringify({ i, pad: "x".repeat(i % 97) });
      sent.push(body);
      await writer.addMessage({ channelId: channels[i % 2]!, sequence: i, logTime: BigInt(i) * 1000n, publishTime: BigInt(i) * 1000n, data: new TextEncoder().encode(body) });
    }
    await writer.end();
    await compressor.close();
    await handle.close();

    const read = await open(path, "r");
    try {
      const reader = await McapIndexedReader.Initialize({ readable: new FileHandleReadable(read), decompressHandlers: (await loadMcapCompression()).decompressHandlers });
      assert.ok(reader.chunkIndexes.length >= 40, `${reader.chunkIndexes.length} chunks`);
      assert.ok(reader.chunkIndexes.every((c) => c.compression === "zstd" && c.compressedSize < c.uncompressedSize));
      assert.equal(reader.statistics!.messageCount, 2000n);
      const got: string[] = [];
      for await (const m of reader.readMessages()) got.push(new TextDecoder().decode(m.data));
      assert.deepEqual(got, sent);
      const odd: string[] = [];
      for await (const m of reader.readMessages({ topics: ["/b"] })) odd.push(new TextDecoder().decode(m.data));
      assert.deepEqual(odd, sent.filter((_, i) => i % 2 === 1));
    } finally {
      await read.close();
    }
    const file = readMcapFromSpec(readFileSync(path));
    assert.deepEqual(file.messages.map((m) => new TextDecoder().decode(m.data)), sent);
    assert.equal(file.dataSectionCrc!.stated, file.dataSectionCrc!.computed);
  });

  for (const compressed of [true, false]) {
    it(`keeps messages larger than a chunk buffer whole, ${compressed ? "compressed on the worker" : "stored"}`, async () => {
      const path = join(dir, "large.mcap");
      const handle = await open(path, "w");
      const compressor = compressed ? startChunkCompressor() : undefined;
      // Chunk buffers hold the chunk size and 256 KiB: a 700 KiB message needs a larger one.
      const writer = new ChunkedMcapWriter({ writable: new FileHandleWritable(handle), chunkSize: 64 * 1024, compressChunk: compressor?.compress });
      await writer.start({ profile: "", library: "test" });
      const schemaId = await writer.registerSchema({ name: "s", encoding: "", data: new Uint8Array(0) });
      const channelId = await writer.registerChannel({ topic: "/blob", schemaId, messageEncoding: "bytes", metadata: new Map() });
      const sizes = [1000, 700 * 1024, 30, 900 * 1024, 70 * 1024, 5];
      const sent = sizes.map((size, i) => new Uint8Array(size).map((_, j) => (i * 31 + j * 7) & 0xff));
      for (const [i, data] of sent.entries()) await writer.addMessage({ channelId, sequence: i, logTime: BigInt(i), publishTime: BigInt(i), data });
      await writer.end();
      await compressor?.close();
      await handle.close();

      const file = readMcapFromSpec(readFileSync(path));
      assert.deepEqual(file.messages.map((m) => Buffer.from(m.data).toString("hex")), sent.map((d) => Buffer.from(d).toString("hex")));
      assert.equal(file.dataSectionCrc!.stated, file.dataSectionCrc!.computed);
      const read = await open(path, "r");
      try {
        const reader = await McapIndexedReader.Initialize({ readable: new FileHandleReadable(read), decompressHandlers: (await loadMcapCompression()).decompressHandlers });
        const got: number[] = [];
        for await (const m of reader.readMessages()) got.push(m.data.byteLength);
        assert.deepEqual(got, sizes);
      } finally {
        await read.close();
      }
    });
  }
});
