/**
 * The object store in an S3-compatible bucket: key `k` is the object `<prefix>k`.
 *
 * Resumable uploads are spooled on local disk (upload-spool.ts) and sent to S3 as multipart parts
 * of at least `minPartBytes` (S3 refuses parts under 5 MiB except the last): the cells' 256 KiB
 * chunks accumulate in the spool, and each time 5 MiB or more are unsent they go out as one part.
 * An upload that never reaches 5 MiB is sent as one PutObject on completion, so most artifacts
 * never open a multipart upload at all. S3's UploadId and the parts sent are recorded in the spool's
 * state, so a restarted coordinator continues the same multipart upload; re-sending a part after a
 * crash overwrites it under the same part number.
 *
 * Objects written by `put` with bytes in hand, and every completed upload sent as a single
 * PutObject, carry their SHA-256 as `x-amz-meta-sha256`; multipart completions cannot (S3 fixes
 * metadata when the upload begins, before the hash is known), so `head` omits it for them and the
 * caller keeps the hash `completeUpload` returned.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { pipeline, Readable, Transform } from "node:stream";
import {
  checkDeletePrefix,
  checkExpiry,
  checkKey,
  contentDisposition,
  ObjectStoreError,
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
import { checkCompleteParts, checkExpected, UploadSpool, type SpoolState } from "./upload-spool.js";

/** S3 refuses smaller parts, except the last. */
export const S3_MIN_PART_BYTES = 5 * 1024 * 1024;

export interface S3StoreOptions {
  bucket: string;
  /** Prepended to every key; "" or a path ending in "/" (added if missing). Default "". */
  prefix?: string;
  /** An S3-compatible server's URL (MinIO, Ceph, R2, s3rver); default AWS's endpoint for the region. */
  endpoint?: string;
  /** Default the SDK's (AWS_REGION, profile); "us-east-1" when an endpoint is given and none is found. */
  region?: string;
  /** Default the SDK's chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** `http://host/bucket/key` instead of `http://bucket.host/key`; default true when `endpoint` is given. */
  forcePathStyle?: boolean;
  /** Local folder for resumable upload spools; must survive restarts (e.g. `<dataDir>/artifacts-spool`). */
  spoolDir: string;
  /** Unsent bytes that make a multipart part; default and minimum on AWS S3_MIN_PART_BYTES. */
  minPartBytes?: number;
  /** The time presigned URLs are signed at; default the wall clock. Tests sign in the past to see expiry. */
  clock?: () => Date;
}

export class S3Store implements ObjectStore {
  readonly kind = "s3" as const;
  readonly bucket: string;
  readonly prefix: string;
  readonly client: S3Client;
  private readonly spool: UploadSpool;
  private readonly minPartBytes: number;
  private readonly clock: () => Date;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix ? options.prefix.replace(/\/*$/, "/") : "";
    this.minPartBytes = options.minPartBytes ?? S3_MIN_PART_BYTES;
    this.clock = options.clock ?? (() => new Date());
    this.spool = new UploadSpool(options.spoolDir);
    this.client = new S3Client({
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      ...(options.region ? { region: options.region } : options.endpoint ? { region: "us-east-1" } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      forcePathStyle: options.forcePathStyle ?? options.endpoint !== undefined,
      // Checksums only where S3 requires them: many S3-compatible servers reject the newer defaults.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  private objectKey(key: string): string {
    checkKey(key);
    return this.prefix + key;
  }

  async put(key: string, body: Readable | Uint8Array, options: PutOptions = {}): Promise<ObjectInfo & { sha256: string }> {
    const Key = this.objectKey(key);
    if (body instanceof Uint8Array) {
      const sha256 = createHash("sha256").update(body).digest("hex");
      const sent = await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key, Body: body, ContentLength: body.length, ContentType: options.contentType, Metadata: { sha256 } }),
      );
      return { bytes: body.length, etag: sent.ETag ?? "", sha256, ...(options.contentType ? { contentType: options.contentType } : {}) };
    }
    // A stream of unknown length: lib-storage sends it as one PutObject or as multipart parts. Its
    // SHA-256 is computed on the way (returned, not stored as metadata: that is sent before the bytes).
    const hash = createHash("sha256");
    const tap = new Transform({
      transform(chunk: Uint8Array | string, _encoding, done) {
        const data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
        hash.update(data);
        done(null, data);
      },
    });
    // pipeline: a failing body fails the upload, a failed upload destroys the body.
    const hashed = pipeline(body, tap, () => undefined);
    await new Upload({ client: this.client, params: { Bucket: this.bucket, Key, Body: hashed, ContentType: options.contentType } }).done();
    return { ...(await this.head(key)), sha256: hash.digest("hex") };
  }

  /**
   * Copies each chunk before asking for the next: lib-storage's `Upload` keeps a part's chunks until
   * the part is sent (up to four parts in flight), so a producer's reused buffer cannot be handed to it.
   */
  async putChunks(key: string, chunks: AsyncIterable<Uint8Array>, options: PutOptions = {}): Promise<ObjectInfo & { sha256: string }> {
    async function* copies(): AsyncGenerator<Buffer> {
      for await (const chunk of chunks) yield Buffer.from(chunk);
    }
    return this.put(key, Readable.from(copies(), { objectMode: false }), options);
  }

  async get(key: string, range?: ByteRange): Promise<GetResult> {
    const Key = this.objectKey(key);
    if (range && (!Number.isInteger(range.start) || range.start < 0 || (range.end !== undefined && range.end < range.start))) {
      throw new ObjectStoreError("range_not_satisfiable", `range ${range.start}-${range.end ?? ""} is not a valid byte range for ${key}`, { key });
    }
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key, ...(range ? { Range: `bytes=${range.start}-${range.end ?? ""}` } : {}) }));
      const bytes = got.ContentLength ?? 0;
      const total = got.ContentRange ? Number(got.ContentRange.split("/")[1]) : bytes;
      return { body: got.Body as Readable, bytes, totalBytes: total, ...(got.ContentType ? { contentType: got.ContentType } : {}) };
    } catch (error) {
      if (statusOf(error) === 416) throw new ObjectStoreError("range_not_satisfiable", `range ${range?.start}-${range?.end ?? ""} is outside ${key}`, { key, cause: error });
      throw this.mapNotFound(error, key);
    }
  }

  async head(key: string): Promise<ObjectInfo> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      const sha256 = head.Metadata?.sha256;
      return { bytes: head.ContentLength ?? 0, etag: head.ETag ?? "", ...(sha256 ? { sha256 } : {}), ...(head.ContentType ? { contentType: head.ContentType } : {}) };
    } catch (error) {
      throw this.mapNotFound(error, key);
    }
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  async deletePrefix(prefix: string): Promise<number> {
    checkDeletePrefix(prefix);
    let deleted = 0;
    let startAfter: string | undefined;
    for (;;) {
      // One listing page holds at most 1000 keys, DeleteObjects' limit per call; the next page starts
      // after the last key of this one, a plain key that stays meaningful once those are deleted.
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix + prefix, StartAfter: startAfter, MaxKeys: 1000 }));
      const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [{ Key: object.Key }] : []));
      if (keys.length === 0) break;
      const result = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }));
      const failed = result.Errors ?? [];
      if (failed.length > 0) {
        throw new Error(`deleting ${prefix} in bucket ${this.bucket} failed for ${failed.length} objects, first ${failed[0].Key}: ${failed[0].Code} ${failed[0].Message}; run the purge again`);
      }
      deleted += keys.length;
      if (!page.IsTruncated) break;
      startAfter = keys[keys.length - 1].Key;
    }
    return deleted;
  }

  async list(prefix: string): Promise<ObjectEntry[]> {
    const entries: ObjectEntry[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix + prefix, ContinuationToken: token }));
      for (const object of page.Contents ?? []) {
        if (object.Key) entries.push({ key: object.Key.slice(this.prefix.length), bytes: object.Size ?? 0 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** A presigned GET that downloads as `fileName`; it does not check the object exists (call head first). */
  async downloadUrl(key: string, options: DownloadUrlOptions): Promise<string> {
    checkExpiry(options.expiresInS);
    const fileName = options.fileName ?? key.slice(key.lastIndexOf("/") + 1);
    const command = new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), ResponseContentDisposition: contentDisposition(fileName) });
    return getSignedUrl(this.client, command, { expiresIn: options.expiresInS, signingDate: this.clock() });
  }

  async beginUpload(key: string, options: BeginUploadOptions = {}): Promise<string> {
    this.objectKey(key);
    return this.spool.begin(key, options.contentType);
  }

  async appendPart(key: string, uploadId: string, partNumber: number, bytes: PartBytes): Promise<void> {
    this.objectKey(key);
    const state = await this.spool.append(key, uploadId, partNumber, bytes);
    const size = UploadSpool.size(state);
    if (size - sentBytes(state) >= this.minPartBytes) await this.sendPart(key, uploadId, state, size);
  }

  async listParts(key: string, uploadId: string): Promise<UploadedPart[]> {
    this.objectKey(key);
    return (await this.spool.load(key, uploadId)).parts;
  }

  async completeUpload(key: string, uploadId: string, parts: number[], options: CompleteUploadOptions = {}): Promise<ObjectInfo & { sha256: string }> {
    const Key = this.objectKey(key);
    const state = await this.spool.load(key, uploadId);
    checkCompleteParts(key, uploadId, state, parts);
    const bytes = UploadSpool.size(state);
    const sha256 = await this.spool.sha256(uploadId, bytes);
    await checkExpected(this.spool, key, uploadId, bytes, sha256, options, () => this.abortRemote(Key, state));
    const contentType = state.contentType;
    let etag: string;
    if (!state.remote) {
      const body = bytes > 0 ? createReadStream(this.spool.dataPath(uploadId), { start: 0, end: bytes - 1 }) : new Uint8Array();
      const sent = await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: body, ContentLength: bytes, ContentType: contentType, Metadata: { sha256 } }));
      etag = sent.ETag ?? "";
    } else {
      if (bytes > sentBytes(state)) await this.sendPart(key, uploadId, state, bytes);
      const remote = state.remote;
      const done = await this.client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.bucket,
          Key,
          UploadId: remote.uploadId,
          MultipartUpload: { Parts: remote.parts.map((part) => ({ PartNumber: part.partNumber, ETag: part.etag })) },
        }),
      );
      etag = done.ETag ?? "";
    }
    await this.spool.remove(uploadId);
    return { bytes, etag, sha256, ...(contentType ? { contentType } : {}) };
  }

  async listUploads(prefix: string): Promise<OpenUpload[]> {
    return this.spool.list(prefix);
  }

  async abortUpload(key: string, uploadId: string): Promise<void> {
    const Key = this.objectKey(key);
    let state: SpoolState;
    try {
      state = await this.spool.load(key, uploadId);
    } catch (error) {
      if (error instanceof ObjectStoreError && error.reason === "upload_not_found") return;
      throw error;
    }
    await this.abortRemote(Key, state);
    await this.spool.remove(uploadId);
  }

  /** Sends data bytes [sent, end) as the next multipart part, opening the multipart upload first if needed. */
  private async sendPart(key: string, uploadId: string, state: SpoolState, end: number): Promise<void> {
    if (!state.remote) {
      const created = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: this.objectKey(key), ContentType: state.contentType }));
      if (!created.UploadId) throw new Error(`bucket ${this.bucket} opened a multipart upload for ${key} without an UploadId`);
      state.remote = { uploadId: created.UploadId, parts: [] };
      await this.spool.save(uploadId, state);
    }
    const remote = state.remote;
    const start = sentBytes(state);
    const PartNumber = remote.parts.length + 1;
    const body = await this.spool.read(uploadId, start, end);
    const sent = await this.client.send(
      new UploadPartCommand({ Bucket: this.bucket, Key: this.objectKey(key), UploadId: remote.uploadId, PartNumber, Body: body, ContentLength: body.length }),
    );
    remote.parts.push({ partNumber: PartNumber, etag: sent.ETag ?? "", endOffset: end });
    await this.spool.save(uploadId, state);
  }

  private async abortRemote(Key: string, state: SpoolState): Promise<void> {
    if (!state.remote) return;
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key, UploadId: state.remote.uploadId }));
    } catch (error) {
      if (statusOf(error) !== 404) throw error; // NoSuchUpload: already gone
    }
  }

  private mapNotFound(error: unknown, key: string): unknown {
    const name = (error as { name?: string }).name;
    if (statusOf(error) === 404 || name === "NoSuchKey" || name === "NotFound") return new ObjectStoreError("not_found", `no object ${key}`, { key, cause: error });
    return error;
  }
}

function sentBytes(state: SpoolState): number {
  return state.remote?.parts.at(-1)?.endOffset ?? 0;
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}
