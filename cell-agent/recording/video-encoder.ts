/**
 * One camera's episode video (episode-videos.ts runs one per camera): the camera's frames piped into
 * the ffmpeg binary shipped by @ffmpeg-installer/ffmpeg, encoded H.264 into `<path>.part` and renamed
 * when ffmpeg exits cleanly. ffmpeg starts on the first frame, because only then are the frame's size
 * and what the camera has to offer known. What goes through the pipe is decided then, once per video:
 *
 * - `yuv420p`, where the camera lends its raw pixels (`CameraFrame.rgbView`/`rgb`: a simulated
 *   camera) and the size is even: the pixels converted here (rgb-to-yuv420p.ts) into the planes x264
 *   encodes as they are. Against the JPEGs this spares ffmpeg the JPEG decode and swscale's
 *   full-to-limited range conversion, and x264 encodes noise-free pixels instead of JPEG block
 *   artefacts (half the bits at the same CRF, and less work): scripts/bench/render.ts measures both.
 *   Two frame buffers are reused in turn (a frame is 460 KiB at 640 x 480); a buffer goes into the
 *   pipe again only once the pipe has taken its previous frame, which also bounds what waits in the
 *   pipe. A frame that comes while both are in the pipe is converted into a third, spare buffer that
 *   then trades places with the one the pipe took: nothing is allocated or copied per frame. The three
 *   buffers are the SIMD kernel's own memory (Yuv420pConverter.buffer), so the kernel writes each
 *   frame where the pipe reads it, with no 460 KiB copy out of the kernel.
 * - `jpeg` otherwise (`-f jpeg_pipe`): a real camera's MJPEG goes to ffmpeg as it came, never decoded
 *   in JavaScript (~13 ms a 640 x 480 frame), and the pipe carries ~16 KB a frame.
 *
 * Either way the stream is the same contract (protocol/episode-video.ts): H.264 yuv420p at the
 * camera's rate, one frame per frame given, so LeRobot exports remux any cell's video alike.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { rename, rm } from "node:fs/promises";
import ffmpegInstaller from "@ffmpeg-installer/ffmpeg";
import { episodeVideoOutputArgs } from "../../protocol/episode-video.js";
import type { CameraFrame } from "../hardware/types.js";
import { Yuv420pConverter, yuv420pFits, yuv420pSize } from "./rgb-to-yuv420p.js";

/** What the pipe carries: `auto` picks `yuv420p` when the first frame has raw pixels of an even size, else `jpeg`. */
export type VideoInput = "auto" | "yuv420p" | "jpeg";

/** Frame buffers a yuv420p video fills in turn. */
const RAW_BUFFERS = 2;

function rawPixels(frame: CameraFrame): Uint8Array | undefined {
  return frame.rgbView?.() ?? frame.rgb;
}

export class VideoEncoder {
  private process: ChildProcessWithoutNullStreams | undefined;
  private exited: Promise<number | null> | undefined;
  private stderrTail = "";
  private width = 0;
  private height = 0;
  private frames = 0;
  private input: VideoInput;
  /** yuv420p only: the frame buffers, each with the pipe's promise to have taken its last frame. */
  private readonly rawBuffers: Array<{ data: Uint8Array; inPipe: boolean; taken: Promise<void> }> = [];
  /** yuv420p only: a frame converted while both buffers are in the pipe waits here, then trades places with the one the pipe took. */
  private spare: Uint8Array | undefined;
  private converter: Yuv420pConverter | undefined;

  /** `path` is the final file name; ffmpeg writes `<path>.part`. `input`: what the pipe carries (default `auto`). */
  constructor(readonly path: string, private readonly rateHz: number, options: { input?: VideoInput } = {}) {
    this.input = options.input ?? "auto";
  }

  get framesWritten(): number {
    return this.frames;
  }

  /** What the pipe carries, once the first frame has started ffmpeg (`auto` before). */
  get inputFormat(): VideoInput {
    return this.input;
  }

  private start(first: CameraFrame): void {
    const { width, height } = first;
    this.width = width;
    this.height = height;
    if (this.input === "auto") this.input = yuv420pFits(width, height) && rawPixels(first)?.byteLength === width * height * 3 ? "yuv420p" : "jpeg";
    if (this.input === "yuv420p") {
      // The frame buffers and the spare are the converter's own: the kernel writes each frame where the pipe reads it.
      this.converter = new Yuv420pConverter(width, height, { buffers: RAW_BUFFERS + 1 });
      this.spare = this.converter.buffer(RAW_BUFFERS);
    }
    const input =
      this.input === "yuv420p"
        ? ["-f", "rawvideo", "-pix_fmt", "yuv420p", "-video_size", `${width}x${height}`, "-framerate", String(this.rateHz), "-i", "pipe:0"]
        : [
            "-f", "jpeg_pipe", "-framerate", String(this.rateHz), "-i", "pipe:0",
            // yuv420p needs even dimensions; an even frame skips the (copying) pad filter.
            ...(width % 2 === 0 && height % 2 === 0 ? [] : ["-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"]),
          ];
    const args = [
      "-hide_banner", "-loglevel", "error", "-y",
      // One thread to decode and one to encode: a cell shares its few cores with its own episode
      // loop, and frame threads only add synchronisation (measured with a 640x480 top camera, 210
      // frames: 2.7 ms CPU per frame with ffmpeg's defaults, 2.3 ms with one thread each and the
      // fast swscale path; scripts/bench/sim-cell.ts shows it per simulated second).
      "-threads", "1",
      ...input,
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

  /** The buffer the next yuv420p frame goes into: the one the pipe took longest ago. */
  private rawSlot(): { data: Uint8Array; inPipe: boolean; taken: Promise<void> } {
    const index = this.frames % RAW_BUFFERS;
    this.rawBuffers[index] ??= { data: this.converter!.buffer(index), inPipe: false, taken: Promise.resolve() };
    return this.rawBuffers[index]!;
  }

  /** Appends one frame; frames of another size than the first are skipped. */
  async addFrame(frame: CameraFrame): Promise<void> {
    const { width, height } = frame;
    if (!this.process) this.start(frame);
    if (width !== this.width || height !== this.height) return;
    if (this.input === "yuv420p") {
      const rgb = rawPixels(frame);
      if (!rgb || rgb.byteLength !== width * height * 3) return;
      const slot = this.rawSlot();
      if (slot.inPipe) {
        // ffmpeg is two frames behind: convert now into the spare buffer (the camera only lends its
        // pixels until its next capture), wait for the pipe, then swap the spare with the buffer it took.
        const converted = this.spare ?? new Uint8Array(yuv420pSize(width, height)); // only if calls overlap
        this.spare = undefined;
        this.converter!.convert(rgb, converted);
        await slot.taken;
        this.spare = slot.data;
        slot.data = converted;
      } else {
        this.converter!.convert(rgb, slot.data);
      }
      this.frames++;
      slot.inPipe = true;
      slot.taken = new Promise((resolve) =>
        this.process!.stdin.write(slot.data, () => {
          slot.inPipe = false;
          resolve();
        }),
      );
      return;
    }
    const stdin = this.process!.stdin;
    if (!stdin.write(frame.jpeg)) await new Promise<void>((resolve) => stdin.once("drain", resolve));
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
