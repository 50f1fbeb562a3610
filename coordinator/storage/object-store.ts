/**
 * Where the coordinator keeps large files (recordings, videos, reports, exports, models): one
 * interface over a directory on disk (`DiskStore`) and an S3-compatible bucket (`S3Store`).
 *
 * Keys are `/`-separated relative paths (`runs/<run>/<episode>/video.mp4`). The same key means the
 * same object in both stores, so a reader never needs to know which one is configured.
 *
 * Large uploads that arrive in chunks over minutes (the cells' 256 KiB artifact chunks) go through
 * the resumable writer: `beginUpload`, `appendPart` for each chunk, `completeUpload`. Its state lives
 * in a spool directory on local disk (see upload-spool.ts), so an upload survives a coordinator
 * restart: a new store over the same directories continues it with the same `uploadId`.
 */
import type { Readable } from "node:stream";

/** A part's bytes: one array, or its chunks in order. */
export type PartBytes = Uint8Array | readonly Uint8Array[];

/** A part's chunks, whichever way it was given. */
export function partChunks(bytes: PartBytes): readonly Uint8Array[] {
  return bytes instanceof Uint8Array ? [bytes] : bytes;
}

/** An inclusive byte range, as in HTTP `Range: bytes=start-end`; `end` defaults to the last byte. */
export interface ByteRange {
  start: number;
  end?: number;
}

export interface PutOptions {
  /** Stored with the object and returned by get/head; default none (served as application/octet-stream). */
  contentType?: string;
}

export interface GetResult {
  body: Readable;
  /** Bytes in `body` (the range's length when a range was asked for). */
  bytes: number;
  /** The whole object's size, for `Content-Range`. */
  totalBytes: number;
  contentType?: string;
}

export interface ObjectInfo {
  bytes: number;
  /** Changes whenever the content changes; opaque, for `ETag`. */
  etag: string;
  /** Hex SHA-256 of the content, when the store recorded one (see each `put`/`completeUpload`). */
  sha256?: string;
  contentType?: string;
}

export interface ObjectEntry {
  key: string;
  bytes: number;
}

export interface DownloadUrlOptions {
  /** How long the URL works, 1..604800 (S3's limit of a week). */
  expiresInS: number;
  /** The name a browser saves the file under (`Content-Disposition: attachment`); default the key's last segment. */
  fileName?: string;
}

/** One part of a resumable upload, as the store recorded it. */
export interface UploadedPart {
  partNumber: number;
  bytes: number;
  sha256: string;
}

export interface BeginUploadOptions extends PutOptions {}

/** An upload begun and neither completed nor aborted. */
export interface OpenUpload {
  key: string;
  uploadId: string;
  /** Bytes recorded so far (the sum of its parts). */
  bytes: number;
}

export interface CompleteUploadOptions {
  /** When given, the upload is checked before the object appears; on a mismatch it is aborted and `integrity` is thrown. */
  expect?: { bytes?: number; sha256?: string };
}

/** The resumable multipart writer; see the file comment. */
export interface ResumableUploads {
  /** Starts an upload that becomes `key` on `completeUpload`; returns its id (opaque, URL-safe). */
  beginUpload(key: string, options?: BeginUploadOptions): Promise<string>;
  /**
   * Appends part `partNumber` (1, 2, 3, ... in order; any size, the last may be empty). Once it
   * resolves the part is durable. Sending a part again with the same bytes is a no-op, so a caller
   * that did not see the answer can retry; a different part under a recorded number is `part_conflict`,
   * a gap is `part_out_of_order` (the message names the expected number). `bytes` may be the part's
   * chunks in order (written one after the other, never joined in memory).
   */
  appendPart(key: string, uploadId: string, partNumber: number, bytes: PartBytes): Promise<void>;
  /** The parts recorded so far, in order: where a caller resumes after a restart. */
  listParts(key: string, uploadId: string): Promise<UploadedPart[]>;
  /**
   * Makes the upload visible as `key`. `parts` are the part numbers the caller sent, which must be
   * exactly the recorded ones. Returns the object's info, including its SHA-256.
   */
  completeUpload(key: string, uploadId: string, parts: number[], options?: CompleteUploadOptions): Promise<ObjectInfo & { sha256: string }>;
  /** Drops the upload and everything it buffered; an unknown id is not an error. */
  abortUpload(key: string, uploadId: string): Promise<void>;
  /**
   * The open uploads whose key starts with `prefix` (a plain string prefix), sorted by key. Only
   * those of this store's local spool: an upload another coordinator began is not listed (its
   * spool is on that machine).
   */
  listUploads(prefix: string): Promise<OpenUpload[]>;
}

export interface ObjectStore extends ResumableUploads {
  /** "disk" or "s3", for logs and /health. */
  readonly kind: "disk" | "s3";
  /**
   * Writes the whole object at once; readers see the old object or the new one, never a part. Returns
   * its info with the SHA-256 of what was written (computed while it streamed, so a caller never
   * hashes the same bytes again).
   */
  put(key: string, body: Readable | Uint8Array, options?: PutOptions): Promise<ObjectInfo & { sha256: string }>;
  /**
   * `put` for a producer that reuses its buffers: writes `chunks` whole as `key`, like `put`, but each
   * chunk is valid only until the store asks for the next one (calls `next()` again), so the store has
   * hashed and written it, or copied it, by then. The producer may then overwrite the chunk's bytes:
   * an archive streamed through a few fixed buffers allocates no new memory per chunk (a fresh 1 MiB
   * buffer per read made V8 run a mark-compact every few tens of MB; docs/storage.md "Export speed").
   * A failure of the iterator fails the write; a failed write ends the iterator (`return()`).
   */
  putChunks(key: string, chunks: AsyncIterable<Uint8Array>, options?: PutOptions): Promise<ObjectInfo & { sha256: string }>;
  /** Throws `not_found` when there is no such object, `range_not_satisfiable` when `range` starts past its end. */
  get(key: string, range?: ByteRange): Promise<GetResult>;
  /** Throws `not_found` when there is no such object. */
  head(key: string): Promise<ObjectInfo>;
  /** Deletes one object; a missing one is not an error (purge may run twice). */
  delete(key: string): Promise<void>;
  /** Deletes every object under `prefix`, which must end in `/` so `runs/r1/` never takes `runs/r10/`. Returns how many. */
  deletePrefix(prefix: string): Promise<number>;
  /** Every object whose key starts with `prefix` (a plain string prefix, as in S3), sorted by key. */
  list(prefix: string): Promise<ObjectEntry[]>;
  /** A short-lived URL that downloads the object without credentials, or null when the store cannot make one (disk): then stream `get`. */
  downloadUrl(key: string, options: DownloadUrlOptions): Promise<string | null>;
}

export type ObjectStoreErrorReason =
  | "not_found"
  | "invalid_key"
  | "range_not_satisfiable"
  | "upload_not_found"
  | "part_out_of_order"
  | "part_conflict"
  | "integrity"
  | "invalid_config";

/**
 * The one error the stores throw on purpose. Callers branch on `reason` (a `not_found` becomes the
 * API's not_found, an `integrity` the link's artifact_corrupt); anything else is an I/O failure.
 */
export class ObjectStoreError extends Error {
  readonly reason: ObjectStoreErrorReason;
  readonly key?: string;

  constructor(reason: ObjectStoreErrorReason, message: string, options: { key?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "ObjectStoreError";
    this.reason = reason;
    this.key = options.key;
  }
}

export function isObjectNotFound(error: unknown): boolean {
  return error instanceof ObjectStoreError && error.reason === "not_found";
}

/** Top-level folder the disk store keeps its own files in (temp files, metadata, upload spools); no key may start with it. */
export const RESERVED_SEGMENT = ".objstore";

/**
 * Throws `invalid_key` unless `key` is a relative `/`-separated path with no empty, `.` or `..`
 * segment, no backslash or NUL, at most 1024 bytes, not under the reserved folder.
 */
export function checkKey(key: string): void {
  const fail = (why: string): never => {
    throw new ObjectStoreError("invalid_key", `object key ${why}; got ${JSON.stringify(key)}`, { key });
  };
  if (typeof key !== "string" || key.length === 0) fail("must be a non-empty relative path");
  if (Buffer.byteLength(key) > 1024) fail("must be at most 1024 bytes");
  if (key.includes("\\") || key.includes("\0")) fail("must not contain a backslash or NUL");
  if (key.startsWith("/")) fail("must be relative (no leading /)");
  const segments = key.split("/");
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) fail("must not contain empty, . or .. segments");
  if (segments[0] === RESERVED_SEGMENT) fail(`must not start with ${RESERVED_SEGMENT}/, which the store keeps for itself`);
}

/** Throws `invalid_key` unless `prefix` is usable with deletePrefix (non-empty, ends in `/`, and a valid key before that). */
export function checkDeletePrefix(prefix: string): void {
  if (!prefix.endsWith("/") || prefix.length < 2) {
    throw new ObjectStoreError("invalid_key", `deletePrefix needs a folder prefix ending in "/" (e.g. "runs/r1/"); got ${JSON.stringify(prefix)}`, { key: prefix });
  }
  checkKey(prefix.slice(0, -1));
}

/** Throws `invalid_config` unless `expiresInS` is a whole number of seconds in 1..604800. */
export function checkExpiry(expiresInS: number): void {
  if (!Number.isInteger(expiresInS) || expiresInS < 1 || expiresInS > 604800) {
    throw new ObjectStoreError("invalid_config", `expiresInS must be a whole number of seconds from 1 to 604800 (a week); got ${expiresInS}`);
  }
}

/** `attachment` with an ASCII fallback name and the exact UTF-8 one (RFC 6266). */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
