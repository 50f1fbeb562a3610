/**
 * The training formats' dataset writers behind one signature: each writes its dataset tree under
 * `workDir` and returns the archive's members (the tree under its top folder, in path order), as
 * plain records a worker thread can post back (dataset-writer.ts runs them there).
 *
 * RLDS's shards are written as parts the archive deletes as it reads them (write-rlds.ts
 * `shardPartBytes`): the archive's members and bytes are those of the dataset folder's.
 */
import { join } from "node:path";
import type { ExportEpisode, ExportProgress, ExportRun } from "./export-input.js";
import { writeLeRobotDataset } from "./lerobot/write-lerobot.js";
import { ARCHIVE_SHARD_PART_BYTES, writeRldsDataset } from "./rlds/write-rlds.js";
import { directoryEntries, type ArchiveEntry } from "./tar-archive.js";

export type TrainingFormat = "lerobot" | "rlds";

/** An archive member a dataset writer names: a file, or a file written in parts. */
export type DatasetEntry = Extract<ArchiveEntry, { path: string } | { parts: readonly string[] }>;

export async function writeTrainingDataset(format: TrainingFormat, run: ExportRun, episodes: ExportEpisode[], workDir: string, onProgress: ExportProgress): Promise<DatasetEntry[]> {
  if (format === "rlds") {
    const written = await writeRldsDataset(run, episodes, workDir, { onProgress, shardPartBytes: ARCHIVE_SHARD_PART_BYTES });
    // As directoryEntries names and orders them: "<top folder>/<path>", sorted by path.
    const shards = new Map(written.shards.map((name, i) => [name, written.shardParts[i]]));
    return [...written.files].sort().map((name): DatasetEntry => {
      const parts = shards.get(name);
      return parts ? { name, parts: parts.map((part) => join(workDir, part)), deleteParts: true } : { name, path: join(workDir, name) };
    });
  }
  const root = `${run.runId}_lerobot`;
  await writeLeRobotDataset(run, episodes, join(workDir, root), { onProgress });
  const entries: DatasetEntry[] = [];
  for await (const entry of directoryEntries(join(workDir, root), root)) entries.push(entry);
  return entries;
}
