/**
 * A `Camera` read through the ffmpeg binary of @ffmpeg-installer/ffmpeg: a V4L2/UVC device
 * (`-f v4l2`, MJPEG or raw formats) or, in tests, ffmpeg's synthetic `testsrc2`; only the input
 * arguments differ (ffmpeg-input.ts).
 *
 * ffmpeg decodes the input, stamps each frame and re-encodes it as JPEG onto stdout
 * (`-f image2pipe`), where frames are cut at the JPEG start/end markers. The capture time is the
 * input's own timestamp (`-copyts`; V4L2 buffer timestamps), read from the `showinfo` filter's line
 * for the same frame on stderr after `settb=AVTB` puts it in microseconds, and mapped to the agent
 * clock by `CaptureClock`. `-vsync passthrough` keeps stdout frames and showinfo lines one to one.
 *
 * NOTE: re-encoding costs CPU (encoding 640x480 at 30 Hz took about 7 % of a core on a 2-core VM, plus
 * decoding an MJPEG camera's frames) even for an MJPEG camera: showinfo needs decoded frames, and a
 * stream copy would leave no per-frame timestamp to read.
 *
 * The newest frame is kept and `capture()` returns it. ffmpeg is restarted 1 s after it exits; a
 * `capture()` waiting for the first frame fails as soon as ffmpeg exits, with ffmpeg's last words.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import ffmpegInstaller from "@ffmpeg-installer/ffmpeg";
import type { Camera, CameraCalibration, CameraClockInfo, CameraFrame } from "../../hardware/types.js";
import { CaptureClock } from "./capture-clock.js";
import { jpegSize } from "./mjpeg-camera.js";
import { FrameWaiters } from "./frame-waiters.js";
import { JpegStreamSplitter } from "./jpeg-stream-splitter.js";

export interface FfmpegCameraOptions {
  name: string;
  /** Frames per second the agent records. */
  rateHz: number;
  /** ffmpeg's input arguments, ending with `-i <input>` (v4l2InputArgs or syntheticInputArgs). */
  inputArgs: string[];
  /** Shown in messages, e.g. "/dev/video0". */
  source: string;
  calibration?: CameraCalibration;
  /** JPEG quality, ffmpeg's -q:v scale 2 (best) .. 31 (default 5). */
  jpegQuality?: number;
  /** A frame older than this is stale and `capture()` fails, ms (default 1000). */
  maxFrameAgeMs?: number;
  /** How long `capture()` waits for the first frame, ms (default 5000: a UVC camera takes a while to start). */
  firstFrameTimeoutMs?: number;
  /** The agent clock; must be CLOCK_MONOTONIC-based for V4L2 stamps to be taken as is (default process.hrtime). */
  nowNs?: () => bigint;
  ffmpegPath?: string;
  log?: (line: string) => void;
}

/** `n:   3 pts: 100000 pts_time:0.1 ...` from the showinfo filter. */
const SHOWINFO_PTS = /\] n:\s*(\d+)\s+pts:\s*(-?\d+)\s+pts_time:/;

/** The frame number and pts (µs after settb=AVTB) of a showinfo line, or undefined for other lines. */
export function parseShowinfoLine(line: string): { n: number; ptsUs: bigint } | undefined {
  const match = SHOWINFO_PTS.exec(line);
  return match ? { n: Number(match[1]), ptsUs: BigInt(match[2]!) } : undefined;
}

/** The full ffmpeg argument list for a camera's input arguments. */
export function ffmpegCameraArgs(inputArgs: readonly string[], jpegQuality = 5): string[] {
  return [
    "-hide_banner", "-nostdin", "-nostats", "-loglevel", "info",
    "-copyts", ...inputArgs,
    "-an", "-vf", "settb=AVTB,showinfo,format=yuvj420p", "-vsync", "passthrough",
    "-c:v", "mjpeg", "-q:v", String(jpegQuality), "-f", "image2pipe", "pipe:1",
  ];
}

export class FfmpegCamera implements Camera {
  readonly name: string;
  readonly rateHz: number;
  readonly calibration?: CameraCalibration;
  private latest: CameraFrame | undefined;
  private child: ChildProcessWithoutNullStreams | undefined;
  private closed = false;
  private readonly nowNs: () => bigint;
  private readonly clock = new CaptureClock();
  private readonly waiters = new FrameWaiters();
  private lastProblem = "";
  private stderrTail = "";
  private readonly splitter = new JpegStreamSplitter();
  /** Capture stamps (device ns) from showinfo not yet matched with a JPEG, and JPEGs (with arrival) not yet matched with a stamp. */
  private readonly stamps: bigint[] = [];
  private readonly jpegs: Array<{ jpeg: Uint8Array; receivedNs: bigint }> = [];
  private restartTimer: NodeJS.Timeout | undefined;
  /** Agent time ffmpeg was (last) started, and the first frame's arrival after it: the doctor's first-frame latency. */
  private startedNs = 0n;
  private firstFrameNs: bigint | undefined;

  constructor(private readonly options: FfmpegCameraOptions) {
    this.name = options.name;
    this.rateHz = options.rateHz;
    this.calibration = options.calibration;
    this.nowNs = options.nowNs ?? (() => process.hrtime.bigint());
    this.start();
  }

  /** The newest frame; waits for the first one. Throws when there is none or it is stale. */
  async capture(): Promise<CameraFrame> {
    if (!this.latest) await this.waiters.wait(this.options.firstFrameTimeoutMs ?? 5000);
    const frame = this.latest;
    const where = `camera ${this.name} (${this.options.source})`;
    if (!frame) throw new Error(`${where}: no frame yet${this.lastProblem ? ` (${this.lastProblem})` : ""}`);
    const ageNs = this.nowNs() - (frame.receivedNs ?? frame.tNs);
    if (ageNs > BigInt((this.options.maxFrameAgeMs ?? 1000) * 1e6)) {
      throw new Error(`${where}: newest frame is ${Number(ageNs / 1_000_000n)} ms old${this.lastProblem ? ` (${this.lastProblem})` : ""}`);
    }
    return frame;
  }

  timestampClock(): CameraClockInfo | undefined {
    return this.clock.info();
  }

  /** ms from starting ffmpeg to the first frame, or undefined before it. */
  firstFrameLatencyMs(): number | undefined {
    return this.firstFrameNs === undefined ? undefined : Number(this.firstFrameNs - this.startedNs) / 1e6;
  }

  /** Resolves with the next frame to arrive, or rejects after `timeoutMs`. */
  async nextFrame(timeoutMs: number): Promise<CameraFrame> {
    const before = this.latest;
    const deadline = Date.now() + timeoutMs;
    while (this.latest === before) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`camera ${this.name} (${this.options.source}): no frame within ${timeoutMs} ms${this.lastProblem ? ` (${this.lastProblem})` : ""}`);
      await this.waiters.wait(left);
    }
    return this.latest!;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.restartTimer);
    this.child?.kill("SIGKILL");
    this.waiters.wakeAll();
  }


  private start(): void {
    if (this.closed) return;
    this.clock.reset();
    this.stamps.length = 0;
    this.jpegs.length = 0;
    this.splitter.reset();
    this.stderrTail = "";
    this.startedNs = this.nowNs();
    this.firstFrameNs = undefined;
    const child = spawn(this.options.ffmpegPath ?? ffmpegInstaller.path, ffmpegCameraArgs(this.options.inputArgs, this.options.jpegQuality), { stdio: ["pipe", "pipe", "pipe"] });
    this.child = child;
    let stderrLine = "";
    child.stdout.on("data", (chunk: Buffer) => this.onStdout(chunk));
    child.stderr.on("data", (chunk: Buffer) => {
      const lines = (stderrLine + chunk.toString("latin1")).split(/\r?\n/);
      stderrLine = lines.pop() ?? "";
      if (stderrLine.length > 4096) stderrLine = "";
      for (const line of lines) this.onStderrLine(line);
    });
    child.on("error", (error) => this.problem(`ffmpeg cannot start: ${error.message}`));
    // "close", not "exit": it comes after ffmpeg's stderr has been read to its end, so its last words (the reason it
    // failed) are in the message; on "exit" they were sometimes still unread.
    child.on("close", (code, signal) => {
      if (stderrLine.trim()) this.onStderrLine(stderrLine);
      stderrLine = "";
      if (this.child === child) this.child = undefined;
      if (this.closed) return;
      this.problem(`ffmpeg exited (${signal ?? `code ${code}`})${this.stderrTail ? `: ${this.stderrTail}` : ""}`);
      // A camera that never delivered a frame fails its first capture now, with ffmpeg's reason, instead of at the timeout.
      if (!this.latest) this.waiters.wakeAll();
      this.restartTimer = setTimeout(() => this.start(), 1000);
    });
  }

  private onStderrLine(line: string): void {
    const info = parseShowinfoLine(line);
    if (info) {
      this.stamps.push(info.ptsUs * 1000n);
      this.pair();
      return;
    }
    // Keep the last meaningful line for messages (ffmpeg's reason for failing is its last words).
    if (line.trim() && !line.includes("Parsed_showinfo")) this.stderrTail = line.trim().slice(0, 300);
  }

  private onStdout(chunk: Buffer): void {
    const receivedNs = this.nowNs();
    for (const jpeg of this.splitter.push(chunk)) this.jpegs.push({ jpeg, receivedNs });
    this.pair();
  }

  /** Matches JPEGs with their stamps in order (one showinfo line per encoded frame). */
  private pair(): void {
    let paired = false;
    while (this.stamps.length && this.jpegs.length) {
      const deviceNs = this.stamps.shift()!;
      const { jpeg, receivedNs } = this.jpegs.shift()!;
      const tNs = this.clock.map(deviceNs, receivedNs);
      this.latest = { tNs, receivedNs, ...jpegSize(jpeg), jpeg };
      this.firstFrameNs ??= receivedNs;
      this.lastProblem = "";
      paired = true;
    }
    if (paired) this.waiters.wakeAll();
  }

  private problem(message: string): void {
    if (message !== this.lastProblem) this.options.log?.(`camera ${this.name}: ${this.options.source}: ${message}; restarting in 1 s`);
    this.lastProblem = message;
  }
}
