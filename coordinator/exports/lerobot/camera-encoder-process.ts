/**
 * One ffmpeg process (the binary of @ffmpeg-installer/ffmpeg) writing one episode's segment of one
 * camera's video: JPEG frames piped in as they are (`jpeg_pipe`, decoded by ffmpeg's mjpeg decoder,
 * far faster than decoding them in JavaScript), H.264 in MP4 out at a constant `fps` with frame k at
 * pts k/fps, and a downsampled RGB24 copy of every frame on stdout for the image statistics
 * (image-stats-tap.ts). The segment starts on an IDR frame, and its size is final once ffmpeg
 * exits; the dataset's files are segments joined without re-encoding (video-segment-concat.ts).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import ffmpegInstaller from "@ffmpeg-installer/ffmpeg";
import { EPISODE_VIDEO_ENCODING, episodeVideoGop } from "../../../protocol/episode-video.js";
import { downsampleFactor } from "./frame-sampling.js";
import { ImageStatsTap } from "./image-stats-tap.js";

/** How a camera's videos are encoded; info.json records it as LeRobot's `VideoEncoderConfig` fields. */
export interface VideoEncoding {
  encoder: string;
  /** The stream's codec as PyAV's `codec.canonical_name` reports it (`video.codec`). */
  codecName: string;
  pixFmt: string;
  preset: string;
  gop: number;
  crf: number;
}

/**
 * LeRobot's own settings, for recordings whose cell made no video the export can copy. A GOP of 2 is
 * LeRobot's default (`g=2`): training decodes frames at random, and a short GOP keeps each seek
 * cheap. `superfast` measured faster than `ultrafast` at this GOP (2 cores, 320x240).
 */
export const VIDEO_ENCODING: VideoEncoding = {
  encoder: "libx264",
  codecName: "h264",
  pixFmt: "yuv420p",
  preset: "superfast",
  gop: 2,
  crf: 23,
};

/**
 * The cell's own settings (protocol/episode-video.ts) at `fps`: what a camera's videos are made with
 * when the export copies the cell's videos, so an episode it has to encode joins them in one file.
 */
export function cellVideoEncoding(fps: number): VideoEncoding {
  const { encoder, codecName, pixFmt, preset, crf } = EPISODE_VIDEO_ENCODING;
  return { encoder, codecName, pixFmt, preset, crf, gop: episodeVideoGop(fps) };
}

/** Beyond this many bytes queued for ffmpeg's stdin, `write` waits for it to drain. */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

export interface CameraGeometry {
  /** Size of the camera's frames (the first JPEG); other sizes are scaled to it. */
  widthPx: number;
  heightPx: number;
}

/** yuv420p needs even sides; odd ones get one black row or column. */
export function videoSize(camera: CameraGeometry): { widthPx: number; heightPx: number } {
  return { widthPx: camera.widthPx + (camera.widthPx % 2), heightPx: camera.heightPx + (camera.heightPx % 2) };
}

export class CameraEncoderProcess {
  readonly tap: ImageStatsTap;
  private framesPiped = 0;
  private stderrTail = "";
  private tapError: Error | undefined;
  private readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  private constructor(private readonly child: ChildProcessWithoutNullStreams, readonly path: string, tapFrameBytes: number) {
    this.tap = new ImageStatsTap(tapFrameBytes);
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-2000);
    });
    child.stdin.on("error", () => undefined); // reported through the exit code
    child.stdout.on("data", (chunk: Buffer) => {
      if (this.tapError) return;
      try {
        this.tap.push(chunk);
      } catch (error) {
        this.tapError = error as Error;
        child.kill("SIGKILL");
      }
    });
    this.exited = new Promise((resolve) => {
      child.on("error", (error) => {
        this.stderrTail += String(error);
        resolve(-1);
      });
      // "close" comes after stdout ended, so the tap has seen every frame by then.
      child.on("close", (code) => resolve(code));
    }).then((code) => (this.exitCode = code as number | null));
  }

  /** Starts ffmpeg writing the segment `path` (which it overwrites). */
  static start(path: string, camera: CameraGeometry, fps: number, encoding: VideoEncoding): CameraEncoderProcess {
    const { widthPx, heightPx } = videoSize(camera);
    const factor = downsampleFactor(camera.widthPx, camera.heightPx);
    const tapWidthPx = Math.ceil(camera.widthPx / factor);
    const tapHeightPx = Math.ceil(camera.heightPx / factor);
    const pad = widthPx !== camera.widthPx || heightPx !== camera.heightPx ? `pad=${widthPx}:${heightPx},` : "";
    const tapScale = factor > 1 ? `scale=${tapWidthPx}:${tapHeightPx}:flags=neighbor,` : "";
    const graph =
      `[0:v]scale=${camera.widthPx}:${camera.heightPx},split=2[enc][tap];` +
      `[enc]${pad}format=${encoding.pixFmt}[video];[tap]${tapScale}format=rgb24[stats]`;
    const args = [
      "-hide_banner", "-loglevel", "error", "-y",
      "-f", "jpeg_pipe", "-framerate", String(fps), "-i", "pipe:0",
      // Passthrough: one output frame per input frame, never duplicated or dropped.
      "-vsync", "0",
      "-filter_complex", graph,
      "-map", "[video]", "-c:v", encoding.encoder, "-preset", encoding.preset,
      "-g", String(encoding.gop), "-crf", String(encoding.crf), "-pix_fmt", encoding.pixFmt,
      // A segment is read once, by the concatenation, so no +faststart pass here: the joined file gets it.
      "-f", "mp4", path,
      "-map", "[stats]", "-f", "rawvideo", "pipe:1",
    ];
    const child = spawn(ffmpegInstaller.path, args, { stdio: ["pipe", "pipe", "pipe"] });
    return new CameraEncoderProcess(child, path, tapWidthPx * tapHeightPx * 3);
  }

  get frames(): number {
    return this.framesPiped;
  }

  /** Pipes one JPEG frame. */
  async write(jpeg: Uint8Array): Promise<void> {
    if (this.exitCode !== undefined || this.tapError) throw this.failure("ffmpeg stopped before the last frame");
    const stdin = this.child.stdin;
    stdin.write(jpeg);
    this.framesPiped++;
    if (stdin.writableLength > MAX_QUEUED_BYTES) {
      await Promise.race([new Promise<void>((resolve) => stdin.once("drain", resolve)), this.exited]);
      if (this.exitCode !== undefined) throw this.failure("ffmpeg stopped before the last frame");
    }
  }

  /** Closes the pipe and waits for ffmpeg to finish the file; throws if it failed or lost a frame. */
  async finish(): Promise<void> {
    this.child.stdin.end();
    const code = await this.exited;
    if (this.tapError) throw this.failure(this.tapError.message);
    if (code !== 0) throw this.failure(`ffmpeg exited with ${code}`);
    this.tap.assertComplete(this.framesPiped);
  }

  /** Kills ffmpeg (the file it leaves is incomplete). */
  async abort(): Promise<void> {
    this.child.stdin.destroy();
    this.child.kill("SIGKILL");
    await this.exited;
  }

  private failure(what: string): Error {
    return new Error(`${what} while encoding ${this.path} (${this.framesPiped} frames piped): ${this.stderrTail.trim() || "no output"}`);
  }
}
