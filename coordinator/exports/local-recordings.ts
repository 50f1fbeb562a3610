/**
 * Recordings as local files, for the export writers that read an MCAP at random (the training
 * formats, calibration records). On a disk store they are the store's own files, read in place;
 * from a bucket each is fetched into the export's work folder, which costs local disk equal to the
 * recordings fetched until the job removes the folder (or `releaseLocalFile` removes one copy).
 */
import { createWriteStream } from "node:fs";
import { mkdir, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { nextTurn } from "../async/next-turn.js";
import { DiskStore } from "../storage/disk-store.js";
import type { ObjectStore } from "../storage/object-store.js";
import type { ExportEpisode, StoredFile, StoredObject } from "./export-input.js";

/** `file` as a local file: the disk store's own, or a copy under `dir` checked against the stored size. */
export async function localFile(objects: ObjectStore, file: StoredObject, dir: string): Promise<StoredFile> {
  const local = { fileName: file.fileName, bytes: file.bytes, sha256: file.sha256 };
  if (objects instanceof DiskStore) return { path: objects.pathOf(file.key), ...local };
  const path = join(dir, ...file.key.split("/"));
  await mkdir(dirname(path), { recursive: true });
  await pipeline((await objects.get(file.key)).body, createWriteStream(path));
  const size = (await stat(path)).size;
  if (size !== file.bytes) throw new Error(`${file.key} has ${size} bytes in the artifact store but ${file.bytes} were stored; the recording changed after upload`);
  return { path, ...local };
}

/** Deletes a copy `localFile` fetched (never a disk store's own file). */
export async function releaseLocalFile(objects: ObjectStore, file: StoredFile): Promise<void> {
  if (!(objects instanceof DiskStore)) await rm(file.path, { force: true });
}

/** Episodes between two turns of the event loop: on a disk store nothing here awaits I/O, and 10,000 episodes held the loop 190 ms of CPU. */
const EPISODES_PER_TURN = 100;

/** The episodes with their MCAPs, and with `videos` every camera's video, as local files under `dir`. */
export async function withLocalRecordings(objects: ObjectStore, episodes: readonly ExportEpisode<StoredObject>[], dir: string, options: { videos: boolean }): Promise<ExportEpisode[]> {
  const local: ExportEpisode[] = [];
  for (const e of episodes) {
    if (local.length % EPISODES_PER_TURN === EPISODES_PER_TURN - 1) await nextTurn();
    const videos: Record<string, StoredFile> = {};
    if (options.videos) for (const [camera, video] of Object.entries(e.videos)) videos[camera] = await localFile(objects, video, dir);
    local.push({ ...e, mcap: await localFile(objects, e.mcap, dir), videos });
  }
  return local;
}
