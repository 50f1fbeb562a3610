/**
 * `meta/info.json`: LeRobot's `DatasetInfo.to_dict()` (fields in dataclass order, `tools` left
 * out as LeRobot does when unset) plus Assay's run record under `assay`. `DatasetInfo.from_dict`
 * ignores keys it does not know (it logs "Unknown fields in DatasetInfo: ['assay']"), so the extra
 * key does not stop LeRobot from loading the dataset; LeRobot drops it if it rewrites info.json.
 */
import type { ExportRun } from "../export-input.js";
import { CODEBASE_VERSION, DEFAULT_DATA_PATH, DEFAULT_VIDEO_PATH } from "./lerobot-layout.js";
import type { LeRobotFeatures } from "./lerobot-features.js";

export interface DatasetTotals {
  episodes: number;
  frames: number;
  tasks: number;
}

export interface ShardLimits {
  chunksSize: number;
  dataFileSizeMb: number;
  videoFileSizeMb: number;
}

/** LeRobot's `robot_type`: the model of a `model@firmware` robot pin (`so101@3.11` -> `so101`). */
export function robotType(robot: string): string {
  const at = robot.indexOf("@");
  return at < 0 ? robot : robot.slice(0, at);
}

/** The run's record kept with the dataset. */
export function assayRecord(run: ExportRun): Record<string, unknown> {
  return {
    run_id: run.runId,
    kind: run.kind,
    resolved_pins: run.resolvedPins,
    created: run.created,
    completed: run.completed,
    source: "Assay evaluation run",
  };
}

/** Per video feature: episodes copied from the cell's video, episodes encoded, and why they were encoded. */
export type VideoSources = Map<string, { copied: number; encoded: number; encodedBecause: Record<string, number> }>;

export function datasetInfo(run: ExportRun, features: LeRobotFeatures, totals: DatasetTotals, limits: ShardLimits, videoSources: VideoSources = new Map()): Record<string, unknown> {
  const hasVideo = Object.values(features).some((feature) => feature.dtype === "video");
  return {
    codebase_version: CODEBASE_VERSION,
    fps: run.controlRateHz,
    features,
    total_episodes: totals.episodes,
    total_frames: totals.frames,
    total_tasks: totals.tasks,
    chunks_size: limits.chunksSize,
    data_files_size_in_mb: limits.dataFileSizeMb,
    video_files_size_in_mb: limits.videoFileSizeMb,
    data_path: DEFAULT_DATA_PATH,
    video_path: hasVideo ? DEFAULT_VIDEO_PATH : null,
    robot_type: robotType(run.robot),
    splits: { train: `0:${totals.episodes}` },
    assay: {
      ...assayRecord(run),
      // Which episodes' videos are the cells' own, copied without re-encoding, and which were encoded here (and why).
      videos: Object.fromEntries([...videoSources].map(([key, s]) => [key, { copied_episodes: s.copied, encoded_episodes: s.encoded, encoded_because: s.encodedBecause }])),
    },
  };
}
