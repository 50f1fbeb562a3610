/**
 * Whether the cell's video of a camera can stand, copied as it is, for an episode's frames in a
 * LeRobot dataset. LeRobot's frame k of an episode is the camera's picture at control step k, and
 * the cell records every camera's video with one frame per frame it captured, at the camera's rate
 * (cell-agent/recording/episode-videos.ts). So the video can be copied exactly when the camera
 * captured once at every step: its rate equals the control rate (the video's frame duration is
 * 1/fps), it has as many frames as the episode has steps, the recording has as many frames of the
 * camera as steps, and (checked while the steps are read, camera-video-writer.ts) every step has a
 * frame of its own. A camera slower than the control loop repeats its last frame over several steps
 * in LeRobot's terms; such an episode, or one recorded before cells made a video per camera, is
 * encoded from its JPEGs instead, and the export says how many were (info.json `assay.videos`).
 */
import type { StoredFile } from "../export-input.js";
import { readMp4VideoTrack } from "./mp4-video-track.js";

/** A cell video that may stand for the episode: its path, frame count and decoder configuration (avcC, hex). */
export interface CopyCandidate {
  path: string;
  frames: number;
  decoderConfig: string;
}

/** Why an episode's frames were encoded rather than copied from the cell's video. */
export type EncodeReason = "no_cell_video" | "unreadable_video" | "other_codec" | "other_size" | "other_rate" | "frames_differ_from_steps";

export type VideoSourceCheck = { candidate: CopyCandidate } | { reason: EncodeReason; detail: string };

/**
 * Checks the cell's video `file` of a camera against an episode of `steps` control steps at `fps`
 * whose recording holds `recordedFrames` frames of the camera, for a dataset video of `size`.
 */
export async function checkCellVideo(
  file: StoredFile | undefined,
  episode: { steps: number; recordedFrames: number; fps: number },
  size: { widthPx: number; heightPx: number },
): Promise<VideoSourceCheck> {
  if (!file) return { reason: "no_cell_video", detail: "the cell uploaded no video of this camera" };
  let track;
  try {
    track = await readMp4VideoTrack(file.path);
  } catch (error) {
    return { reason: "unreadable_video", detail: `${file.fileName}: ${(error as Error).message}` };
  }
  if (track.codec !== "avc1" || track.decoderConfig === "") return { reason: "other_codec", detail: `${file.fileName} holds ${track.codec}, not H.264 (avc1 with avcC)` };
  if (track.widthPx !== size.widthPx || track.heightPx !== size.heightPx) {
    return { reason: "other_size", detail: `${file.fileName} is ${track.widthPx}x${track.heightPx}; the dataset's video is ${size.widthPx}x${size.heightPx}` };
  }
  const [run] = track.deltas;
  if (track.deltas.length !== 1 || !run || run.delta * episode.fps !== track.timescale) {
    const rates = track.deltas.map((d) => (d.delta > 0 ? (track.timescale / d.delta).toFixed(3) : "0")).join(", ");
    return { reason: "other_rate", detail: `${file.fileName} runs at ${rates} fps; the control rate is ${episode.fps} Hz` };
  }
  if (track.samples !== episode.steps || episode.recordedFrames !== episode.steps) {
    return { reason: "frames_differ_from_steps", detail: `${track.samples} video frames and ${episode.recordedFrames} recorded frames for ${episode.steps} control steps` };
  }
  return { candidate: { path: file.path, frames: track.samples, decoderConfig: track.decoderConfig } };
}
