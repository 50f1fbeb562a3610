/**
 * The artifact store on disk. An upload grows `${dir}/.incoming/<episode_id>.<kind>.part`; once
 * its size and SHA-256 match what the agent announced, it is renamed to
 * `${dir}/<run_id>/<episode_id>/<file_name>`, the path the API serves from. Writes are fsynced
 * before a byte count is reported back, and the directory after a rename, so a reported offset
 * or a `complete: true` survives a power cut. Files the coordinator derives itself (ground truth)
 * go to the same place through `writeDerived`.
 */
import { createHash } from "node:crypto";
import { closeSync, createReadStream, fstatSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { basename, join } from "node:path";
import { LinkError } from "../errors/link-errors.js";

/** What the store needs of an artifact row. */
export interface StoredArtifactRef {
  runId: string;
  episodeId: string;
  kind: string;
  fileName: string;
  bytes: number;
  sha256: string;
}

/** True when `fileName` is a plain file name that cannot escape its episode directory. */
export function isSafeFileName(fileName: string): boolean {
  return fileName.length > 0 && fileName.length <= 200 && basename(fileName) === fileName && fileName !== "." && fileName !== ".." && !fileName.includes("\\") && !fileName.includes("\0");
}

export class ArtifactStore {
  readonly dir: string;
  private readonly incoming: string;

  constructor(dir: string) {
    this.dir = dir;
    this.incoming = join(dir, ".incoming");
    mkdirSync(this.incoming, { recursive: true });
  }

  partPath(episodeId: string, kind: string): string {
    return join(this.incoming, `${episodeId}.${kind}.part`);
  }

  finalPath(runId: string, episodeId: string, fileName: string): string {
    if (!isSafeFileName(fileName)) throw new LinkError("bad_message", `artifact file_name must be a plain file name; got ${JSON.stringify(fileName)}`);
    return join(this.dir, runId, episodeId, fileName);
  }

  /** Bytes already received for this artifact (0 when no upload started). */
  receivedBytes(episodeId: string, kind: string): number {
    try {
      return statSync(this.partPath(episodeId, kind)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0;
      throw error;
    }
  }

  /**
   * Appends `data` at `offset`, which must be the current .part size; returns the new size.
   * NOTE: call sync() before reporting the size to the agent.
   */
  append(episodeId: string, kind: string, offset: number, data: Uint8Array): number {
    const fd = openSync(this.partPath(episodeId, kind), "a");
    try {
      const size = fstatSync(fd).size;
      if (offset !== size) throw new LinkError("offset_mismatch", `resume from ${size}`);
      let written = 0;
      while (written < data.length) written += writeSync(fd, data, written, data.length - written);
      return size + data.length;
    } finally {
      closeSync(fd);
    }
  }

  /** fsyncs the .part file so its reported size is durable. */
  sync(episodeId: string, kind: string): void {
    const path = this.partPath(episodeId, kind);
    let fd: number;
    try {
      fd = openSync(path, "r+");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  discard(episodeId: string, kind: string): void {
    rmSync(this.partPath(episodeId, kind), { force: true });
  }

  /**
   * Checks the finished .part against the announced size and SHA-256 and moves it into place.
   * On a mismatch the .part is deleted (the agent uploads again from 0) and DATA_LOSS is thrown.
   */
  async commit(ref: StoredArtifactRef): Promise<string> {
    const part = this.partPath(ref.episodeId, ref.kind);
    const target = this.finalPath(ref.runId, ref.episodeId, ref.fileName);
    closeSync(openSync(part, "a")); // an empty artifact arrives as one empty last chunk
    const size = this.receivedBytes(ref.episodeId, ref.kind);
    if (size !== ref.bytes) {
      this.discard(ref.episodeId, ref.kind);
      throw new LinkError("artifact_corrupt", `${ref.kind} of episode ${ref.episodeId} has ${size} bytes, announced ${ref.bytes}; upload it again from 0`);
    }
    const digest = await sha256File(part);
    if (digest !== ref.sha256.toLowerCase()) {
      this.discard(ref.episodeId, ref.kind);
      throw new LinkError("artifact_corrupt", `${ref.kind} of episode ${ref.episodeId} hashes to ${digest}, announced ${ref.sha256}; upload it again from 0`);
    }
    const directory = join(this.dir, ref.runId, ref.episodeId);
    mkdirSync(directory, { recursive: true });
    this.sync(ref.episodeId, ref.kind);
    renameSync(part, target);
    syncDirectory(directory);
    syncDirectory(this.incoming);
    return target;
  }

  /**
   * Stores a file the coordinator made itself (a derived artifact such as ground truth) at its final
   * path: written to `.incoming`, fsynced and renamed, so the final name never holds a partial file.
   * Returns the path and the file's size and SHA-256 for its artifacts row.
   */
  writeDerived(ref: { runId: string; episodeId: string; kind: string; fileName: string }, data: Uint8Array): { path: string; bytes: number; sha256: string } {
    const target = this.finalPath(ref.runId, ref.episodeId, ref.fileName);
    const part = this.partPath(ref.episodeId, ref.kind);
    const fd = openSync(part, "w");
    try {
      let written = 0;
      while (written < data.length) written += writeSync(fd, data, written, data.length - written);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    const directory = join(this.dir, ref.runId, ref.episodeId);
    mkdirSync(directory, { recursive: true });
    renameSync(part, target);
    syncDirectory(directory);
    return { path: target, bytes: data.length, sha256: createHash("sha256").update(data).digest("hex") };
  }
}

function syncDirectory(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}
