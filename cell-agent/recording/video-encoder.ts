/**
 * The episode video: one camera's JPEG frames piped into the ffmpeg binary shipped by
 * @ffmpeg-installer/ffmpeg (its MJPEG decoder unpacks them), encoded H.264 into `<path>.part` and
 * renamed when ffmpeg exits cleanly. ffmpeg starts on the first frame, because only then is the
 * frame size known. JPEG rather than raw RGB: every camera has it (a real MJPEG camera has nothing
 * else, and decoding 640x480 in JavaScript takes ~13 ms a frame), and the pipe carries ~16 KB a
 * frame instead of 900 KB.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { rename, rm } from "node:fs/promises";
import ffmpegInstaller from "@ffmpeg-installer/ffmpeg";
import type { Camera, CameraFrame } from "../hardware/types.js";

/** Prefers the camera named "top", then the cameras in the cell's order. */
export function videoCameraOrder(cameras: readonly Camera[]): Camera[] {
  return [...cameras].sort((a, b) => Number(b.name === "top") - Number(a.name === "top"));
}

export class VideoEncoder {
  private process: ChildProcessWithoutNullStreams | undefined;
  private exited: Promise<number | null> | undefined;
  private stderrTail = "";
  private width = 0;
  private height = 0;
  private frames = 0;

  /** `path` is the final file name; ffmpeg writes `<path>.part`. */
  constructor(readonly path: string, private readonly rateHz: number) {}

  get framesWritten(): number {
    return this.frames;
  }

  private start(width: number, height: number): void {
    this.width = width;
    this.height = height;
    const args = [
      "-hide_banner", "-loglevel", "error", "-y",
      // One thread to decode and one to encode: a cell shares its few cores with its own episode
      // loop, and frame threads only add synchronisation (measured with a 640x480 top camera, 210
      // frames: 2.7 ms CPU per frame with ffmpeg's defaults, 2.3 ms with one thread each and the
      // fast swscale path below; scripts/bench/sim-cell.ts shows it per simulated second).
      "-threads", "1",
      "-f", "jpeg_pipe", "-framerate", String(this.rateHz), "-i", "pipe:0",
      // One output frame per frame piped, never duplicated or dropped.
      "-vsync", "0",
      // yuv420p needs even dimensions; an even frame skips the (copying) pad filter.
      ...(width % 2 === 0 && height % 2 === 0 ? [] : ["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"]),
      // The JPEGs decode to full-range yuvj420p; the conversion to browser-safe yuv420p takes
      // swscale's fast path (PSNR about 50 dB against its default, far below CRF 28's own loss).
      "-sws_flags", "fast_bilinear", "-threads", "1",
      // ultrafast keeps a cell's CPU for the episode (about 1.3 ms per 640x480 frame). CRF 28, not
      // x264's default 23: the frames are JPEGs whose quantisation noise changes from frame to frame,
      // and at 23 x264 spends ~850 kb/s reproducing it; at 28 a simulated tabletop at 640x480 and
      // 30 fps takes ~250 kb/s and looks the same. A key frame every 2 s lets a browser seek.
      "-c:v", "libx264", "-preset", "ultrafast", "-crf", "28", "-g", String(Math.max(1, Math.round(2 * this.rateHz))),
      "-pix_fmt", "yuv420p", "-movflags", "+faststart",
      "-f", "mp4", `${this.path}.part`,
    ];
    const child = spawn(ffmpegInstaller.path, args, { stdio: ["pipe", "pipe", "pipe"] });
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-2000);
    });
    child.stdin.on("error", () => undefined); // reported through the exit code instead
    this.exited = new Promise((resolve) => {
      child.on("error", (error) => {
        this.stderrTail += String(error);
        resolve(-1);
      });
      child.on("close", (code) => resolve(code));
    });
    this.process = child;
  }

  /** Appends one frame; frames of another size than the first are skipped. */
  async addFrame(frame: CameraFrame): Promise<void> {
    const { width, height, jpeg } = frame;
    if (!this.process) this.start(width, height);
    if (width !== this.width || height !== this.height) return;
    const stdin = this.process!.stdin;
    if (!stdin.write(jpeg)) await new Promise<void>((resolve) => stdin.once("drain", resolve));
    this.frames++;
  }

  /** Closes the pipe, waits for ffmpeg, and renames the file. Returns false when no frame was written. */
  async finish(): Promise<boolean> {
    if (!this.process) return false;
    this.process.stdin.end();
    const code = await this.exited;
    if (code !== 0) {
      throw new Error(`ffmpeg exited with ${code} while encoding ${this.path}: ${this.stderrTail.trim()}`);
    }
    await rename(`${this.path}.part`, this.path);
    return true;
  }

  /** Stops ffmpeg and removes the partial file (aborted episodes keep no video). */
  async abort(): Promise<void> {
    if (this.process) {
      this.process.stdin.destroy();
      this.process.kill("SIGKILL");
      await this.exited;
    }
    await rm(`${this.path}.part`, { force: true });
  }
}
