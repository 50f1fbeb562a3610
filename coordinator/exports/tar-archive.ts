/**
 * Writes an export archive into the artifact store: a POSIX tar (ustar headers, long or non-ASCII
 * names as PAX headers, byte for byte what tar-stream's `pack` writes: `tar-header.ts`) streamed to
 * the store's `putChunks`, whose answer gives its size and SHA-256 (the store hashes what it writes;
 * the archive is hashed once), so the key never holds a partial archive (the store writes an object
 * whole or not at all). Members are streamed one at a time, from local files or from the store: the
 * archive is never held in memory.
 *
 * The archive goes out through one 1 MiB buffer per archive, filled with headers, members' bytes
 * (local files are read straight into it) and padding, handed to the store and filled again once the
 * store asks for the next chunk (`putChunks`' contract). Streaming fresh buffers instead made V8 run a
 * mark-compact every few tens of MB in a coordinator (docs/storage.md, "Export speed").
 */
import { type FileHandle, open, readdir, rm, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { Readable } from "node:stream";
import type { ObjectStore } from "../storage/object-store.js";
import { tarHeader, TAR_BLOCK, TAR_END } from "./tar-header.js";

/**
 * One archive member: a local file; local files concatenated, each deleted once read when
 * `deleteParts` (an RLDS shard written as parts: tfrecord-shards.ts); a stream of known size (e.g. a
 * stored object); or bytes made in memory (manifests, reports).
 */
export type ArchiveEntry =
  | { name: string; path: string }
  | { name: string; parts: readonly string[]; deleteParts: boolean }
  | { name: string; bytes: number; open: () => Promise<Readable> }
  | { name: string; data: Uint8Array };

export interface ArchiveFile {
  bytes: number;
  sha256: string;
}

export const ARCHIVE_CONTENT_TYPE = "application/x-tar";

/** The archive's buffer: 1 MiB, so a member is read in few calls and the store writes few chunks (256 KiB to 16 MiB measured the same). */
const CHUNK_BYTES = 1024 * 1024;

/** Streams `entries` into a tar stored as `key`; returns its size and SHA-256. `signal` aborts it. */
export async function writeTarArchive(objects: ObjectStore, key: string, entries: AsyncIterable<ArchiveEntry> | Iterable<ArchiveEntry>, signal?: AbortSignal): Promise<ArchiveFile> {
  const { bytes, sha256 } = await objects.putChunks(key, tarChunks(entries, new Date(), signal), { contentType: ARCHIVE_CONTENT_TYPE });
  return { bytes, sha256 };
}

/**
 * The tar of `entries` as chunks of one reused buffer: each chunk is overwritten once the next is
 * asked for (`ObjectStore.putChunks`). Every member gets mode 0644 and `mtime`.
 */
export async function* tarChunks(entries: AsyncIterable<ArchiveEntry> | Iterable<ArchiveEntry>, mtime: Date, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let filled = 0;
  /** Copies `bytes` in, yielding the buffer each time it fills. */
  async function* append(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
    for (let at = 0; at < bytes.length; ) {
      const n = Math.min(bytes.length - at, CHUNK_BYTES - filled);
      buffer.set(bytes.subarray(at, at + n), filled);
      filled += n;
      at += n;
      if (filled === CHUNK_BYTES) yield* flush();
    }
  }
  async function* flush(): AsyncGenerator<Uint8Array> {
    const chunk = buffer.subarray(0, filled);
    filled = 0;
    yield chunk;
  }
  /** `size` bytes of `file`, read straight into the archive's buffer: no buffer per read. */
  async function* readInto(file: FileHandle, path: string, size: number, name: string): AsyncGenerator<Uint8Array> {
    for (let position = 0; position < size; ) {
      signal?.throwIfAborted();
      const { bytesRead } = await file.read(buffer, filled, Math.min(size - position, CHUNK_BYTES - filled), position);
      if (bytesRead === 0) throw new Error(`${path} ended at ${position} of its ${size} bytes while it was archived as ${name}; it changed while the export ran`);
      filled += bytesRead;
      position += bytesRead;
      if (filled === CHUNK_BYTES) yield* flush();
    }
  }
  const padding = (size: number) => TAR_END.subarray(0, (TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK);

  for await (const entry of entries) {
    signal?.throwIfAborted();
    if ("data" in entry) {
      yield* append(tarHeader({ name: entry.name, size: entry.data.length, mode: 0o644, mtime }));
      yield* append(entry.data);
      yield* append(padding(entry.data.length));
    } else if ("path" in entry) {
      const file = await open(entry.path, "r");
      try {
        const size = (await file.stat()).size;
        yield* append(tarHeader({ name: entry.name, size, mode: 0o644, mtime }));
        yield* readInto(file, entry.path, size, entry.name);
        yield* append(padding(size));
      } finally {
        await file.close();
      }
    } else if ("parts" in entry) {
      const sizes: number[] = [];
      for (const part of entry.parts) sizes.push((await stat(part)).size);
      const size = sizes.reduce((sum, n) => sum + n, 0);
      yield* append(tarHeader({ name: entry.name, size, mode: 0o644, mtime }));
      for (const [i, part] of entry.parts.entries()) {
        const file = await open(part, "r");
        try {
          yield* readInto(file, part, sizes[i], entry.name);
        } finally {
          await file.close();
        }
        // Its pages and disk space go to what is written next (the archive itself, on a disk store).
        if (entry.deleteParts) await rm(part, { force: true });
      }
      yield* append(padding(size));
    } else {
      yield* append(tarHeader({ name: entry.name, size: entry.bytes, mode: 0o644, mtime }));
      const body = await entry.open();
      let received = 0;
      try {
        for await (const chunk of body as AsyncIterable<Uint8Array>) {
          signal?.throwIfAborted();
          received += chunk.length;
          if (received > entry.bytes) break;
          yield* append(chunk);
        }
      } finally {
        body.destroy();
      }
      if (received !== entry.bytes) throw new Error(`${entry.name} had ${received > entry.bytes ? "more than " : ""}${received} bytes where ${entry.bytes} were expected; the stored file changed while the export ran`);
      yield* append(padding(entry.bytes));
    }
  }
  yield* append(TAR_END);
  if (filled > 0) yield* flush();
}

/** Every file under `dir` as archive entries named `<prefix>/<relative path>`, in sorted order. */
export async function* directoryEntries(dir: string, prefix: string): AsyncGenerator<{ name: string; path: string }> {
  const names = (await readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name))
    .sort();
  for (const path of names) yield { name: `${prefix}/${relative(dir, path).split(sep).join("/")}`, path };
}
