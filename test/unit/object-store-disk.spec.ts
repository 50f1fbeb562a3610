import { strict as assert } from "node:assert";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiskStore } from "../../coordinator/storage/disk-store.js";
import { ObjectStoreError } from "../../coordinator/storage/object-store.js";

describe("DiskStore", () => {
  let dir: string;
  let outside: string;
  beforeEach(async () => {
    outside = await mkdtemp(join(tmpdir(), "assay-disk-outside-"));
    dir = join(outside, "artifacts");
  });
  afterEach(() => rm(outside, { recursive: true, force: true }));

  const refused = async (promise: Promise<unknown>) =>
    assert.rejects(promise, (error: unknown) => error instanceof ObjectStoreError && error.reason === "invalid_key");

  it("refuses keys that would leave its folder or touch its own files", async () => {
    const store = new DiskStore(dir);
    await writeFile(join(outside, "secret.txt"), "do not serve");
    for (const key of ["../secret.txt", "runs/../../secret.txt", "/etc/passwd", "runs\\..\\..\\secret.txt", "a/./b", ".objstore/meta/x.json", "a\0b"]) {
      await refused(store.get(key));
      await refused(store.put(key, Buffer.from("x")));
      await refused(store.delete(key));
    }
    await refused(store.beginUpload("../x"));
    await refused(store.deletePrefix("../"));
    assert.equal(await readFile(join(outside, "secret.txt"), "utf8"), "do not serve");
  });

  it("keeps the layout a key names, and lists no internal files", async () => {
    const store = new DiskStore(dir);
    await store.put("runs/r1/e1/video.mp4", Buffer.from("v"), { contentType: "video/mp4" });
    assert.equal(await readFile(join(dir, "runs/r1/e1/video.mp4"), "utf8"), "v");
    assert.deepEqual((await store.list("")).map((e) => e.key), ["runs/r1/e1/video.mp4"]);
    await store.deletePrefix("runs/r1/");
    assert.deepEqual((await readdir(dir)).sort(), [".objstore"]); // emptied folders are removed too
  });

  it("reads files written before the store existed, without metadata", async () => {
    const store = new DiskStore(dir);
    await store.put("runs/r1/e1/a.bin", Buffer.from("x"));
    await writeFile(join(dir, "runs/r1/e1/legacy.mcap"), "old bytes");
    const head = await store.head("runs/r1/e1/legacy.mcap");
    assert.equal(head.bytes, 9);
    assert.equal(head.sha256, undefined);
    assert.equal(await store.downloadUrl("runs/r1/e1/legacy.mcap", { expiresInS: 60 }), null);
  });
});
