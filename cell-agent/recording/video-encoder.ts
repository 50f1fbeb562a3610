/**
 * One camera's episode video (episode-videos.ts runs one per camera): the camera's JPEG frames piped into the ffmpeg binary shipped by
 * @ffmpeg-installer/ffmpeg (its MJPEG decoder unpacks them), encoded H.264 into `<path>.part` and
 * renamed when ffmpeg exits cleanly. ffmpeg starts on the first frame, because only then is the
 * frame size known. JPEG rather than raw RGB: every camera has it (a real MJPEG camera has nothing
 * else, and decoding 640x480 in JavaScript takes ~13 ms a frame), and the pipe carries ~16 KB a
 * frame instead of 900 KB.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { rename, rm } from "node:fs/promises";
import ffmpegInstaller from "@ffmpeg-installer/ffmpeg";
import { episodeVideoOutputArgs } from "../../protocol/episode-video.js";
import type { CameraFrame } from "../hardware/types.js";

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
      // fast swscale path; scripts/bench/sim-cell.ts shows it per simulated second).
      "-threads", "1",
      "-f", "jpeg_pipe", "-framerate", String(this.rateHz), "-i", "pipe:0",
      // yuv420p needs even dimensions; an even frame skips the (copying) pad filter.
      ...(width % 2 === 0 && height % 2 === 0 ? [] : ["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"]),
      // The settings every episode video is made with (protocol/episode-video.ts): LeRobot exports remux these files.
      ...episodeVideoOutputArgs(this.rateHz),
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
