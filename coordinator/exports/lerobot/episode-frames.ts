/**
 * One episode read from its MCAP into a LeRobot dataset: its control steps become data rows
 * (`observation.state` the measured joint positions, `action` the commanded targets, both float32,
 * `timestamp` = frame_index / fps), and every step sends each camera's latest JPEG to that
 * camera's video (a black frame until the camera's first one), which copies the cell's video of
 * the camera instead where it has one frame per step (episode-video-source.ts) and only samples the
 * JPEGs for image statistics. Only this episode's rows are held.
 */
import jpeg from "jpeg-js";
import type { ExportEpisode } from "../export-input.js";
import { EpisodeRecording, type RecordingReadOptions } from "../episode-steps.js";
import { videoSize, type CameraGeometry } from "./camera-encoder-process.js";
import { checkCellVideo, type EncodeReason } from "./episode-video-source.js";
import type { CameraVideoWriter, EpisodeVideo } from "./camera-video-writer.js";
import type { EpisodeRows } from "./data-file-writer.js";
import { columnStats, type FeatureStats } from "./feature-stats.js";
import { checkEpisodeFits } from "./lerobot-features.js";

/** What the dataset's features were taken from: the first episode. */
export interface FeatureSource {
  label: string;
  jointNames: string[];
  cameras: string[];
}

export interface EpisodeFrames {
  rows: EpisodeRows;
  videos: Map<string, EpisodeVideo>;
  /** Why each camera's frames were encoded rather than copied from the cell's video; absent when copied. */
  encoded: Map<string, { reason: EncodeReason; detail: string }>;
  /** Statistics of the data columns, by feature name. */
  stats: Map<string, FeatureStats>;
}

/** How an episode is named in messages: its id and place in the export. */
export function episodeLabel(episode: ExportEpisode, position: number): string {
  return `${episode.episodeId} (#${position})`;
}

/**
 * Reads the first episode until every camera has sent a frame and returns the joint names, the
 * cameras and each camera's frame size (from its first JPEG).
 */
export async function readFeatureSource(episode: ExportEpisode): Promise<FeatureSource & { geometry: Map<string, CameraGeometry>; steps: number; cameraFrames: Map<string, number> }> {
  const recording = await EpisodeRecording.openForSteps(episode.mcap.path);
  try {
    const { jointNames, cameras } = recording.header;
    const geometry = new Map<string, CameraGeometry>();
    if (cameras.length > 0) {
      for await (const step of recording.steps()) {
        for (const camera of cameras) {
          const image = step.images.get(camera);
          if (geometry.has(camera) || !image) continue;
          const { width, height } = jpegSize(image) ?? jpeg.decode(image, { useTArray: true, formatAsRGBA: false });
          geometry.set(camera, { widthPx: width, heightPx: height });
        }
        if (geometry.size === cameras.length) break;
      }
    }
    const silent = cameras.filter((camera) => !geometry.has(camera));
    if (silent.length > 0) {
      throw new Error(`camera(s) ${silent.join(", ")} of episode ${episodeLabel(episode, 0)} sent no frame, so the video size is unknown; the first exported episode must have a frame from every camera`);
    }
    return { label: episodeLabel(episode, 0), jointNames, cameras, geometry, steps: recording.header.steps, cameraFrames: recording.header.cameraFrames };
  } finally {
    await recording.close();
  }
}

/**
 * A JPEG's frame size from its start-of-frame header (ITU T.81 B.2.2), without decoding it; undefined
 * when no SOF marker is found before the scan.
 */
export function jpegSize(bytes: Uint8Array): { width: number; height: number } | undefined {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined;
  for (let at = 2; at + 9 < bytes.length; ) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    const length = (bytes[at + 2]! << 8) | bytes[at + 3]!;
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: (bytes[at + 5]! << 8) | bytes[at + 6]!, width: (bytes[at + 7]! << 8) | bytes[at + 8]! };
    }
    if (marker === 0xda) return undefined; // start of scan: no frame header before it
    at += 2 + length;
  }
  return undefined;
}

/** A black JPEG of the camera's frame size. */
export function blackFrame(camera: CameraGeometry): Uint8Array {
  const data = Buffer.alloc(camera.widthPx * camera.heightPx * 4);
  return jpeg.encode({ width: camera.widthPx, height: camera.heightPx, data }, 90).data;
}

const int64Column = (length: number, value: (k: number) => number) => BigInt64Array.from({ length }, (_, k) => BigInt(value(k)));

/**
 * Streams one episode: frames into `videoWriters` (keyed by camera name), rows returned.
 * `firstIndex` is the dataset index of the episode's first frame. With `read.decompressor`, the
 * frames handed to the writers are views into its buffers: recycle it only once the writers have
 * `released()` them.
 */
export async function readEpisodeFrames(
  episode: ExportEpisode,
  label: string,
  source: FeatureSource,
  videoWriters: Map<string, CameraVideoWriter>,
  place: { episodeIndex: number; firstIndex: number; taskIndex: number; fps: number },
  read: RecordingReadOptions = {},
): Promise<EpisodeFrames> {
  const recording = await EpisodeRecording.openForSteps(episode.mcap.path, read);
  try {
    const { header } = recording;
    checkEpisodeFits({ label, jointNames: header.jointNames, cameras: header.cameras }, source);
    if (header.steps === 0) throw new Error(`episode ${label} has no control steps; a LeRobot episode needs at least one frame`);
    const joints = source.jointNames.length;
    const encoded = new Map<string, { reason: EncodeReason; detail: string }>();
    for (const [camera, writer] of videoWriters) {
      if (!writer.copies) {
        encoded.set(camera, writer.notCopied!);
        await writer.beginEpisode(header.steps);
        continue;
      }
      const check = await checkCellVideo(episode.videos[camera], { steps: header.steps, recordedFrames: header.cameraFrames.get(camera) ?? 0, fps: place.fps }, videoSize(writer.geometry));
      if ("reason" in check) encoded.set(camera, check);
      await writer.beginEpisode(header.steps, "candidate" in check ? check.candidate : undefined);
    }
    const action: number[][] = [];
    const state: number[][] = [];
    for await (const step of recording.steps()) {
      if (step.state.length !== joints || step.action.length !== joints) {
        throw new Error(`episode ${label} step ${step.index} has ${step.state.length} positions and ${step.action.length} targets; expected ${joints} joints`);
      }
      action.push(step.action.map(Math.fround));
      state.push(step.state.map(Math.fround));
      for (const [camera, writer] of videoWriters) await writer.addFrame(step.images.get(camera), step.fresh.has(camera));
    }
    const frames = action.length;
    if (frames === 0) throw new Error(`episode ${label} yielded no control steps; a LeRobot episode needs at least one frame`);
    // A cell video that turned out not to have one frame per step: its frames are read again and encoded.
    const refused = [...videoWriters].filter(([, writer]) => writer.copyRefused !== undefined);
    if (refused.length > 0) {
      for (const [camera, writer] of refused) {
        encoded.set(camera, { reason: "frames_differ_from_steps", detail: writer.copyRefused! });
        await writer.encodeInstead(frames);
      }
      for await (const step of recording.steps()) for (const [camera, writer] of refused) await writer.addFrame(step.images.get(camera));
    }
    const videos = new Map([...videoWriters.values()].map((writer) => [writer.videoKey, writer.endEpisode()]));
    const rows: EpisodeRows = {
      action,
      state,
      timestampS: Float32Array.from({ length: frames }, (_, k) => k / place.fps),
      frameIndex: int64Column(frames, (k) => k),
      episodeIndex: int64Column(frames, () => place.episodeIndex),
      index: int64Column(frames, (k) => place.firstIndex + k),
      taskIndex: int64Column(frames, () => place.taskIndex),
    };
    const scalar = (column: ArrayLike<number | bigint>) => columnStats(Float64Array.from(column, Number), frames, 1);
    const stats = new Map<string, FeatureStats>([
      ["action", columnStats(Float64Array.from(action.flat()), frames, joints)],
      ["observation.state", columnStats(Float64Array.from(state.flat()), frames, joints)],
      ["timestamp", scalar(rows.timestampS)],
      ["frame_index", scalar(rows.frameIndex)],
      ["episode_index", scalar(rows.episodeIndex)],
      ["index", scalar(rows.index)],
      ["task_index", scalar(rows.taskIndex)],
    ]);
    return { rows, videos, encoded, stats };
  } finally {
    await recording.close();
  }
}
