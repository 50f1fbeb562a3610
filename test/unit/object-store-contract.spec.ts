/**
 * One contract, run against both stores: DiskStore in a temp folder and S3Store against s3rver in
 * this process. Each test gets a fresh store; `reopen()` builds a second instance over the same
 * state, as a restarted coordinator would.
 */
import { strict as assert } from "node:assert";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { DiskStore } from "../../coordinator/storage/disk-store.js";
import { ObjectStoreError, type ObjectStore, type ObjectStoreErrorReason } from "../../coordinator/storage/object-store.js";
import { S3_MIN_PART_BYTES, S3Store } from "../../coordinator/storage/s3-store.js";
import { startS3Server, type S3Server } from "../support/s3-server.js";

interface Harness {
  store: ObjectStore;
  reopen(): ObjectStore;
}

async function text(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function rejectsWith(promise: Promise<unknown>, reason: ObjectStoreErrorReason): Promise<ObjectStoreError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ObjectStoreError, `expected ObjectStoreError(${reason}), got ${String(error)}`);
    assert.equal(error.reason, reason, error.message);
    return error;
  }
  assert.fail(`expected ObjectStoreError(${reason}), it resolved`);
}

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

function contract(name: string, harness: () => Promise<Harness>, cleanup: () => Promise<void>) {
  describe(`object store contract: ${name}`, function () {
    let h: Harness;
    let store: ObjectStore;
    beforeEach(async () => {
      h = await harness();
      store = h.store;
    });
    afterEach(cleanup);

    it("puts bytes and a stream, gets them back with their size and content type", async () => {
      await store.put("runs/r1/e1/report.json", Buffer.from('{"ok":true}'), { contentType: "application/json" });
      await store.put("runs/r1/e1/video.mp4", Readable.from([Buffer.from("abc"), Buffer.from("def")]));
      const json = await store.get("runs/r1/e1/report.json");
      assert.equal((await text(json.body)).toString(), '{"ok":true}');
      assert.equal(json.bytes, 11);
      assert.equal(json.totalBytes, 11);
      assert.equal(json.contentType, "application/json");
      assert.equal((await text((await store.get("runs/r1/e1/video.mp4")).body)).toString(), "abcdef");
    });

    it("answers a put, of bytes or of a stream, with the size and SHA-256 of what it wrote", async () => {
      const bytes = await store.put("p/bytes.bin", Buffer.from("hello"));
      assert.deepEqual([bytes.bytes, bytes.sha256], [5, sha(Buffer.from("hello"))]);
      const streamed = await store.put("p/stream.tar", Readable.from([Buffer.from("abc"), Buffer.from("def")]));
      assert.deepEqual([streamed.bytes, streamed.sha256], [6, sha(Buffer.from("abcdef"))]);
    });

    it("stores chunks from a producer that overwrites its one buffer once the next chunk is asked for", async () => {
      async function* reused(): AsyncGenerator<Uint8Array> {
        const buffer = Buffer.alloc(4);
        for (const part of ["abcd", "efgh", "ij"]) {
          buffer.write(part);
          yield buffer.subarray(0, part.length);
        }
        buffer.fill("z");
      }
      const info = await store.putChunks("p/chunks.tar", reused(), { contentType: "application/x-tar" });
      assert.deepEqual([info.bytes, info.sha256], [10, sha(Buffer.from("abcdefghij"))]);
      const got = await store.get("p/chunks.tar");
      assert.equal((await text(got.body)).toString(), "abcdefghij");
      assert.equal(got.contentType, "application/x-tar");
    });

    it("replaces an object on a second put", async () => {
      await store.put("a/b", Buffer.from("one"));
      await store.put("a/b", Buffer.from("two!"));
      assert.equal((await text((await store.get("a/b")).body)).toString(), "two!");
      assert.equal((await store.head("a/b")).bytes, 4);
    });

    it("serves inclusive byte ranges, open-ended ones, and refuses a range past the end", async () => {
      await store.put("r/data.bin", Buffer.from("0123456789"));
      const middle = await store.get("r/data.bin", { start: 2, end: 5 });
      assert.equal((await text(middle.body)).toString(), "2345");
      assert.deepEqual([middle.bytes, middle.totalBytes], [4, 10]);
      const tail = await store.get("r/data.bin", { start: 7 });
      assert.equal((await text(tail.body)).toString(), "789");
      assert.deepEqual([tail.bytes, tail.totalBytes], [3, 10]);
      await rejectsWith(store.get("r/data.bin", { start: 10 }), "range_not_satisfiable");
    });

    it("heads an object: size, etag that changes with the content, sha256 of put bytes", async () => {
      const bytes = Buffer.from("hello world");
      await store.put("h/x.txt", bytes, { contentType: "text/plain" });
      const first = await store.head("h/x.txt");
      assert.equal(first.bytes, 11);
      assert.equal(first.sha256, sha(bytes));
      assert.equal(first.contentType, "text/plain");
      await store.put("h/x.txt", Buffer.from("hello there"));
      assert.notEqual((await store.head("h/x.txt")).etag, first.etag);
    });

    it("throws not_found for a missing object on get and head; delete of a missing one is fine", async () => {
      await rejectsWith(store.get("nope/missing.mcap"), "not_found");
      await rejectsWith(store.head("nope/missing.mcap"), "not_found");
      await store.delete("nope/missing.mcap");
    });

    it("deletes one object", async () => {
      await store.put("d/one", Buffer.from("1"));
      await store.put("d/two", Buffer.from("2"));
      await store.delete("d/one");
      await rejectsWith(store.head("d/one"), "not_found");
      assert.deepEqual((await store.list("d/")).map((e) => e.key), ["d/two"]);
    });

    it("lists by plain prefix, sorted, with sizes", async () => {
      await store.put("runs/r1/e2/v.mp4", Buffer.from("22"));
      await store.put("runs/r1/e1/v.mp4", Buffer.from("1"));
      await store.put("runs/r10/e1/v.mp4", Buffer.from("333"));
      await store.put("exports/x.tar", Buffer.from("4444"));
      assert.deepEqual(await store.list("runs/r1/"), [
        { key: "runs/r1/e1/v.mp4", bytes: 1 },
        { key: "runs/r1/e2/v.mp4", bytes: 2 },
      ]);
      assert.deepEqual((await store.list("runs/r1")).map((e) => e.key), ["runs/r1/e1/v.mp4", "runs/r1/e2/v.mp4", "runs/r10/e1/v.mp4"]);
      assert.deepEqual(await store.list("nothing/"), []);
    });

    it("deletes a folder prefix and nothing beside it; refuses a prefix without a trailing /", async () => {
      await store.put("runs/r1/e1/a", Buffer.from("a"));
      await store.put("runs/r1/e2/b", Buffer.from("b"));
      await store.put("runs/r10/e1/c", Buffer.from("c"));
      assert.equal(await store.deletePrefix("runs/r1/"), 2);
      assert.deepEqual((await store.list("runs/")).map((e) => e.key), ["runs/r10/e1/c"]);
      assert.equal(await store.deletePrefix("runs/r1/"), 0);
      await rejectsWith(store.deletePrefix("runs/r1"), "invalid_key");
    });

    it("refuses keys with .. or empty segments", async () => {
      await rejectsWith(store.put("../escape", Buffer.from("x")), "invalid_key");
      await rejectsWith(store.get("a//b"), "invalid_key");
      await rejectsWith(store.head("/abs"), "invalid_key");
    });

    it("completes a small chunked upload, resumed by a new store instance after a restart", async () => {
      const chunks = [randomBytes(256 * 1024), randomBytes(256 * 1024), randomBytes(1000)];
      const all = Buffer.concat(chunks);
      const uploadId = await store.beginUpload("runs/r1/e1/episode.mcap", { contentType: "application/octet-stream" });
      await store.appendPart("runs/r1/e1/episode.mcap", uploadId, 1, chunks[0]);
      await store.appendPart("runs/r1/e1/episode.mcap", uploadId, 2, chunks[1]);
      await rejectsWith(store.head("runs/r1/e1/episode.mcap"), "not_found");

      const restarted = h.reopen();
      const parts = await restarted.listParts("runs/r1/e1/episode.mcap", uploadId);
      assert.deepEqual(parts.map((p) => [p.partNumber, p.bytes]), [[1, 262144], [2, 262144]]);
      await restarted.appendPart("runs/r1/e1/episode.mcap", uploadId, 2, chunks[1]); // a retry is a no-op
      await rejectsWith(restarted.appendPart("runs/r1/e1/episode.mcap", uploadId, 4, chunks[2]), "part_out_of_order");
      await rejectsWith(restarted.appendPart("runs/r1/e1/episode.mcap", uploadId, 1, chunks[2]), "part_conflict");
      await restarted.appendPart("runs/r1/e1/episode.mcap", uploadId, 3, chunks[2]);
      const done = await restarted.completeUpload("runs/r1/e1/episode.mcap", uploadId, [1, 2, 3], { expect: { bytes: all.length, sha256: sha(all) } });
      assert.equal(done.bytes, all.length);
      assert.equal(done.sha256, sha(all));
      assert.ok((await text((await restarted.get("runs/r1/e1/episode.mcap")).body)).equals(all));
      await rejectsWith(restarted.listParts("runs/r1/e1/episode.mcap", uploadId), "upload_not_found");
    });

    it("takes a part given as its chunks in order: the same part as the chunks joined", async () => {
      const chunks = [randomBytes(1000), randomBytes(0), randomBytes(70 * 1024), randomBytes(3)];
      const all = Buffer.concat(chunks);
      const uploadId = await store.beginUpload("c/chunks.mcap");
      await store.appendPart("c/chunks.mcap", uploadId, 1, chunks);
      assert.deepEqual((await store.listParts("c/chunks.mcap", uploadId)).map((p) => [p.partNumber, p.bytes]), [[1, all.length]]);
      await store.appendPart("c/chunks.mcap", uploadId, 1, all); // the same bytes joined: a retry, a no-op
      await rejectsWith(store.appendPart("c/chunks.mcap", uploadId, 1, chunks.slice(1)), "part_conflict");
      const done = await store.completeUpload("c/chunks.mcap", uploadId, [1], { expect: { bytes: all.length, sha256: sha(all) } });
      assert.equal(done.sha256, sha(all));
      assert.ok((await text((await store.get("c/chunks.mcap")).body)).equals(all));
    });

    it("completes an upload over S3's 5 MiB part minimum from 256 KiB chunks, across a restart", async function () {
      this.timeout(60000);
      const chunk = 256 * 1024;
      const total = 2 * S3_MIN_PART_BYTES + 3 * chunk + 17; // two full parts and a short last one
      const all = randomBytes(total);
      const key = "runs/r1/e1/video.mp4";
      const uploadId = await store.beginUpload(key, { contentType: "video/mp4" });
      let part = 1;
      let offset = 0;
      for (; offset < total / 2; offset += chunk, part++) await store.appendPart(key, uploadId, part, all.subarray(offset, offset + chunk));
      const restarted = h.reopen();
      for (; offset < total; offset += chunk, part++) await restarted.appendPart(key, uploadId, part, all.subarray(offset, Math.min(offset + chunk, total)));
      const parts = await restarted.listParts(key, uploadId);
      const done = await restarted.completeUpload(key, uploadId, parts.map((p) => p.partNumber), { expect: { sha256: sha(all) } });
      assert.equal(done.bytes, total);
      const got = await restarted.get(key);
      assert.equal(got.bytes, total);
      assert.equal(got.contentType, "video/mp4");
      assert.ok((await text(got.body)).equals(all));
      const range = await restarted.get(key, { start: S3_MIN_PART_BYTES - 2, end: S3_MIN_PART_BYTES + 1 });
      assert.ok((await text(range.body)).equals(all.subarray(S3_MIN_PART_BYTES - 2, S3_MIN_PART_BYTES + 2)));
    });

    it("completes an empty upload as an empty object", async () => {
      const uploadId = await store.beginUpload("e/empty.json");
      await store.appendPart("e/empty.json", uploadId, 1, new Uint8Array());
      const done = await store.completeUpload("e/empty.json", uploadId, [1]);
      assert.equal(done.bytes, 0);
      assert.equal((await store.head("e/empty.json")).bytes, 0);
    });

    it("discards an upload whose hash is not the announced one, and leaves no object", async () => {
      const uploadId = await store.beginUpload("i/bad.mcap");
      await store.appendPart("i/bad.mcap", uploadId, 1, Buffer.from("corrupted"));
      const error = await rejectsWith(store.completeUpload("i/bad.mcap", uploadId, [1], { expect: { sha256: sha(Buffer.from("original")) } }), "integrity");
      assert.match(error.message, /upload it again from part 1/);
      await rejectsWith(store.head("i/bad.mcap"), "not_found");
      await rejectsWith(store.listParts("i/bad.mcap", uploadId), "upload_not_found");
    });

    it("refuses to complete with parts the store did not record", async () => {
      const uploadId = await store.beginUpload("p/x");
      await store.appendPart("p/x", uploadId, 1, Buffer.from("a"));
      await rejectsWith(store.completeUpload("p/x", uploadId, [1, 2]), "part_conflict");
    });

    it("aborts an upload: its parts are gone and the key never appears", async () => {
      const uploadId = await store.beginUpload("ab/x");
      await store.appendPart("ab/x", uploadId, 1, Buffer.from("partial"));
      await h.reopen().abortUpload("ab/x", uploadId);
      await rejectsWith(store.listParts("ab/x", uploadId), "upload_not_found");
      await rejectsWith(store.appendPart("ab/x", uploadId, 2, Buffer.from("more")), "upload_not_found");
      await rejectsWith(store.head("ab/x"), "not_found");
      await store.abortUpload("ab/x", uploadId); // twice is fine
    });

    it("lists open uploads by key prefix, with their bytes, until they complete or are aborted", async () => {
      const one = await store.beginUpload("runs/r1/e1/a.mcap");
      await store.appendPart("runs/r1/e1/a.mcap", one, 1, Buffer.from("12345"));
      const two = await store.beginUpload("runs/r1/e2/b.mp4");
      const other = await store.beginUpload("runs/r10/e1/c.mcap");
      assert.deepEqual(await h.reopen().listUploads("runs/r1/"), [
        { key: "runs/r1/e1/a.mcap", uploadId: one, bytes: 5 },
        { key: "runs/r1/e2/b.mp4", uploadId: two, bytes: 0 },
      ]);
      assert.deepEqual((await store.listUploads("")).map((u) => u.uploadId).sort(), [one, two, other].sort());
      await store.completeUpload("runs/r1/e1/a.mcap", one, [1]);
      await store.abortUpload("runs/r1/e2/b.mp4", two);
      assert.deepEqual(await store.listUploads("runs/r1/"), []);
    });

    it("does not let an upload id be used for another key", async () => {
      const uploadId = await store.beginUpload("k/one");
      await rejectsWith(store.appendPart("k/two", uploadId, 1, Buffer.from("x")), "upload_not_found");
      await rejectsWith(store.listParts("k/one", "../../etc"), "upload_not_found");
    });
  });
}

let diskDir: string;
contract(
  "disk",
  async () => {
    diskDir = await mkdtemp(join(tmpdir(), "assay-disk-store-"));
    return { store: new DiskStore(diskDir), reopen: () => new DiskStore(diskDir) };
  },
  async () => rm(diskDir, { recursive: true, force: true }),
);

describe("object store contract against s3rver", () => {
  let server: S3Server;
  let spoolDir: string;
  before(async () => (server = await startS3Server()));
  after(async () => server.stop());

  contract(
    "s3",
    async () => {
      spoolDir = await mkdtemp(join(tmpdir(), "assay-s3-spool-"));
      // A fresh prefix per test keeps tests apart in the one bucket.
      const prefix = `t-${randomBytes(4).toString("hex")}/`;
      const open = () => new S3Store({ bucket: server.bucket, prefix, endpoint: server.endpoint, region: server.region, credentials: server.credentials, spoolDir });
      return { store: open(), reopen: open };
    },
    async () => rm(spoolDir, { recursive: true, force: true }),
  );
});
