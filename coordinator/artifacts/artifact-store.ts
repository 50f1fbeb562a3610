/**
 * The cells' artifacts in the object store (coordinator/storage/): an episode's file is the object
 * `<run_id>/<episode_id>/<file_name>`, on disk the path the API served before object storage.
 *
 * Uploads go through the store's resumable writer. The cell speaks in byte offsets, the writer in
 * parts: a stream's chunks are gathered in memory and appended as one part whenever `partBytes`
 * are held, when the stream ends or breaks, and before the last chunk completes the upload. Parts
 * are contiguous from byte 0, so the offset a cell resumes from is the sum of the recorded parts,
 * and once `appendPart` resolves those bytes are durable.
 *
 * The upload of an artifact is found from its key, which the store's spool records with it: no
 * other table maps one to the other. After a restart the same coordinator continues the upload; a
 * coordinator without a spool for it (another machine sharing the bucket and the database, after a
 * failover) finds none and answers 0, and the cell sends the file again from its start.
 *
 * An artifact whose object already exists with the announced size and SHA-256 is complete,
 * whatever its row says: a coordinator that stopped between completing the upload and recording it
 * (or another coordinator that completed it) does not take it a second time.
 */
import { createHash } from "node:crypto";
import { basename, extname } from "node:path";
import type { Readable } from "node:stream";
import { LinkError } from "../errors/link-errors.js";
import { isObjectNotFound, ObjectStoreError, type ObjectStore, type OpenUpload } from "../storage/object-store.js";

/** What the store needs of an artifact row. */
export interface StoredArtifactRef {
  runId: string;
  episodeId: string;
  kind: string;
  fileName: string;
  bytes: number;
  sha256: string;
}

/** Gathered chunks become a part at this size: fewer, larger parts (each is fsynced and recorded) at the cost of a buffer per stream. */
export const DEFAULT_PART_BYTES = 4 * 1024 * 1024;

const CONTENT_TYPES: Record<string, string> = { ".mcap": "application/octet-stream", ".mp4": "video/mp4", ".json": "application/json" };

/** The content type an artifact is stored and served with, from its file name. */
export function contentTypeOf(fileName: string): string {
  return CONTENT_TYPES[extname(fileName)] ?? "application/octet-stream";
}

/** True when `fileName` is a plain file name that cannot escape its episode directory. */
export function isSafeFileName(fileName: string): boolean {
  return fileName.length > 0 && fileName.length <= 200 && basename(fileName) === fileName && fileName !== "." && fileName !== ".." && !fileName.includes("\\") && !fileName.includes("\0");
}

/** The object key of an episode's file. */
export function artifactKey(ref: { runId: string; episodeId: string; fileName: string }): string {
  if (!isSafeFileName(ref.fileName)) throw new LinkError("bad_message", `artifact file_name must be a plain file name; got ${JSON.stringify(ref.fileName)}`);
  return `${ref.runId}/${ref.episodeId}/${ref.fileName}`;
}

/** Hex SHA-256 of a stream. */
export async function sha256OfStream(body: Readable): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of body) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

export class ArtifactStore {
  private readonly partBytes: number;
  /** Opens in progress per key, so two streams of one artifact never begin two uploads. */
  private readonly opening = new Map<string, Promise<unknown>>();

  constructor(readonly objects: ObjectStore, options: { partBytes?: number } = {}) {
    this.partBytes = options.partBytes ?? DEFAULT_PART_BYTES;
  }

  /** How much of the artifact this coordinator holds, or that it is complete in the store. */
  async progress(ref: StoredArtifactRef): Promise<{ receivedBytes: number; complete: boolean }> {
    const key = artifactKey(ref);
    const open = await this.findUpload(key);
    if (open) return { receivedBytes: open.bytes, complete: false };
    if (await this.isStored(ref, key)) return { receivedBytes: ref.bytes, complete: true };
    return { receivedBytes: 0, complete: false };
  }

  /**
   * The artifact's upload, to take a stream's chunks: the one in progress (its recorded parts) or
   * a new one. "stored" when the object is already complete in the store.
   */
  open(ref: StoredArtifactRef): Promise<ArtifactUpload | "stored"> {
    const key = artifactKey(ref);
    return this.exclusive(key, async () => {
      const open = await this.findUpload(key);
      if (open) {
        const parts = await this.objects.listParts(key, open.uploadId);
        return new ArtifactUpload(this.objects, ref, key, open.uploadId, parts.map((p) => p.bytes), this.partBytes);
      }
      if (await this.isStored(ref, key)) return "stored";
      const uploadId = await this.objects.beginUpload(key, { contentType: contentTypeOf(ref.fileName) });
      return new ArtifactUpload(this.objects, ref, key, uploadId, [], this.partBytes);
    });
  }

  /**
   * Stores a file the coordinator made itself (a derived artifact such as ground truth); readers
   * see it whole or not at all. Returns its key, size and SHA-256 for its artifacts row.
   */
  async writeDerived(ref: { runId: string; episodeId: string; fileName: string }, data: Uint8Array): Promise<{ key: string; bytes: number; sha256: string }> {
    const key = artifactKey(ref);
    const stored = await this.objects.put(key, data, { contentType: contentTypeOf(ref.fileName) });
    return { key, bytes: stored.bytes, sha256: stored.sha256 ?? createHash("sha256").update(data).digest("hex") };
  }

  /** The open upload of `key` in this coordinator's spool; of two (a race long ago), the longer is kept. */
  private async findUpload(key: string): Promise<OpenUpload | undefined> {
    const uploads = (await this.objects.listUploads(key)).filter((u) => u.key === key).sort((a, b) => b.bytes - a.bytes);
    for (const extra of uploads.slice(1)) await this.objects.abortUpload(key, extra.uploadId);
    return uploads[0];
  }

  /** Whether the object exists with the announced size and hash (read back when the store kept no hash). */
  private async isStored(ref: StoredArtifactRef, key: string): Promise<boolean> {
    let info;
    try {
      info = await this.objects.head(key);
    } catch (error) {
      if (isObjectNotFound(error)) return false;
      throw error;
    }
    if (info.bytes !== ref.bytes) return false;
    const sha256 = info.sha256 ?? (await sha256OfStream((await this.objects.get(key)).body));
    return sha256 === ref.sha256.toLowerCase();
  }

  private async exclusive<T>(key: string, run: () => Promise<T>): Promise<T> {
    const before = this.opening.get(key) ?? Promise.resolve();
    const result = before.then(run, run);
    const settled = result.then(() => undefined, () => undefined);
    this.opening.set(key, settled);
    try {
      return await result;
    } finally {
      if (this.opening.get(key) === settled) this.opening.delete(key);
    }
  }
}

/**
 * One artifact's upload as a stream of chunks at byte offsets. NOTE: call `flush()` when a stream
 * ends or breaks without its last chunk, or the gathered bytes are lost (the cell then sends them
 * again, from the offset the next status reports).
 */
export class ArtifactUpload {
  private gathered: Uint8Array[] = [];
  private gatheredBytes = 0;
  private recordedBytes: number;

  constructor(
    private readonly objects: ObjectStore,
    readonly ref: StoredArtifactRef,
    readonly key: string,
    readonly uploadId: string,
    private readonly partSizes: number[],
    private readonly partBytes: number,
  ) {
    this.recordedBytes = partSizes.reduce((sum, bytes) => sum + bytes, 0);
  }

  /** Bytes received: the recorded parts and what is gathered for the next one. */
  get receivedBytes(): number {
    return this.recordedBytes + this.gatheredBytes;
  }

  /**
   * Takes a chunk, which must start at `receivedBytes` (else offset_mismatch naming where to resume).
   * NOTE: `data` is held as it is, not copied, until the part it falls in is recorded: the caller must
   * not change or reuse its bytes (a decoded gRPC chunk owns its message's buffer, so the link does not).
   */
  async write(offset: number, data: Uint8Array): Promise<void> {
    if (offset !== this.receivedBytes) throw new LinkError("offset_mismatch", `resume from ${await this.flush()}`);
    if (this.receivedBytes + data.length > this.ref.bytes) {
      await this.discard();
      throw new LinkError("artifact_corrupt", `${this.what()} grew past the announced ${this.ref.bytes} bytes; upload it again from 0`);
    }
    if (data.length === 0) return;
    // Held as it is, not copied: every MCAP passed through here once more as 256 KiB copies, garbage
    // the coordinator's collector then had to clear.
    this.gathered.push(data);
    this.gatheredBytes += data.length;
    if (this.gatheredBytes >= this.partBytes) await this.flush();
  }

  /** Records what is gathered as the next part; returns the bytes recorded (where a cell resumes). */
  async flush(): Promise<number> {
    if (this.gatheredBytes === 0) return this.recordedBytes;
    // The chunks as they came, written one after the other: joining them would copy every byte once more.
    const chunks = this.gathered;
    const bytes = this.gatheredBytes;
    this.gathered = [];
    this.gatheredBytes = 0;
    try {
      await this.objects.appendPart(this.key, this.uploadId, this.partSizes.length + 1, chunks);
    } catch (error) {
      throw await this.movedOn(error);
    }
    this.partSizes.push(bytes);
    this.recordedBytes += bytes;
    return this.recordedBytes;
  }

  /**
   * Checks the whole file against the announced size and SHA-256 and makes it the object. On a
   * mismatch the upload is dropped (the cell uploads again from 0) and artifact_corrupt is thrown.
   */
  async commit(): Promise<{ bytes: number; sha256: string }> {
    await this.flush();
    if (this.recordedBytes !== this.ref.bytes) {
      const held = this.recordedBytes;
      await this.discard();
      throw new LinkError("artifact_corrupt", `${this.what()} has ${held} bytes, announced ${this.ref.bytes}; upload it again from 0`);
    }
    const parts = this.partSizes.map((_, index) => index + 1);
    try {
      return await this.objects.completeUpload(this.key, this.uploadId, parts, { expect: { bytes: this.ref.bytes, sha256: this.ref.sha256 } });
    } catch (error) {
      if (error instanceof ObjectStoreError && error.reason === "integrity") {
        throw new LinkError("artifact_corrupt", `${this.what()} does not hash to the announced sha256 ${this.ref.sha256}; it was dropped, upload it again from 0`);
      }
      throw await this.movedOn(error);
    }
  }

  /** Drops the upload and everything it holds. */
  async discard(): Promise<void> {
    this.gathered = [];
    this.gatheredBytes = 0;
    await this.objects.abortUpload(this.key, this.uploadId);
  }

  private what(): string {
    return `${this.ref.kind} of episode ${this.ref.episodeId}`;
  }

  /**
   * A part refused because the upload is not where this stream thought (another stream of the same
   * artifact recorded parts, or the upload was aborted): offset_mismatch with where it now stands.
   */
  private async movedOn(error: unknown): Promise<unknown> {
    if (!(error instanceof ObjectStoreError) || !["part_conflict", "part_out_of_order", "upload_not_found"].includes(error.reason)) return error;
    let recorded = 0;
    try {
      recorded = (await this.objects.listParts(this.key, this.uploadId)).reduce((sum, part) => sum + part.bytes, 0);
    } catch (listing) {
      if (!(listing instanceof ObjectStoreError && listing.reason === "upload_not_found")) throw listing;
    }
    return new LinkError("offset_mismatch", `resume from ${recorded}`);
  }
}
