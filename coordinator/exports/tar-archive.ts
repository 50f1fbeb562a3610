/**
 * Writes an export archive: a POSIX tar (long names as PAX headers, by tar-stream) streamed to
 * `<target>.part` while its SHA-256 is computed, fsynced, then renamed to `target`, so the final
 * name never holds a partial archive. Files are streamed from disk, one at a time: the archive is
 * never held in memory.
 */
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import tar from "tar-stream";

/** One archive member: a file on disk or bytes made in memory (manifests, reports). */
export type ArchiveEntry = { name: string; path: string } | { name: string; data: Uint8Array };

export interface ArchiveFile {
  bytes: number;
  sha256: string;
}

/** Streams `entries` into a tar at `target`; returns its size and SHA-256. `signal` aborts it. */
export async function writeTarArchive(target: string, entries: AsyncIterable<ArchiveEntry> | Iterable<ArchiveEntry>, signal?: AbortSignal): Promise<ArchiveFile> {
  const part = `${target}.part`;
  await mkdir(dirname(target), { recursive: true });
  const pack = tar.pack();
  const hash = createHash("sha256");
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const written = pipeline(pack, tap, createWriteStream(part), { signal });
  const mtime = new Date();
  try {
    for await (const entry of entries) {
      signal?.throwIfAborted();
      if ("data" in entry) {
        await new Promise<void>((resolve, reject) => pack.entry({ name: entry.name, size: entry.data.length, mode: 0o644, mtime }, Buffer.from(entry.data), (e) => (e ? reject(e) : resolve())));
        continue;
      }
      const size = (await stat(entry.path)).size;
      const sink = pack.entry({ name: entry.name, size, mode: 0o644, mtime });
      await pipeline(createReadStream(entry.path), sink, { signal });
    }
    pack.finalize();
    await written;
    const handle = await open(part, "r+");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(part, target);
    return { bytes, sha256: hash.digest("hex") };
  } catch (error) {
    pack.destroy();
    // When the file side failed first (disk full, no folder), that is the error worth reporting,
    // not the pack's "already destroyed" that followed from it.
    const fileError = await written.then(() => undefined, (e: unknown) => e);
    await rm(part, { force: true });
    const consequence = (e: unknown) => (e as NodeJS.ErrnoException).code === "ERR_STREAM_PREMATURE_CLOSE" || (e as Error).name === "AbortError";
    throw fileError !== undefined && !consequence(fileError) ? fileError : error;
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
