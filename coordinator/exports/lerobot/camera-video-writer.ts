/**
 * One camera's video files, `videos/<video_key>/chunk-XXX/file-YYY.mp4`: episodes concatenated in
 * a file until it would pass `videoFileSizeMb`, then the next file, as LeRobot's
 * `_save_episode_video` rolls over. An episode's place is its file and its `from_timestamp` /
 * `to_timestamp`, the frame offsets in that file divided by fps.
 *
 * LeRobot knows an episode's encoded size before appending it; frames here stream straight into
 * ffmpeg, so the size is estimated from the file's bytes per frame so far.
 */
import { mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { FeatureStats } from "./feature-stats.js";
import { sampleIndices } from "./frame-sampling.js";
import { CameraEncoderProcess, type CameraGeometry } from "./camera-encoder-process.js";
import { BYTES_PER_MB, FIRST_SLOT, nextSlot, videoFilePath, type FileSlot } from "./lerobot-layout.js";

export interface VideoLimits {
  videoFileSizeMb: number;
  chunksSize: number;
}

/** Where an episode's frames are in this camera's videos. */
export interface EpisodeVideo {
  slot: FileSlot;
  fromTimestampS: number;
  toTimestampS: number;
  /** The episode's image statistics; settles once ffmpeg has returned all its frames. */
  stats: Promise<FeatureStats>;
}

export class CameraVideoWriter {
  private encoder: CameraEncoderProcess | undefined;
  private slot: FileSlot = FIRST_SLOT;
  private framesInFile = 0;
  private episode: { fromFrame: number; stats: Promise<FeatureStats> } | undefined;
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
    private readonly limits: VideoLimits,
    private readonly blackJpeg: Uint8Array,
  ) {}

  /** Opens an episode of about `expectedFrames` frames, rolling over to a new file first if it would not fit. */
  async beginEpisode(expectedFrames: number): Promise<void> {
    if (this.episode) throw new Error(`${this.videoKey}: beginEpisode while an episode is open`);
    if (this.encoder && this.framesInFile > 0) {
      // ffmpeg creates the file once it has configured itself from the first frames.
      const sizeMb = (statSync(this.encoder.path, { throwIfNoEntry: false })?.size ?? 0) / BYTES_PER_MB;
      const perFrameMb = sizeMb / this.framesInFile;
      if (sizeMb + perFrameMb * expectedFrames >= this.limits.videoFileSizeMb) {
        await this.closeFile();
        this.slot = nextSlot(this.slot, this.limits.chunksSize);
      }
    }
    if (!this.encoder) {
      const relative = videoFilePath(this.videoKey, this.slot);
      const path = join(this.root, relative);
      mkdirSync(dirname(path), { recursive: true });
      this.encoder = CameraEncoderProcess.start(path, this.camera, this.fps);
      this.files.push(relative);
      this.framesInFile = 0;
    }
    this.episode = { fromFrame: this.framesInFile, stats: this.encoder.tap.beginEpisode(sampleIndices(expectedFrames)) };
  }

  /** Appends the camera's frame at a step; `undefined` (no frame yet) appends a black frame. */
  async addFrame(jpeg: Uint8Array | undefined): Promise<void> {
    if (!this.encoder || !this.episode) throw new Error(`${this.videoKey}: addFrame outside an episode`);
    await this.encoder.write(jpeg ?? this.blackJpeg);
    this.framesInFile++;
  }

  /** Closes the episode and tells where its frames are. */
  endEpisode(): EpisodeVideo {
    if (!this.encoder || !this.episode) throw new Error(`${this.videoKey}: endEpisode outside an episode`);
    const { fromFrame, stats } = this.episode;
    this.episode = undefined;
    this.encoder.tap.endEpisode(this.framesInFile - fromFrame);
    return { slot: this.slot, fromTimestampS: fromFrame / this.fps, toTimestampS: this.framesInFile / this.fps, stats };
  }

  /** Finishes the open file. */
  async close(): Promise<void> {
    if (this.episode) throw new Error(`${this.videoKey}: close while an episode is open`);
    await this.closeFile();
  }

  /** Stops ffmpeg without finishing the file. */
  async abort(): Promise<void> {
    await this.encoder?.abort();
    this.encoder = undefined;
  }

  private async closeFile(): Promise<void> {
    const encoder = this.encoder;
    this.encoder = undefined;
    await encoder?.finish();
  }
}
