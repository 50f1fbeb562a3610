/**
 * One episode's calibration record (schema `assay.calibration_episode/1`), read from its MCAP: the
 * ground truth (motion-capture 6-DoF object poses, commanded against executed joint trajectories;
 * coordinator/artifacts/ground-truth.ts has the frames and conventions) with what a simulator
 * vendor needs to reproduce the cell: the robot model and firmware as recorded, calibration age,
 * actuator cycle counts and thermal state, each camera's intrinsics and extrinsics, and the
 * perturbations as realized.
 */
import { open } from "node:fs/promises";
import { deriveGroundTruth } from "../artifacts/ground-truth.js";
import { EpisodeRecording, fileReadable } from "./episode-steps.js";
import type { ExportEpisode } from "./export-input.js";

export const CALIBRATION_EPISODE_SCHEMA = "assay.calibration_episode/1";

export async function calibrationEpisode(runId: string, e: ExportEpisode, scenarioId: number | null): Promise<Record<string, unknown>> {
  const handle = await open(e.mcap.path, "r");
  let truth: Awaited<ReturnType<typeof deriveGroundTruth>>;
  try {
    truth = await deriveGroundTruth({ runId, episodeId: e.episodeId, scenarioId, mcap: fileReadable(handle), mcapFileName: e.mcap.fileName, mcapSha256: e.mcap.sha256 });
  } finally {
    await handle.close();
  }
  const recording = await EpisodeRecording.open(e.mcap.path);
  const meta = recording.header.startMeta;
  await recording.close();
  const [model] = e.robot.split("@");
  return {
    schema: CALIBRATION_EPISODE_SCHEMA,
    run_id: runId,
    episode_id: e.episodeId,
    index: e.index,
    scenario_id: scenarioId,
    outcome: e.outcome,
    policy_succeeded: e.policySucceeded,
    robot: {
      pin: e.robot,
      model,
      firmware_recorded: truth.firmware,
      calibration_age_s: typeof meta.calibration_age_s === "number" ? meta.calibration_age_s : null,
      actuator_cycle_counts: meta.actuator_cycle_counts ?? null,
      thermal_state: meta.thermal_state ?? null,
    },
    cell_id: truth.cell_id ?? e.cellId,
    environment: e.environment,
    task: e.task,
    seed: truth.seed ?? e.seed,
    perturbations_realized: meta.perturbations_realized ?? null,
    replay_spec: e.replaySpec,
    cameras: meta.cameras ?? null,
    frames: truth.frames,
    mocap: { objects: truth.objects },
    joints: truth.joints,
    source: truth.source,
  };
}
