/**
 * The plumbing of a LeRobot export's ffmpeg child that takes JPEGs on stdin and hands downsampled
 * RGB24 frames back on stdout to an image-statistics tap (image-stats-tap.ts): the episode video
 * encoder (camera-encoder-process.ts) and the sampled-frame decoder (sample-decoder-process.ts).
 * Once for both: stderr's tail for messages, stdin backpressure, the tap fed from stdout (a frame
 * the tap rejects kills ffmpeg), closing (ffmpeg must exit cleanly and every piped frame come back)
 * and aborting.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import ffmpegInstaller from "@ffmpeg-installer/ffmpeg";
import type { ImageStatsTap } from "./image-stats-tap.js";

/** Beyond this many bytes queued for ffmpeg's stdin, `write` waits for it to drain. */
const MAX_QUEUED_BYTES = 4 * 1024 * 1024;

export interface FfmpegTapProcessOptions {
  /** What the process does, for messages: "while encoding <path>" (followed by the count of frames piped). */
  doing: (framesPiped: number) => string;
  /** The message when a frame is written after ffmpeg stopped. */
  stoppedMessage: string;
}

export class FfmpegTapProcess {
  private framesPiped = 0;
  private stderrTail = "";
  private tapError: Error | undefined;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;
  /** Frames handed to stdin whose bytes the pipe has not taken yet (it holds the caller's buffer until then). */
  private unwritten = 0;
  private releaseWaiters: Array<() => void> = [];

  /** Starts the ffmpeg binary of @ffmpeg-installer/ffmpeg with `args`, its stdout into `tap`. */
  constructor(args: readonly string[], private readonly tap: ImageStatsTap, private readonly options: FfmpegTapProcessOptions) {
    const child = spawn(ffmpegInstaller.path, args, { stdio: ["pipe", "pipe", "pipe"] });
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
    this.exited = new Promise<number | null>((resolve) => {
      child.on("error", (error) => {
        this.stderrTail += String(error);
        resolve(-1);
      });
      // "close" comes after stdout ended, so the tap has seen every frame by then.
      child.on("close", (code) => resolve(code));
    }).then((code) => {
      this.exitCode = code;
      this.release();
      return code;
    });
    this.child = child;
  }

  get frames(): number {
    return this.framesPiped;
  }

  /** Pipes one JPEG; waits while too much is queued. Throws once ffmpeg has stopped. */
  async write(jpeg: Uint8Array): Promise<void> {
    if (this.exitCode !== undefined || this.tapError) throw this.failure(this.options.stoppedMessage);
    const stdin = this.child.stdin;
    this.unwritten++;
    stdin.write(jpeg, () => {
      this.unwritten--;
      this.release();
    });
    this.framesPiped++;
    if (stdin.writableLength > MAX_QUEUED_BYTES) {
      await Promise.race([new Promise<void>((resolve) => stdin.once("drain", resolve)), this.exited]);
      if (this.exitCode !== undefined) throw this.failure(this.options.stoppedMessage);
    }
  }

  /**
   * Settles once the pipe has taken every frame written so far, so their buffers may be reused (the
   * export's chunk decompressor recycles them for the next episode), or once ffmpeg has stopped.
   */
  released(): Promise<void> {
    if (this.unwritten === 0 || this.exitCode !== undefined) return Promise.resolve();
    return new Promise((resolve) => this.releaseWaiters.push(resolve));
  }

  private release(): void {
    if (this.unwritten !== 0 && this.exitCode === undefined) return;
    const waiters = this.releaseWaiters;
    this.releaseWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Closes the pipe and waits for ffmpeg; throws if it failed or a piped frame did not come back. */
  async close(): Promise<void> {
    this.child.stdin.end();
    const code = await this.exited;
    if (this.tapError) throw this.failure(this.tapError.message);
    if (code !== 0) throw this.failure(`ffmpeg exited with ${code}`);
    this.tap.assertComplete(this.framesPiped);
  }

  /** Kills ffmpeg (whatever file it was writing is incomplete). */
  async abort(): Promise<void> {
    this.child.stdin.destroy();
    this.child.kill("SIGKILL");
    await this.exited;
  }

  private failure(what: string): Error {
    return new Error(`${what} ${this.options.doing(this.framesPiped)}: ${this.stderrTail.trim() || "no output"}`);
  }
}
