/**
 * A `Camera` over an MJPEG HTTP stream (multipart/x-mixed-replace of JPEG parts), the format USB
 * camera servers such as ustreamer or mjpg-streamer publish. One long GET per camera; the newest
 * complete JPEG is kept and `capture()` returns it. The stream is reopened after 1 s when it ends.
 *
 * Frames are cut at the JPEG start/end markers, not at the multipart boundaries, so any boundary
 * string works; a JPEG carrying an embedded thumbnail (EXIF) would be cut short, and streamers do not
 * send those.
 */
import type { Camera, CameraCalibration, CameraClockInfo, CameraFrame } from "../../hardware/types.js";
import { FrameWaiters } from "./frame-waiters.js";
import { JpegStreamSplitter } from "./jpeg-stream-splitter.js";

export interface MjpegCameraOptions {
  name: string;
  url: string;
  rateHz: number;
  /** The camera's calibration from the agent config, when given. */
  calibration?: CameraCalibration;
  /** A frame older than this is stale and `capture()` fails, ms (default 1000). */
  maxFrameAgeMs?: number;
  nowNs?: () => bigint;
  log?: (line: string) => void;
}

/** Width and height from a JPEG's SOFn header, or 0x0 when it has none. */
export function jpegSize(jpeg: Uint8Array): { width: number; height: number } {
  let i = 2;
  while (i + 9 < jpeg.length) {
    if (jpeg[i] !== 0xff) return { width: 0, height: 0 };
    const marker = jpeg[i + 1];
    const length = (jpeg[i + 2] << 8) | jpeg[i + 3];
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: (jpeg[i + 5] << 8) | jpeg[i + 6], width: (jpeg[i + 7] << 8) | jpeg[i + 8] };
    }
    i += 2 + length;
  }
  return { width: 0, height: 0 };
}

export class MjpegCamera implements Camera {
  readonly name: string;
  readonly rateHz: number;
  readonly calibration?: CameraCalibration;
  private latest: CameraFrame | undefined;
  private readonly abort = new AbortController();
  private readonly nowNs: () => bigint;
  private readonly waiters = new FrameWaiters();
  private lastProblem = "";

  constructor(private readonly options: MjpegCameraOptions) {
    this.name = options.name;
    this.rateHz = options.rateHz;
    this.calibration = options.calibration;
    this.nowNs = options.nowNs ?? (() => process.hrtime.bigint());
    void this.run();
  }

  /** The newest frame; waits up to 2 s for the first one. Throws when the stream is stale. */
  async capture(): Promise<CameraFrame> {
    if (!this.latest) await this.waiters.wait(2000);
    const frame = this.latest;
    const maxAgeNs = BigInt((this.options.maxFrameAgeMs ?? 1000) * 1e6);
    if (!frame) throw new Error(`camera ${this.name}: no frame from ${this.options.url} yet${this.lastProblem ? ` (${this.lastProblem})` : ""}`);
    if (this.nowNs() - frame.tNs > maxAgeNs) {
      throw new Error(`camera ${this.name}: newest frame from ${this.options.url} is ${Number((this.nowNs() - frame.tNs) / 1_000_000n)} ms old${this.lastProblem ? ` (${this.lastProblem})` : ""}`);
    }
    return frame;
  }

  /** An HTTP stream carries no capture time: frames are stamped when their last byte arrives. */
  timestampClock(): CameraClockInfo {
    return { kind: "arrival", description: "stamped on the agent's monotonic clock when the frame's last byte arrived (an MJPEG-over-HTTP stream carries no capture time)" };
  }

  close(): void {
    this.abort.abort();
  }


  private async run(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        const response = await fetch(this.options.url, { signal: this.abort.signal });
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        const splitter = new JpegStreamSplitter();
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          for (const jpeg of splitter.push(chunk)) this.onFrame(jpeg);
        }
        this.problem("the stream ended");
      } catch (error) {
        if (this.abort.signal.aborted) return;
        this.problem((error as Error).message);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  private onFrame(jpeg: Uint8Array): void {
    const tNs = this.nowNs();
    this.latest = { tNs, receivedNs: tNs, ...jpegSize(jpeg), jpeg };
    this.lastProblem = "";
    this.waiters.wakeAll();
  }

  private problem(message: string): void {
    if (message !== this.lastProblem) this.options.log?.(`camera ${this.name}: ${this.options.url}: ${message}; reconnecting in 1 s`);
    this.lastProblem = message;
  }
}
