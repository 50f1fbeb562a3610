/**
 * The local journal behind both stores' resumable uploads. Each upload is a folder
 * `<dir>/<uploadId>/` holding `data` (the parts so far, concatenated) and `state.json` (the key, the
 * recorded parts and, for S3, which byte ranges were already sent as multipart parts).
 *
 * A part is durable once `append` resolves: its bytes are written and fsynced, then state.json is
 * replaced atomically. A crash between the two leaves extra bytes after the recorded size; the next
 * append truncates them, so `data` never holds an unrecorded byte that matters.
 *
 * The whole upload stays on local disk until it completes (as `.incoming` does today): the SHA-256
 * is checked over local bytes before the object appears, and no part of S3's multipart state has to
 * be read back (S3 cannot read an unfinished upload, and some S3-compatible servers lack ListParts).
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { ObjectStoreError, partChunks, type CompleteUploadOptions, type OpenUpload, type PartBytes, type UploadedPart } from "./object-store.js";

/** S3's side of an upload, once its first part was sent. */
export interface RemoteMultipart {
  uploadId: string;
  /** Parts sent, in order; part n holds data bytes [previous endOffset, endOffset). */
  parts: { partNumber: number; etag: string; endOffset: number }[];
}

export interface SpoolState {
  version: 1;
  key: string;
  contentType?: string;
  parts: UploadedPart[];
  remote?: RemoteMultipart;
}

const UPLOAD_ID = /^[0-9a-f]{32}$/;

export class UploadSpool {
  constructor(private readonly dir: string) {}

  async begin(key: string, contentType: string | undefined): Promise<string> {
    const uploadId = randomBytes(16).toString("hex");
    await mkdir(join(this.dir, uploadId), { recursive: true });
    await (await open(this.dataPath(uploadId), "w")).close();
    await this.save(uploadId, { version: 1, key, ...(contentType ? { contentType } : {}), parts: [] });
    return uploadId;
  }

  /** The upload's state; `upload_not_found` when the id is unknown or was begun for another key. */
  async load(key: string, uploadId: string): Promise<SpoolState> {
    const notFound = () => new ObjectStoreError("upload_not_found", `no upload ${JSON.stringify(uploadId)} for ${key}; begin a new upload`, { key });
    if (!UPLOAD_ID.test(uploadId)) throw notFound();
    let state: SpoolState;
    try {
      state = JSON.parse(await readFile(join(this.dir, uploadId, "state.json"), "utf8")) as SpoolState;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") throw notFound();
      throw error;
    }
    if (state.key !== key) throw notFound();
    return state;
  }

  /** Every upload in the spool whose key starts with `prefix`, sorted by key then id. */
  async list(prefix: string): Promise<OpenUpload[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    const uploads: OpenUpload[] = [];
    for (const uploadId of names.filter((name) => UPLOAD_ID.test(name))) {
      let state: SpoolState;
      try {
        state = JSON.parse(await readFile(join(this.dir, uploadId, "state.json"), "utf8")) as SpoolState;
      } catch (error) {
        // Removed while listing (completed or aborted), or begun and not yet recorded: not an open upload.
        if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw error;
      }
      if (state.key.startsWith(prefix)) uploads.push({ key: state.key, uploadId, bytes: UploadSpool.size(state) });
    }
    return uploads.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.uploadId < b.uploadId ? -1 : 1));
  }

  /** Total bytes recorded. */
  static size(state: SpoolState): number {
    return state.parts.reduce((sum, part) => sum + part.bytes, 0);
  }

  /**
   * Records part `partNumber` (one array, or its chunks in order); returns the new state, or the
   * unchanged one when the same part was already recorded (a retry).
   */
  async append(key: string, uploadId: string, partNumber: number, part: PartBytes): Promise<SpoolState> {
    const state = await this.load(key, uploadId);
    const chunks = partChunks(part);
    const hash = createHash("sha256");
    let length = 0;
    for (const chunk of chunks) {
      hash.update(chunk);
      length += chunk.length;
    }
    const sha256 = hash.digest("hex");
    const recorded = state.parts[partNumber - 1];
    if (Number.isInteger(partNumber) && recorded) {
      if (recorded.bytes === length && recorded.sha256 === sha256) return state;
      throw new ObjectStoreError("part_conflict", `part ${partNumber} of upload ${uploadId} was already recorded with other bytes (${recorded.bytes} bytes, sha256 ${recorded.sha256}); send part ${state.parts.length + 1} next`, { key });
    }
    if (partNumber !== state.parts.length + 1) {
      throw new ObjectStoreError("part_out_of_order", `upload ${uploadId} expects part ${state.parts.length + 1} next; got part ${partNumber}`, { key });
    }
    const size = UploadSpool.size(state);
    const handle = await open(this.dataPath(uploadId), "r+");
    try {
      await handle.truncate(size); // drops bytes a crash left after the last recorded part
      let position = size;
      for (const chunk of chunks) {
        let written = 0;
        while (written < chunk.length) written += (await handle.write(chunk, written, chunk.length - written, position + written)).bytesWritten;
        position += chunk.length;
      }
      await handle.sync();
    } finally {
      await handle.close();
    }
    state.parts.push({ partNumber, bytes: length, sha256 });
    await this.save(uploadId, state);
    return state;
  }

  /** Replaces state.json atomically (temp file, fsync, rename). */
  async save(uploadId: string, state: SpoolState): Promise<void> {
    const path = join(this.dir, uploadId, "state.json");
    const temp = `${path}.tmp`;
    const handle = await open(temp, "w");
    try {
      await handle.writeFile(JSON.stringify(state));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  }

  dataPath(uploadId: string): string {
    return join(this.dir, uploadId, "data");
  }

  /** Reads data bytes [start, end). */
  async read(uploadId: string, start: number, end: number): Promise<Buffer> {
    const buffer = Buffer.alloc(end - start);
    const handle = await open(this.dataPath(uploadId), "r");
    try {
      let read = 0;
      while (read < buffer.length) {
        const { bytesRead } = await handle.read(buffer, read, buffer.length - read, start + read);
        if (bytesRead === 0) throw new Error(`upload ${uploadId} data ends at ${start + read}, expected ${end} bytes`);
        read += bytesRead;
      }
    } finally {
      await handle.close();
    }
    return buffer;
  }

  /** Hex SHA-256 of the recorded bytes. */
  async sha256(uploadId: string, bytes: number): Promise<string> {
    const hash = createHash("sha256");
    if (bytes > 0) {
      for await (const chunk of createReadStream(this.dataPath(uploadId), { start: 0, end: bytes - 1 })) hash.update(chunk as Buffer);
    }
    return hash.digest("hex");
  }

  async remove(uploadId: string): Promise<void> {
    if (!UPLOAD_ID.test(uploadId)) return;
    await rm(join(this.dir, uploadId), { recursive: true, force: true });
  }
}

/** Throws `part_conflict` unless `parts` are exactly the recorded part numbers, in order. */
export function checkCompleteParts(key: string, uploadId: string, state: SpoolState, parts: number[]): void {
  const recorded = state.parts.map((part) => part.partNumber);
  if (parts.length !== recorded.length || parts.some((number, index) => number !== recorded[index])) {
    throw new ObjectStoreError("part_conflict", `upload ${uploadId} recorded parts 1..${recorded.length}; complete was given [${parts.join(", ")}]; call listParts and send what is missing`, { key });
  }
}

/** Shared by both stores: aborts the upload and throws `integrity` when it is not what the caller announced. */
export async function checkExpected(spool: UploadSpool, key: string, uploadId: string, bytes: number, sha256: string, options: CompleteUploadOptions, abort?: () => Promise<void>): Promise<void> {
  const expect = options.expect;
  if (!expect) return;
  let problem: string | undefined;
  if (expect.bytes !== undefined && expect.bytes !== bytes) problem = `has ${bytes} bytes, announced ${expect.bytes}`;
  else if (expect.sha256 !== undefined && expect.sha256.toLowerCase() !== sha256) problem = `hashes to ${sha256}, announced ${expect.sha256}`;
  if (!problem) return;
  await abort?.();
  await spool.remove(uploadId);
  throw new ObjectStoreError("integrity", `upload of ${key} ${problem}; it was discarded, upload it again from part 1`, { key });
}
