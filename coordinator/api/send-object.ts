/**
 * Serving a file from the artifact store (episode recordings, export archives). When the store can
 * make a short-lived presigned URL (S3), the answer is a 302 to it and the client downloads straight
 * from the bucket, without credentials; otherwise (disk) the bytes are streamed from the store, with
 * a single `Range` honoured (206 and `Content-Range`; a range past the end is 416 with the error
 * envelope and a `Content-Range` naming the size, `bytes *\/<size>`). Either way the
 * response carries `X-Content-SHA256`, the hash recorded when the file was stored.
 */
import { createHash } from "node:crypto";
import { pipeline } from "node:stream/promises";
import type { Request, Response } from "express";
import { AssayError } from "../errors/assay-error.js";
import { contentDisposition, isObjectNotFound, type ObjectStore } from "../storage/object-store.js";

/** How long a presigned download URL works: long enough to start the download, short enough not to be worth passing around. */
export const DOWNLOAD_URL_EXPIRES_S = 300;

export interface ServedFile {
  key: string;
  /** The name a browser saves it under. */
  fileName: string;
  contentType: string;
  sha256: string;
  /** The error when the store has no object for a file its row says exists. */
  missing: () => AssayError;
}

export async function sendObject(objects: ObjectStore, req: Request, res: Response, file: ServedFile): Promise<void> {
  let size: number;
  try {
    size = (await objects.head(file.key)).bytes;
  } catch (error) {
    throw isObjectNotFound(error) ? file.missing() : error;
  }
  res.set({ "X-Content-SHA256": file.sha256, "Cache-Control": "private, no-store" });
  const url = await objects.downloadUrl(file.key, { expiresInS: DOWNLOAD_URL_EXPIRES_S, fileName: file.fileName });
  if (url !== null) {
    res.redirect(302, url);
    return;
  }
  // -1: unsatisfiable; -2 (malformed), several ranges or none: the whole file.
  const ranges = size > 0 ? req.range(size, { combine: true }) : undefined;
  if (ranges === -1) {
    // Set before throwing: the error handler keeps it on the envelope.
    res.set({ "Content-Range": `bytes */${size}`, "Accept-Ranges": "bytes" });
    throw new AssayError("contract_validation_failed", `Range ${JSON.stringify(String(req.headers.range).slice(0, 80))} starts past the end of this ${size}-byte file; ask for bytes 0-${size - 1} or less`, { status: 416 });
  }
  res.set({ "Content-Type": file.contentType, "Content-Disposition": contentDisposition(file.fileName), "Accept-Ranges": "bytes" });
  const range = Array.isArray(ranges) && ranges.length === 1 ? ranges[0] : undefined;
  const got = await objects.get(file.key, range ? { start: range.start, end: range.end } : undefined);
  res.status(range ? 206 : 200).set("Content-Length", String(got.bytes));
  if (range) res.set("Content-Range", `bytes ${range.start}-${range.start + got.bytes - 1}/${got.totalBytes}`);
  await pipeline(got.body, res);
}

/**
 * The `X-Content-SHA256` header of a file made on request (a paper table, figure or citation, a PDF
 * report), so a client checks every download the same way, stored or generated.
 */
export function contentSha256(body: string | Buffer): Record<string, string> {
  return { "X-Content-SHA256": createHash("sha256").update(body).digest("hex") };
}
