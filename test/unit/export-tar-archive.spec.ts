/**
 * The exports' tar writer: byte for byte what tar-stream's `pack` wrote for the same members (the
 * archives users already unpack), through one reused buffer, into both stores' `putChunks`.
 */
import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import tar from "tar-stream";
import { tarChunks, writeTarArchive, type ArchiveEntry } from "../../coordinator/exports/tar-archive.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";

/** The writer the exports used before: tar-stream's pack, each member streamed in. */
async function packWithTarStream(entries: ArchiveEntry[], mtime: Date): Promise<Buffer> {
  const pack = tar.pack();
  const out: Buffer[] = [];
  pack.on("data", (chunk: unknown) => out.push(Buffer.from(chunk as Uint8Array)));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on("end", resolve);
    pack.on("error", reject);
  });
  for (const entry of entries) {
    const bytes = "data" in entry ? Buffer.from(entry.data) : "path" in entry ? readFileSync(entry.path) : "parts" in entry ? Buffer.concat(entry.parts.map((p) => readFileSync(p))) : await Readable.prototype.toArray.call(await entry.open()).then((c: Buffer[]) => Buffer.concat(c));
    await new Promise<void>((resolve, reject) => pack.entry({ name: entry.name, size: bytes.length, mode: 0o644, mtime }, bytes, (e) => (e ? reject(e) : resolve())));
  }
  pack.finalize();
  await ended;
  return Buffer.concat(out);
}

/** Every chunk copied before the next is asked for, as a store must. */
async function collect(chunks: AsyncIterable<Uint8Array>): Promise<{ bytes: Buffer; buffers: Set<ArrayBufferLike> }> {
  const out: Buffer[] = [];
  const buffers = new Set<ArrayBufferLike>();
  for await (const chunk of chunks) {
    buffers.add(chunk.buffer);
    out.push(Buffer.from(chunk));
  }
  return { bytes: Buffer.concat(out), buffers };
}

describe("export tar archive", () => {
  let dir: string;
  let entries: ArchiveEntry[];
  const mtime = new Date("2026-11-28T12:34:56.789Z");

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "assay-tar-"));
    // Seeded bytes: a member over two buffers long and ending mid-block, an empty one, a small one.
    let seed = 7;
    const big = Buffer.alloc(2 * 1024 * 1024 + 1234 + 3);
    for (let i = 0; i < big.length; i++) big[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    writeFileSync(join(dir, "big.bin"), big);
    writeFileSync(join(dir, "empty.bin"), "");
    writeFileSync(join(dir, "small.json"), '{"a":1}');
    const streamed = big.subarray(1000, 1000 + 700_001);
    entries = [
      { name: "run/manifest.json", data: new TextEncoder().encode('{"episodes":2}\n') },
      { name: "run/episodes/000000/big.bin", path: join(dir, "big.bin") },
      { name: "run/episodes/000000/empty.bin", path: join(dir, "empty.bin") },
      { name: `run/${"d".repeat(90)}/${"f".repeat(60)}.json`, path: join(dir, "small.json") }, // split into prefix and name
      { name: `run/${"n".repeat(120)}.json`, path: join(dir, "small.json") }, // no split fits: PAX
      { name: "run/caméra/épisode.json", path: join(dir, "small.json") }, // not ASCII: PAX
      { name: "run/stored.mp4", bytes: streamed.length, open: async () => Readable.from([streamed.subarray(0, 65536), streamed.subarray(65536)]) },
      { name: "run/SHA256SUMS", data: new Uint8Array(0) },
    ];
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("writes the same bytes tar-stream's pack wrote, through one reused 1 MiB buffer", async () => {
    const expected = await packWithTarStream(entries, mtime);
    const { bytes, buffers } = await collect(tarChunks(entries, mtime));
    assert.equal(bytes.length, expected.length);
    assert.ok(bytes.equals(expected), "the archive differs from tar-stream's");
    assert.equal(buffers.size, 1, "every chunk is a view of the same buffer");
  });

  it("stores the archive whole on disk with the SHA-256 of its bytes", async () => {
    const store = new DiskStore(join(dir, "store"));
    const archive = await writeTarArchive(store, ".exports/x/a.tar", entries);
    const stored = Buffer.concat(await (await store.get(".exports/x/a.tar")).body.toArray());
    assert.equal(archive.bytes, stored.length);
    assert.equal(archive.sha256, createHash("sha256").update(stored).digest("hex"));
    assert.equal((await store.head(".exports/x/a.tar")).sha256, archive.sha256);
  });

  it("writes a member given as parts as their concatenation, deleting each part once read when asked", async () => {
    // The big file cut at a point inside the archive's buffer, and a part of its own that fills more than one.
    const big = readFileSync(join(dir, "big.bin"));
    const cuts = [0, 300_001, 1_500_000, big.length];
    const parts = (tag: string) => cuts.slice(1).map((end, i) => {
      const path = join(dir, `${tag}.part-${i}`);
      writeFileSync(path, big.subarray(cuts[i], end));
      return path;
    });
    const kept = parts("kept");
    const deleted = parts("deleted");
    const asParts: ArchiveEntry[] = [
      entries[0],
      { name: "run/episodes/000000/big.bin", parts: kept, deleteParts: false },
      { name: "run/episodes/000001/big.bin", parts: deleted, deleteParts: true },
      { name: "run/episodes/000002/empty.bin", parts: [join(dir, "empty.bin")], deleteParts: false },
    ];
    const asFiles: ArchiveEntry[] = [
      entries[0],
      { name: "run/episodes/000000/big.bin", path: join(dir, "big.bin") },
      { name: "run/episodes/000001/big.bin", path: join(dir, "big.bin") },
      { name: "run/episodes/000002/empty.bin", path: join(dir, "empty.bin") },
    ];
    const { bytes } = await collect(tarChunks(asParts, mtime));
    assert.ok(bytes.equals(await packWithTarStream(asFiles, mtime)), "the parts' member differs from the whole file's");
    assert.deepEqual(kept.map((p) => existsSync(p)), [true, true, true]);
    assert.deepEqual(deleted.map((p) => existsSync(p)), [false, false, false]);
  });

  it("fails the archive and leaves no object when a member is shorter than it said", async () => {
    const store = new DiskStore(join(dir, "store"));
    const short: ArchiveEntry[] = [{ name: "run/short.bin", bytes: 10, open: async () => Readable.from([Buffer.from("12345")]) }];
    await assert.rejects(writeTarArchive(store, ".exports/y/a.tar", short), /run\/short\.bin had 5 bytes where 10 were expected/);
    assert.deepEqual(await store.list(".exports/y/"), []);
  });
});
