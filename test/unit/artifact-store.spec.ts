/**
 * The coordinator's artifact uploads over the object store (coordinator/artifacts/artifact-store.ts):
 * chunks at byte offsets become the writer's parts, a restarted coordinator resumes from the
 * recorded bytes, one without the spool (failover) from 0, and a file already complete in the store
 * counts as stored. Run against a disk store and an S3 store on s3rver.
 */
import { strict as assert } from "node:assert";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ArtifactStore, ArtifactUpload, type StoredArtifactRef } from "../../coordinator/artifacts/artifact-store.js";
import { LinkError } from "../../coordinator/errors/link-errors.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";
import { readAll } from "../../coordinator/storage/object-readable.js";
import type { ObjectStore } from "../../coordinator/storage/object-store.js";
import { S3Store } from "../../coordinator/storage/s3-store.js";
import { startS3Server, type S3Server } from "../support/s3-server.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

function refOf(data: Buffer, fileName = "ep_1.mcap"): StoredArtifactRef {
  return { runId: "run_1", episodeId: "ep_1", kind: "mcap", fileName, bytes: data.length, sha256: sha256(data) };
}

async function opened(store: ArtifactStore, ref: StoredArtifactRef): Promise<ArtifactUpload> {
  const upload = await store.open(ref);
  assert.ok(upload instanceof ArtifactUpload, `expected an upload, got ${String(upload)}`);
  return upload;
}

async function rejectsWithLink(promise: Promise<unknown>, reason: string, message?: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof LinkError, String(error));
    assert.equal(error.reason, reason, error.message);
    if (message) assert.match(error.message, message);
    return true;
  });
}

function suite(name: string, open: () => Promise<{ objects: ObjectStore; reopen: () => ObjectStore }>, cleanup: () => Promise<void>) {
  describe(`artifact uploads over the object store: ${name}`, () => {
    let objects: ObjectStore;
    let reopen: () => ObjectStore;
    /** Parts of 10 bytes, so a few chunks make several. */
    const storeOf = (over: ObjectStore) => new ArtifactStore(over, { partBytes: 10 });

    beforeEach(async () => ({ objects, reopen } = await open()));
    afterEach(cleanup);

    it("gathers chunks into parts, keeps them across a restart, and completes the file once it is whole", async () => {
      const data = randomBytes(47);
      const ref = refOf(data);
      const first = await opened(storeOf(objects), ref);
      await first.write(0, data.subarray(0, 6));
      await first.write(6, data.subarray(6, 23)); // 23 gathered: one part of 23 bytes
      await first.write(23, data.subarray(23, 27));
      assert.equal(first.receivedBytes, 27);
      assert.equal(await first.flush(), 27); // the stream ended: the rest becomes a part
      assert.deepEqual((await objects.listParts("run_1/ep_1/ep_1.mcap", first.uploadId)).map((p) => p.bytes), [23, 4]);

      const restarted = storeOf(reopen());
      assert.deepEqual(await restarted.progress(ref), { receivedBytes: 27, complete: false });
      const second = await opened(restarted, ref);
      assert.equal(second.uploadId, first.uploadId);
      await second.write(27, data.subarray(27));
      const done = await second.commit();
      assert.deepEqual([done.bytes, done.sha256], [47, ref.sha256]);
      assert.ok((await readAll((await objects.get("run_1/ep_1/ep_1.mcap")).body)).equals(data));
      assert.deepEqual(await restarted.progress(ref), { receivedBytes: 47, complete: true });
      assert.equal(await restarted.open(ref), "stored");
      assert.deepEqual(await objects.listUploads(""), []);
    });

    it("answers a chunk at the wrong offset with where to resume, after keeping what it gathered", async () => {
      const data = randomBytes(30);
      const ref = refOf(data);
      const upload = await opened(storeOf(objects), ref);
      await upload.write(0, data.subarray(0, 8));
      await rejectsWithLink(upload.write(0, data.subarray(0, 8)), "offset_mismatch", /^resume from 8$/);
      assert.deepEqual(await storeOf(objects).progress(ref), { receivedBytes: 8, complete: false });
    });

    it("drops an upload that grows past the announced size or does not hash to it: the cell starts again from 0", async () => {
      const data = randomBytes(20);
      const ref = refOf(data);
      const store = storeOf(objects);
      const growing = await opened(store, ref);
      await growing.write(0, data);
      await rejectsWithLink(growing.write(20, Buffer.from("x")), "artifact_corrupt", /grew past the announced 20 bytes/);
      assert.deepEqual(await store.progress(ref), { receivedBytes: 0, complete: false });

      const corrupt = Buffer.from(data);
      corrupt[3] ^= 0xff;
      const wrong = await opened(store, ref);
      await wrong.write(0, corrupt);
      await rejectsWithLink(wrong.commit(), "artifact_corrupt", /does not hash to the announced sha256/);
      assert.deepEqual(await store.progress(ref), { receivedBytes: 0, complete: false });
      await assert.rejects(objects.head("run_1/ep_1/ep_1.mcap"));
    });

    it("sends a second stream of the same artifact back to the offset the first one recorded", async () => {
      const data = randomBytes(40);
      const ref = refOf(data);
      const store = storeOf(objects);
      const stale = await opened(store, ref);
      const fresh = await opened(store, ref);
      assert.equal(fresh.uploadId, stale.uploadId, "one upload per artifact");
      await stale.write(0, data.subarray(0, 12)); // recorded as part 1
      await rejectsWithLink(fresh.write(0, data.subarray(0, 15)), "offset_mismatch", /^resume from 12$/);
      const resumed = await opened(store, ref);
      await resumed.write(12, data.subarray(12));
      await resumed.commit();
      assert.ok((await readAll((await objects.get("run_1/ep_1/ep_1.mcap")).body)).equals(data));
    });

    it("takes a file already in the store with the announced size and hash as stored, and one with other bytes as not", async () => {
      const data = randomBytes(64);
      const ref = refOf(data, "ep_1.mp4");
      const store = storeOf(objects);
      const other = Buffer.from(data);
      other[0] ^= 1;
      await objects.put("run_1/ep_1/ep_1.mp4", other);
      assert.deepEqual(await store.progress(ref), { receivedBytes: 0, complete: false });
      await objects.put("run_1/ep_1/ep_1.mp4", data);
      assert.deepEqual(await store.progress(ref), { receivedBytes: 64, complete: true });
    });
  });
}

let diskDir: string;
suite(
  "disk",
  async () => {
    diskDir = await mkdtemp(join(tmpdir(), "assay-artifact-store-"));
    return { objects: new DiskStore(diskDir), reopen: () => new DiskStore(diskDir) };
  },
  async () => rm(diskDir, { recursive: true, force: true }),
);

describe("artifact uploads over an S3 store", () => {
  let server: S3Server;
  const spools: string[] = [];
  const connect = (prefix: string, spoolDir: string) =>
    new S3Store({ bucket: server.bucket, prefix, endpoint: server.endpoint, region: server.region, credentials: server.credentials, spoolDir });
  before(async () => (server = await startS3Server()));
  after(async () => server.stop());
  afterEach(async () => {
    for (const dir of spools.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  const spool = async () => {
    const dir = await mkdtemp(join(tmpdir(), "assay-artifact-spool-"));
    spools.push(dir);
    return dir;
  };

  suite(
    "s3",
    async () => {
      const prefix = `t-${randomBytes(4).toString("hex")}/`;
      const dir = await spool();
      return { objects: connect(prefix, dir), reopen: () => connect(prefix, dir) };
    },
    async () => undefined,
  );

  it("a coordinator without the upload's spool (failover) answers 0, and a new upload from 0 completes; a multipart object without a stored hash is read back to be recognised", async () => {
    const prefix = `t-${randomBytes(4).toString("hex")}/`;
    const data = randomBytes(6 * 1024 * 1024 + 5); // over the 5 MiB part minimum: sent as a multipart upload
    const ref = refOf(data);
    const first = await opened(new ArtifactStore(connect(prefix, await spool())), ref);
    await first.write(0, data.subarray(0, 5 * 1024 * 1024 + 1));
    await first.flush();

    const other = new ArtifactStore(connect(prefix, await spool()));
    assert.deepEqual(await other.progress(ref), { receivedBytes: 0, complete: false });
    const again = await opened(other, ref);
    await again.write(0, data);
    const done = await again.commit();
    assert.equal(done.sha256, ref.sha256);
    assert.equal((await other.objects.head("run_1/ep_1/ep_1.mcap")).sha256, undefined, "a multipart completion carries no hash metadata");
    // A third coordinator (or this one after a crash before recording it) finds it complete by reading it back.
    assert.deepEqual(await new ArtifactStore(connect(prefix, await spool())).progress(ref), { receivedBytes: data.length, complete: true });
  });
});
