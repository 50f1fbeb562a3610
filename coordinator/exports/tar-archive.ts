/**
 * Writes an export archive into the artifact store: a POSIX tar (long names as PAX headers, by
 * tar-stream) streamed to the store's `put`, whose answer gives its size and SHA-256 (the store hashes
 * what it writes; the archive is hashed once), so the key never holds a partial archive (the store writes an object whole or not at all). Members are streamed one at a
 * time, from local files or from the store: the archive is never held in memory.
 */
import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { PassThrough, pipeline as pipe, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import tar from "tar-stream";
import type { ObjectStore } from "../storage/object-store.js";

/** One archive member: a local file, a stream of known size (e.g. a stored object), or bytes made in memory (manifests, reports). */
export type ArchiveEntry =
  | { name: string; path: string }
  | { name: string; bytes: number; open: () => Promise<Readable> }
  | { name: string; data: Uint8Array };

export interface ArchiveFile {
  bytes: number;
  sha256: string;
}

export const ARCHIVE_CONTENT_TYPE = "application/x-tar";

/** Local files are read into the archive 1 MiB at a time (not 64 KiB): fewer reads and fewer trips through the tar and hash streams. */
const READ_CHUNK_BYTES = 1024 * 1024;

/** Streams `entries` into a tar stored as `key`; returns its size and SHA-256. `signal` aborts it. */
export async function writeTarArchive(objects: ObjectStore, key: string, entries: AsyncIterable<ArchiveEntry> | Iterable<ArchiveEntry>, signal?: AbortSignal): Promise<ArchiveFile> {
  const pack = tar.pack();
  // tar-stream's pack is a streamx stream: a PassThrough makes it the Node stream the store takes. The
  // pack's failure reaches the store through it; the store's failure stops the pack, so no member
  // waits on a reader that is gone.
  const stored = objects.put(key, pipe(pack, new PassThrough(), () => undefined), { contentType: ARCHIVE_CONTENT_TYPE });
  stored.catch(() => pack.destroy());
  const mtime = new Date();
  try {
    for await (const entry of entries) {
      signal?.throwIfAborted();
      if ("data" in entry) {
        await new Promise<void>((resolve, reject) => pack.entry({ name: entry.name, size: entry.data.length, mode: 0o644, mtime }, Buffer.from(entry.data), (e) => (e ? reject(e) : resolve())));
      } else if ("path" in entry) {
        const size = (await stat(entry.path)).size;
        await pipeline(createReadStream(entry.path, { highWaterMark: READ_CHUNK_BYTES }), pack.entry({ name: entry.name, size, mode: 0o644, mtime }), { signal });
      } else {
        const body = await entry.open();
        await pipeline(body, pack.entry({ name: entry.name, size: entry.bytes, mode: 0o644, mtime }), { signal });
      }
    }
    pack.finalize();
    const { bytes, sha256 } = await stored;
    return { bytes, sha256 };
  } catch (error) {
    pack.destroy();
    // When the store failed first (disk full, bucket unreachable), that is the error worth
    // reporting, not the pack's "already destroyed" that followed from it.
    const storeError = await stored.then(() => undefined, (e: unknown) => e);
    const consequence = (e: unknown) => (e as NodeJS.ErrnoException).code === "ERR_STREAM_PREMATURE_CLOSE" || (e as Error).name === "AbortError";
    throw storeError !== undefined && !consequence(storeError) ? storeError : error;
  }
}

/** Every file under `dir` as archive entries named `<prefix>/<relative path>`, in sorted order. */
export async function* directoryEntries(dir: string, prefix: string): AsyncGenerator<ArchiveEntry> {
  const names = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name))
    .sort();
  for (const path of names) yield { name: `${prefix}/${relative(dir, path).split(sep).join("/")}`, path };
}
