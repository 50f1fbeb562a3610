/**
 * Downloads a file the API serves (an episode's recording, a report PDF, an export archive) with the
 * bearer key, streaming it to `<path>.part` while hashing it, and renames it to `path` only when its
 * size and SHA-256 are right (`X-Content-SHA256` or the sha256 the caller knows).
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { ApiClient } from "./api-client.js";
import { networkReason } from "./api-client.js";
import { CliError, EXIT, usageError } from "./exit-codes.js";

export interface DownloadOptions {
  /** The SHA-256 (hex) the file must have; default the response's X-Content-SHA256, if any. */
  sha256?: string;
  /** Called as bytes arrive; `total` is the Content-Length when the server sent one. */
  onProgress?: (doneBytes: number, totalBytes: number | undefined) => void;
}

export interface Downloaded {
  path: string;
  bytes: number;
  sha256: string;
  /** Whether the hash was checked against a known value. */
  verified: boolean;
}

const isFileSystemError = (error: unknown) => typeof (error as NodeJS.ErrnoException)?.syscall === "string" && ["open", "write", "mkdir", "rename", "close"].includes((error as NodeJS.ErrnoException).syscall!);

export async function downloadToFile(api: ApiClient, url: string, path: string, options: DownloadOptions = {}): Promise<Downloaded> {
  const response = await api.send("GET", url);
  const lengthHeader = response.headers.get("content-length");
  const total = lengthHeader !== null && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
  const expected = (options.sha256 ?? response.headers.get("x-content-sha256") ?? undefined)?.toLowerCase();
  const part = `${path}.part`;
  const hash = createHash("sha256");
  let done = 0;
  options.onProgress?.(0, total);
  try {
    await mkdir(dirname(path), { recursive: true });
    await pipeline(
      Readable.fromWeb(response.body! as WebReadableStream<Uint8Array>),
      new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          hash.update(chunk);
          done += chunk.length;
          options.onProgress?.(done, total);
          callback(null, chunk);
        },
      }),
      createWriteStream(part),
    );
  } catch (error) {
    await rm(part, { force: true });
    if (isFileSystemError(error)) throw usageError(`cannot write ${path}: ${(error as Error).message}`);
    throw new CliError(EXIT.api, `the download of ${url} broke after ${done} bytes: ${networkReason(error)}; try again`, { unreachable: true, cause: error });
  }
  const sha256 = hash.digest("hex");
  const fail = async (why: string) => {
    await rm(part, { force: true });
    return new CliError(EXIT.api, `the download of ${url} ${why}; nothing was written to ${path}; try again`);
  };
  if (total !== undefined && done !== total) throw await fail(`ended after ${done} of ${total} bytes`);
  if (expected !== undefined && sha256 !== expected) throw await fail(`does not match its SHA-256: expected ${expected}, got ${sha256}`);
  try {
    await rename(part, path);
  } catch (error) {
    await rm(part, { force: true });
    throw usageError(`cannot write ${path}: ${(error as Error).message}`);
  }
  return { path, bytes: done, sha256, verified: expected !== undefined };
}
