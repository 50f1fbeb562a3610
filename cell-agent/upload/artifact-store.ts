/**
 * The local upload queue: `<dataDir>/outbox/` holds each finished artifact next to a JSON sidecar
 * (`<file>.json`) with its ArtifactRef and the seq of the message that announced it. The directory
 * is the queue, so it survives agent restarts; a file leaves only once the coordinator has it.
 * A file the coordinator permanently refuses is set aside (moved, never deleted) to
 * `<dataDir>/rejected/` with its sidecar, which then also says why.
 */
import { createHash } from "node:crypto";
import { createReadStream, closeSync, existsSync, fsyncSync, openSync, writeSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { ArtifactRef } from "../../protocol/gen/cell.js";

export interface QueuedArtifact {
  ref: ArtifactRef;
  /** Absolute path of the artifact file. */
  path: string;
  /** Seq of the EpisodeFinished that lists it; uploaded once the coordinator acked that seq. */
  announcedSeq: number;
}

export async function sha256Of(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

export class ArtifactStore {
  /** Where refused artifacts are set aside: `rejected/` next to the queue (`<dataDir>/rejected`). */
  readonly rejectedDir: string;

  constructor(readonly dir: string) {
    this.rejectedDir = join(dirname(dir), "rejected");
  }

  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
  }

  /**
   * Moves a finished file into the queue and describes it (sidecar written by `announce`). `kind`:
   * "mcap", "video" (the primary camera's video) or "video:<camera>" (another camera's).
   */
  async take(episodeId: string, kind: string, source: string): Promise<{ ref: ArtifactRef; path: string }> {
    const fileName = basename(source);
    const path = join(this.dir, fileName);
    await rename(source, path);
    const bytes = (await stat(path)).size;
    return { ref: { episodeId, kind, fileName, bytes, sha256: await sha256Of(path) }, path };
  }

  /** Writes the sidecar (fsynced). Synchronous so the caller can enqueue right after without interleaving. */
  announce(artifact: QueuedArtifact): void {
    const fd = openSync(`${artifact.path}.json`, "w");
    writeSync(fd, JSON.stringify({ ref: artifact.ref, announced_seq: artifact.announcedSeq }));
    fsyncSync(fd);
    closeSync(fd);
  }

  /** Everything queued, oldest announcement first. Files without a sidecar are not yet announced. */
  async list(): Promise<QueuedArtifact[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const queued: QueuedArtifact[] = [];
    for (const name of names.filter((n) => n.endsWith(".json"))) {
      try {
        const sidecar = JSON.parse(await readFile(join(this.dir, name), "utf8")) as { ref: ArtifactRef; announced_seq: number };
        queued.push({ ref: sidecar.ref, path: join(this.dir, name.slice(0, -".json".length)), announcedSeq: sidecar.announced_seq });
      } catch {
        // a torn sidecar from a crash while announcing: the message was never enqueued either
      }
    }
    return queued.sort((a, b) => a.announcedSeq - b.announcedSeq || a.ref.fileName.localeCompare(b.ref.fileName));
  }

  /**
   * Moves a queued artifact and its sidecar out of the queue into `rejectedDir` (a name already
   * taken there gets `-2`, `-3`, ...); the sidecar there also records `why`. Nothing is deleted.
   * Returns the artifact's new path. Safe to repeat after a crash half-way (file moved, sidecar not).
   */
  async setAside(artifact: QueuedArtifact, why: string): Promise<string> {
    await mkdir(this.rejectedDir, { recursive: true });
    const name = basename(artifact.path);
    // A file already moved by an earlier, interrupted set-aside is the one without a sidecar there.
    const moved = !existsSync(artifact.path);
    let target = join(this.rejectedDir, name);
    for (let n = 2; existsSync(`${target}.json`) || (!moved && existsSync(target)); n++) target = join(this.rejectedDir, `${name}-${n}`);
    if (!moved) await rename(artifact.path, target);
    const fd = openSync(`${target}.json`, "w");
    writeSync(fd, JSON.stringify({ ref: artifact.ref, announced_seq: artifact.announcedSeq, rejected: { why, at: new Date().toISOString() } }));
    fsyncSync(fd);
    closeSync(fd);
    await rm(`${artifact.path}.json`, { force: true });
    return target;
  }

  async remove(artifact: QueuedArtifact): Promise<void> {
    await rm(artifact.path, { force: true });
    await rm(`${artifact.path}.json`, { force: true });
  }
}
