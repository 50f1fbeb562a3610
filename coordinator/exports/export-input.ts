/**
 * What an export writer receives: the run's pins and one record per episode with its stored
 * recordings. The selection names them by their keys in the artifact store; the writers that read
 * an MCAP at random get it as a local file (local-recordings.ts). They read each episode's MCAP as
 * they reach it (episode-steps.ts), so a run is never held in memory; they never look at the store
 * themselves.
 */

/** A stored file of an episode, by its key in the artifact store. */
export interface StoredObject {
  key: string;
  fileName: string;
  bytes: number;
  sha256: string;
}

/** A stored file of an episode as a local file. */
export interface StoredFile {
  path: string;
  fileName: string;
  bytes: number;
  sha256: string;
}

/** `M`: the MCAP as a local file (what the writers read), or by its key (the selection, the mcap-bundle). */
export interface ExportEpisode<M extends StoredFile | StoredObject = StoredFile> {
  episodeId: string;
  /** The episode's index in its run. */
  index: number;
  outcome: "success" | "failure";
  failureCluster: string | null;
  /** A person helped during the episode (it counts as a policy failure, docs/statistics.md). */
  intervened: boolean;
  /** The policy's own outcome: success and not intervened. */
  policySucceeded: boolean;
  durationS: number | null;
  /** The language instruction the policy was given. */
  instruction: string;
  replaySpec: Record<string, unknown> | null;
  cellId: string | null;
  seed: number;
  /** The run unit's pins when they differ per unit (matrix, eval, ...): robot, environment, task. */
  robot: string;
  environment: string;
  task: string;
  mcap: M;
  /** The primary camera's video (the Episode's `video_url`). */
  video: StoredObject | null;
  /**
   * Every camera's stored video by camera name, the primary camera's included; as local files
   * (`M`) only for the writers that copy them (lerobot), empty for the others.
   */
  videos: Record<string, M>;
  /** Verify: the index of the scenario the episode replayed. */
  scenarioId?: number | null;
}

export interface ExportRun {
  runId: string;
  kind: string;
  /** `model@firmware` of the first unit. */
  robot: string;
  environment: string;
  task: string;
  /** The control loop's rate: one data row per control step. */
  controlRateHz: number;
  resolvedPins: Record<string, unknown>;
  created: string;
  completed: string | null;
  trainOnFailures: boolean;
}

/** Reported after each episode a writer finishes. */
export type ExportProgress = (episodesDone: number) => void;
