/**
 * The object store as a directory: key `a/b/c.mcap` is the file `<root>/a/b/c.mcap`, so the layout
 * on disk is the one the API served before object storage existed. The store's own files live under
 * `<root>/.objstore/`: `tmp/` (writes in progress), `meta/<key>.json` (content type and SHA-256)
 * and `uploads/` (resumable upload spools).
 *
 * Every write is a temp file, fsynced, renamed into place, and the directory fsynced, so a reader
 * or a power cut sees the old file or the new one. Keys are checked lexically (checkKey) and the
 * resolved path must stay under the root.
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm, rmdir, stat } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  checkDeletePrefix,
  checkExpiry,
  checkKey,
  ObjectStoreError,
  RESERVED_SEGMENT,
  type BeginUploadOptions,
  type ByteRange,
  type CompleteUploadOptions,
  type DownloadUrlOptions,
  type GetResult,
  type ObjectEntry,
  type ObjectInfo,
  type ObjectStore,
  type OpenUpload,
  type PartBytes,
  type PutOptions,
  type UploadedPart,
} from "./object-store.js";
import { checkCompleteParts, checkExpected, UploadSpool } from "./upload-spool.js";

interface StoredMeta {
  contentType?: string;
  sha256: string;
  bytes: number;
}

export class DiskStore implements ObjectStore {
  readonly kind = "disk" as const;
  readonly root: string;
  private readonly tmpDir: string;
  private readonly metaDir: string;
  private readonly spool: UploadSpool;

  /** `root` is created if missing. */
  constructor(root: string) {
    this.root = resolve(root);
    this.tmpDir = join(this.root, RESERVED_SEGMENT, "tmp");
    this.metaDir = join(this.root, RESERVED_SEGMENT, "meta");
    this.spool = new UploadSpool(join(this.root, RESERVED_SEGMENT, "uploads"));
  }

  /** The file behind `key`; throws `invalid_key` for a key that would leave the root. */
  pathOf(key: string): string {
    checkKey(key);
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new ObjectStoreError("invalid_key", `object key must stay inside the store; got ${JSON.stringify(key)}`, { key });
    return path;
  }

  async put(key: string, body: Readable | Uint8Array, options: PutOptions = {}): Promise<ObjectInfo & { sha256: string }> {
    const path = this.pathOf(key);
    const temp = await this.tempPath();
    const hash = createHash("sha256");
    let bytes = 0;
    const tap = new Transform({
      transform(chunk: Uint8Array | string, _encoding, done) {
        const data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
        hash.update(data);
        bytes += data.length;
        done(null, data);
      },
    });
    try {
      // A write stream batches the many small chunks a stream may bring (a tar's headers); `flush` fsyncs before it closes.
      await pipeline(body instanceof Uint8Array ? Readable.from([body]) : body, tap, createWriteStream(temp, { flush: true }));
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    return await this.commit(key, path, temp, { sha256: hash.digest("hex"), bytes }, options);
  }

  /** Each chunk is hashed and written (the write awaited) before the next is asked for: nothing is copied. */
  async putChunks(key: string, chunks: AsyncIterable<Uint8Array>, options: PutOptions = {}): Promise<ObjectInfo & { sha256: string }> {
    const path = this.pathOf(key);
    const temp = await this.tempPath();
    const hash = createHash("sha256");
    let bytes = 0;
    const file = await open(temp, "w");
    try {
      for await (const chunk of chunks) {
        hash.update(chunk);
        bytes += chunk.length;
        for (let written = 0; written < chunk.length; ) written += (await file.write(chunk, written, chunk.length - written)).bytesWritten;
      }
      await file.sync();
    } catch (error) {
      await file.close();
      await rm(temp, { force: true });
      throw error;
    }
    await file.close();
    return await this.commit(key, path, temp, { sha256: hash.digest("hex"), bytes }, options);
  }

  /** Moves a written, fsynced `temp` into place as `key` with its metadata: the end of `put` and `putChunks`. */
  private async commit(key: string, path: string, temp: string, written: { sha256: string; bytes: number }, options: PutOptions): Promise<ObjectInfo & { sha256: string }> {
    const meta: StoredMeta = { ...(options.contentType ? { contentType: options.contentType } : {}), ...written };
    await this.moveIntoPlace(temp, path);
    await this.writeMeta(key, meta);
    return { ...this.info(meta, (await stat(path)).mtimeMs), sha256: meta.sha256 };
  }

  async get(key: string, range?: ByteRange): Promise<GetResult> {
    const path = this.pathOf(key);
    const meta = await this.readMeta(key);
    const size = await this.sizeOf(key, path);
    if (!range) return { body: createReadStream(path), bytes: size, totalBytes: size, ...(meta?.contentType ? { contentType: meta.contentType } : {}) };
    const end = Math.min(range.end ?? size - 1, size - 1);
    if (!Number.isInteger(range.start) || range.start < 0 || range.start >= size || end < range.start) {
      throw new ObjectStoreError("range_not_satisfiable", `range ${range.start}-${range.end ?? ""} is outside ${key} (${size} bytes)`, { key });
    }
    return { body: createReadStream(path, { start: range.start, end }), bytes: end - range.start + 1, totalBytes: size, ...(meta?.contentType ? { contentType: meta.contentType } : {}) };
  }

  async head(key: string): Promise<ObjectInfo> {
    const path = this.pathOf(key);
    const stats = await this.statFile(key, path);
    const meta = await this.readMeta(key);
    // A sidecar that disagrees with the file's size is stale (the file was replaced by hand).
    if (meta && meta.bytes === stats.size) return this.info(meta, stats.mtimeMs);
    return { bytes: stats.size, etag: `"${stats.size.toString(16)}-${Math.round(stats.mtimeMs).toString(16)}"` };
  }

  async delete(key: string): Promise<void> {
    const path = this.pathOf(key);
    await rm(path, { force: true });
    await rm(this.metaPath(key), { force: true });
    await this.pruneEmpty(dirname(path), this.root);
    await this.pruneEmpty(dirname(this.metaPath(key)), this.metaDir);
  }

  async deletePrefix(prefix: string): Promise<number> {
    checkDeletePrefix(prefix);
    const entries = await this.list(prefix);
    for (const entry of entries) await this.delete(entry.key);
    return entries.length;
  }

  async list(prefix: string): Promise<ObjectEntry[]> {
    // Walk from the deepest whole folder the prefix names, then filter by the plain string prefix.
    const folder = prefix.includes("/") ? prefix.slice(0, prefix.lastIndexOf("/")) : "";
    if (folder !== "") checkKey(folder);
    const entries: ObjectEntry[] = [];
    await this.walk(folder === "" ? this.root : this.pathOf(folder), prefix, entries);
    return entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Always null: a directory has no URL of its own; stream `get` instead. */
  async downloadUrl(key: string, options: DownloadUrlOptions): Promise<null> {
    this.pathOf(key);
    checkExpiry(options.expiresInS);
    return null;
  }

  async beginUpload(key: string, options: BeginUploadOptions = {}): Promise<string> {
    this.pathOf(key);
    return this.spool.begin(key, options.contentType);
  }

  async appendPart(key: string, uploadId: string, partNumber: number, bytes: PartBytes): Promise<void> {
    this.pathOf(key);
    await this.spool.append(key, uploadId, partNumber, bytes);
  }

  async listParts(key: string, uploadId: string): Promise<UploadedPart[]> {
    this.pathOf(key);
    return (await this.spool.load(key, uploadId)).parts;
  }

  async completeUpload(key: string, uploadId: string, parts: number[], options: CompleteUploadOptions = {}): Promise<ObjectInfo & { sha256: string }> {
    const path = this.pathOf(key);
    const state = await this.spool.load(key, uploadId);
    checkCompleteParts(key, uploadId, state, parts);
    const bytes = UploadSpool.size(state);
    const sha256 = await this.spool.sha256(uploadId, bytes);
    await checkExpected(this.spool, key, uploadId, bytes, sha256, options);
    const data = this.spool.dataPath(uploadId);
    const handle = await open(data, "r+");
    try {
      await handle.truncate(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await this.moveIntoPlace(data, path);
    const meta: StoredMeta = { ...(state.contentType ? { contentType: state.contentType } : {}), sha256, bytes };
    await this.writeMeta(key, meta);
    await this.spool.remove(uploadId);
    return { ...this.info(meta, (await stat(path)).mtimeMs), sha256 };
  }

  async listUploads(prefix: string): Promise<OpenUpload[]> {
    return this.spool.list(prefix);
  }

  async abortUpload(key: string, uploadId: string): Promise<void> {
    this.pathOf(key);
    await this.spool.remove(uploadId);
  }

  private info(meta: StoredMeta, mtimeMs: number): ObjectInfo {
    return { bytes: meta.bytes, etag: `"${meta.sha256.slice(0, 32)}-${Math.round(mtimeMs).toString(16)}"`, sha256: meta.sha256, ...(meta.contentType ? { contentType: meta.contentType } : {}) };
  }

  private async tempPath(): Promise<string> {
    await mkdir(this.tmpDir, { recursive: true });
    return join(this.tmpDir, randomBytes(12).toString("hex"));
  }

  /** Renames a fsynced file to `path` and fsyncs the directory, so the rename survives a power cut. */
  private async moveIntoPlace(from: string, path: string): Promise<void> {
    await mkdir(dirname(path), { recursive: true });
    await rename(from, path);
    await syncDirectory(dirname(path));
  }

  private metaPath(key: string): string {
    return join(this.metaDir, `${key}.json`);
  }

  private async writeMeta(key: string, meta: StoredMeta): Promise<void> {
    const temp = await this.tempPath();
    const handle = await open(temp, "w");
    try {
      await handle.writeFile(JSON.stringify(meta));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await this.moveIntoPlace(temp, this.metaPath(key));
  }

  private async readMeta(key: string): Promise<StoredMeta | undefined> {
    try {
      return JSON.parse(await readFile(this.metaPath(key), "utf8")) as StoredMeta;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  private async statFile(key: string, path: string) {
    try {
      const stats = await stat(path);
      if (stats.isFile()) return stats;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" && (error as NodeJS.ErrnoException).code !== "ENOTDIR") throw error;
    }
    throw new ObjectStoreError("not_found", `no object ${key}`, { key });
  }

  private async sizeOf(key: string, path: string): Promise<number> {
    return (await this.statFile(key, path)).size;
  }

  private async walk(directory: string, prefix: string, into: ObjectEntry[]): Promise<void> {
    let names;
    try {
      names = await readdir(directory, { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return;
      throw error;
    }
    for (const entry of names) {
      const path = join(directory, entry.name);
      const key = relative(this.root, path).split(sep).join("/");
      if (key === RESERVED_SEGMENT) continue;
      if (entry.isDirectory()) {
        if (key.startsWith(prefix) || prefix.startsWith(`${key}/`)) await this.walk(path, prefix, into);
      } else if (entry.isFile() && key.startsWith(prefix)) {
        into.push({ key, bytes: (await stat(path)).size });
      }
    }
  }

  /** Removes empty folders from `directory` up to (not including) `stopAt`. */
  private async pruneEmpty(directory: string, stopAt: string): Promise<void> {
    while (directory.startsWith(stopAt + sep)) {
      try {
        await rmdir(directory);
      } catch {
        return; // not empty, or gone
      }
      directory = dirname(directory);
    }
  }
}

async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
