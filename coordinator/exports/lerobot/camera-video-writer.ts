/**
 * One camera's video files, `videos/<video_key>/chunk-XXX/file-YYY.mp4`: episodes concatenated in
 * a file until it would reach `videoFileSizeMb`, then the next file, as LeRobot's
 * `_save_episode_video` rolls over. An episode's place is its file and its `from_timestamp` /
 * `to_timestamp`, the frame offsets in that file divided by fps.
 *
 * As LeRobot does, each episode is encoded on its own (one ffmpeg per episode, a segment under
 * `.segments/` of the dataset root), so its exact size is known before it is placed
 * (video-file-plan.ts); a file is its segments joined without re-encoding once the next episode
 * rolls over or the export ends (video-segment-concat.ts). The layout depends on the segments'
 * sizes alone, not on how far an encoder got. The next episode is encoded while the previous
 * one's ffmpeg finishes, at most one behind.
 */
import { mkdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { FeatureStats } from "./feature-stats.js";
import { sampleIndices } from "./frame-sampling.js";
import { CameraEncoderProcess, type CameraGeometry } from "./camera-encoder-process.js";
import { videoFilePath, type FileSlot } from "./lerobot-layout.js";
import { VideoFilePlan, type VideoFileLimits } from "./video-file-plan.js";
import { concatSegments, type Segment } from "./video-segment-concat.js";

export type VideoLimits = VideoFileLimits;

/** Where the segments are encoded, under the dataset root; removed once the files are joined. */
export const SEGMENTS_DIR = ".segments";

/** Where an episode's frames are in this camera's videos. */
export interface VideoPlacement {
  slot: FileSlot;
  fromTimestampS: number;
  toTimestampS: number;
}

export interface EpisodeVideo {
  /** Settles once the episode's segment is encoded and placed. */
  placement: Promise<VideoPlacement>;
  /** The episode's image statistics; settles once ffmpeg has returned all its frames. */
  stats: Promise<FeatureStats>;
}

const ignore = () => undefined;

export class CameraVideoWriter {
  private readonly plan: VideoFilePlan;
  private readonly segmentDir: string;
  private open: { encoder: CameraEncoderProcess; path: string; stats: Promise<FeatureStats> } | undefined;
  private episodes = 0;
  /** The placements of the last two episodes, in order: the next waits for the older one. */
  private placed: [Promise<unknown>, Promise<unknown>] = [Promise.resolve(), Promise.resolve()];
  private readonly running = new Set<CameraEncoderProcess>();
  /** The open file's slot and segments. */
  private file: { slot: FileSlot; segments: Segment[] } | undefined;
  private readonly joins: Array<Promise<void>> = [];
  /** Paths (relative to the dataset root) of the files written, in order. */
  readonly files: string[] = [];

  /**
   * @param blackJpeg the frame used at steps before the camera's first frame
   */
  constructor(
    private readonly root: string,
    readonly videoKey: string,
    private readonly camera: CameraGeometry,
    private readonly fps: number,
    limits: VideoLimits,
    private readonly blackJpeg: Uint8Array,
  ) {
    this.plan = new VideoFilePlan(limits);
    this.segmentDir = join(root, SEGMENTS_DIR, videoKey);
  }

  /** Opens an episode of about `expectedFrames` frames (the frames sampled for its image statistics). */
  async beginEpisode(expectedFrames: number): Promise<void> {
    if (this.open) throw new Error(`${this.videoKey}: beginEpisode while an episode is open`);
    // Bounds the ffmpeg processes: the episode before the previous one is placed.
    await this.placed[0];
    mkdirSync(this.segmentDir, { recursive: true });
    const path = join(this.segmentDir, `episode-${String(this.episodes).padStart(6, "0")}.mp4`);
    const encoder = CameraEncoderProcess.start(path, this.camera, this.fps);
    this.running.add(encoder);
    this.open = { encoder, path, stats: encoder.tap.beginEpisode(sampleIndices(expectedFrames)) };
  }

  /** Appends the camera's frame at a step; `undefined` (no frame yet) appends a black frame. */
  async addFrame(jpeg: Uint8Array | undefined): Promise<void> {
    if (!this.open) throw new Error(`${this.videoKey}: addFrame outside an episode`);
    await this.open.encoder.write(jpeg ?? this.blackJpeg);
  }

  /** Closes the episode: its segment finishes and is placed after the episodes before it. */
  endEpisode(): EpisodeVideo {
    if (!this.open) throw new Error(`${this.videoKey}: endEpisode outside an episode`);
    const { encoder, path, stats } = this.open;
    this.open = undefined;
    this.episodes++;
    const frames = encoder.frames;
    encoder.tap.endEpisode(frames);
    const finished = encoder.finish().finally(() => this.running.delete(encoder));
    const previous = this.placed[1];
    const placement = Promise.all([finished, previous]).then(() => this.place({ path, frames }, statSync(path).size));
    placement.catch(ignore); // awaited by the caller or by close(); an earlier failure is reported there
    this.placed = [previous, placement];
    return { placement, stats };
  }

  /** Waits for every episode to be placed and joins the last file. */
  async close(): Promise<void> {
    if (this.open) throw new Error(`${this.videoKey}: close while an episode is open`);
    await this.placed[1];
    this.joinFile();
    await Promise.all(this.joins);
    rmSync(this.segmentDir, { recursive: true, force: true });
  }

  /** Stops every ffmpeg without finishing the files (the segments stay for the caller to remove). */
  async abort(): Promise<void> {
    const encoders = [...this.running];
    this.open = undefined;
    await Promise.all(encoders.map((encoder) => encoder.abort()));
    await Promise.allSettled([...this.placed, ...this.joins]);
  }

  private place(segment: Segment, bytes: number): VideoPlacement {
    const placed = this.plan.place({ bytes, frames: segment.frames });
    if (placed.startsFile) {
      this.joinFile();
      this.file = { slot: placed.slot, segments: [] };
      this.files.push(videoFilePath(this.videoKey, placed.slot));
    }
    this.file!.segments.push(segment);
    return { slot: placed.slot, fromTimestampS: placed.fromFrame / this.fps, toTimestampS: placed.toFrame / this.fps };
  }

  /** Joins the open file's segments into it, in the background; close() awaits it. */
  private joinFile(): void {
    const file = this.file;
    this.file = undefined;
    if (!file) return;
    const out = join(this.root, videoFilePath(this.videoKey, file.slot));
    mkdirSync(dirname(out), { recursive: true });
    const listPath = join(this.segmentDir, `file-${file.slot.chunkIndex}-${file.slot.fileIndex}.txt`);
    const joined = concatSegments(file.segments, this.fps, listPath, out).then(() => {
      for (const segment of [...file.segments.map((s) => s.path), listPath]) rmSync(segment, { force: true });
    });
    joined.catch(ignore); // awaited by close()
    this.joins.push(joined);
  }
}
