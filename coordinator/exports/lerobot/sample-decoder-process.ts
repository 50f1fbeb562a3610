/**
 * Image statistics of the episodes whose video the export copies as the cell made it (nothing is
 * decoded for the copy): one long-lived ffmpeg per camera decodes a bounded sample of each such
 * episode's JPEGs (`remuxSampleIndices`, evenly spread, first and last included) into the same
 * downsampled RGB24 the encoder's tap gives (image-stats-tap.ts), and the tap counts their pixel
 * levels. Measured on a 640x480 camera: 0.7 ms of ffmpeg CPU per sampled frame, 0.2 ms at 320x240.
 * ffmpeg's JPEG parser hands a frame on once the next one starts, so an episode's statistics settle
 * when the next episode's first sample arrives or the process is closed.
 */
import type { CameraGeometry } from "./camera-encoder-process.js";
import type { FeatureStats } from "./feature-stats.js";
import { FfmpegTapProcess } from "./ffmpeg-tap-process.js";
import { downsampleFactor, sampleCount } from "./frame-sampling.js";
import { ImageStatsTap } from "./image-stats-tap.js";

/** At most this many frames of a copied episode are decoded for its image statistics. */
export const REMUX_STATS_FRAMES = 10;

/** The steps (of `frames`) whose frames are decoded for a copied episode's statistics. */
export function remuxSampleIndices(frames: number, maxSamples = REMUX_STATS_FRAMES): number[] {
  const n = Math.min(sampleCount(frames), maxSamples, frames);
  if (n <= 0) return [];
  if (n === 1) return [0];
  return Array.from({ length: n }, (_, i) => Math.round((i * (frames - 1)) / (n - 1)));
}

export class SampleDecoderProcess {
  /** Started on the first sampled frame. */
  private process: FfmpegTapProcess | undefined;
  private readonly tap: ImageStatsTap;
  private readonly tapWidthPx: number;
  private readonly tapHeightPx: number;

  constructor(private readonly camera: CameraGeometry, private readonly label: string) {
    const factor = downsampleFactor(camera.widthPx, camera.heightPx);
    this.tapWidthPx = Math.ceil(camera.widthPx / factor);
    this.tapHeightPx = Math.ceil(camera.heightPx / factor);
    this.tap = new ImageStatsTap(this.tapWidthPx * this.tapHeightPx * 3);
  }

  /** Starts an episode of `samples` sampled frames; resolves with its statistics once they are decoded. */
  beginEpisode(samples: number): Promise<FeatureStats> {
    return this.tap.beginEpisode(Array.from({ length: samples }, (_, i) => i));
  }

  /** The episode begun last got `frames` of its samples (all of them, or fewer when it was abandoned). */
  endEpisode(frames: number): void {
    this.tap.endEpisode(frames);
  }

  /** Pipes one sampled JPEG. */
  write(jpeg: Uint8Array): Promise<void> {
    return (this.process ??= this.start()).write(jpeg);
  }

  /** Settles once the pipe has taken every frame written so far (FfmpegTapProcess.released). */
  async released(): Promise<void> {
    await this.process?.released();
  }

  /** Closes the pipe and waits until every sampled frame came back; throws if one did not. */
  async close(): Promise<void> {
    await this.process?.close();
  }

  async abort(): Promise<void> {
    await this.process?.abort();
  }

  private start(): FfmpegTapProcess {
    const scale = `scale=${this.tapWidthPx}:${this.tapHeightPx}:flags=neighbor`;
    const args = [
      "-hide_banner", "-loglevel", "error", "-threads", "1",
      "-f", "jpeg_pipe", "-i", "pipe:0", "-vsync", "0",
      "-vf", `${scale},format=rgb24`, "-f", "rawvideo", "pipe:1",
    ];
    return new FfmpegTapProcess(args, this.tap, {
      doing: (frames) => `while decoding ${this.label}'s sampled frames for image statistics (${frames} piped)`,
      stoppedMessage: "ffmpeg stopped",
    });
  }
}
