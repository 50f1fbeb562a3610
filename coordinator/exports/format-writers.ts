/**
 * The training formats' dataset writers behind one signature: each writes its dataset tree under
 * `workDir` and returns the tree's top folder (the archive's root).
 */
import type { ExportEpisode, ExportProgress, ExportRun } from "./export-input.js";
import { DATASET_NAME } from "./rlds/dataset-info.js";
import { writeRldsDataset } from "./rlds/write-rlds.js";

export type TrainingFormat = "lerobot" | "rlds";

export async function writeTrainingDataset(format: TrainingFormat, run: ExportRun, episodes: ExportEpisode[], workDir: string, onProgress: ExportProgress): Promise<string> {
  if (format === "rlds") {
    await writeRldsDataset(run, episodes, workDir, { onProgress });
    return DATASET_NAME;
  }
  throw new Error(`${format} is not wired yet (${run.runId}, ${episodes.length}, ${workDir})`);
}
