/**
 * The training formats' dataset writers behind one signature: each writes its dataset tree under
 * `workDir` and returns the tree's top folder (the archive's root).
 */
import { join } from "node:path";
import type { ExportEpisode, ExportProgress, ExportRun } from "./export-input.js";
import { writeLeRobotDataset } from "./lerobot/write-lerobot.js";
import { DATASET_NAME } from "./rlds/dataset-info.js";
import { writeRldsDataset } from "./rlds/write-rlds.js";

export type TrainingFormat = "lerobot" | "rlds";

export async function writeTrainingDataset(format: TrainingFormat, run: ExportRun, episodes: ExportEpisode[], workDir: string, onProgress: ExportProgress): Promise<string> {
  if (format === "rlds") {
    await writeRldsDataset(run, episodes, workDir, { onProgress });
    return DATASET_NAME;
  }
  const root = `${run.runId}_lerobot`;
  await writeLeRobotDataset(run, episodes, join(workDir, root), { onProgress });
  return root;
}
