/**
 * Maps a camera's own frame timestamps (V4L2 buffer times, ROS header stamps, ffmpeg pts) onto the
 * agent's monotonic clock, and names the mapping so the recording can say which clock a frame's time
 * came from.
 *
 * - A source already on CLOCK_MONOTONIC (UVC buffer timestamps; the first stamp lies within
 *   `sameClockWindowNs` of the agent's now) is taken as is: "device_monotonic".
 * - Any other source (a stream that starts at 0, a ROS robot's own clock) is offset so that its first
 *   frame lands at its arrival time: "device_offset". The offset only ever decreases, to the smallest
 *   arrival-minus-stamp seen, so a frame is never stamped after it arrived; the residual error is the
 *   smallest transport delay seen, which the doctor reports as latency.
 */

import type { CameraClockInfo } from "../../hardware/types.js";

type CaptureClockKind = "device_monotonic" | "device_offset";

const DESCRIPTIONS: Record<CaptureClockKind, string> = {
  device_monotonic: "the device's own capture timestamp, already on the agent's monotonic clock (CLOCK_MONOTONIC)",
  device_offset: "the device's own capture timestamps, offset onto the agent's monotonic clock by the smallest arrival-minus-stamp seen",
};

export class CaptureClock {
  private kind: CaptureClockKind | undefined;
  private offsetNs = 0n;

  constructor(private readonly sameClockWindowNs: bigint = 5_000_000_000n) {}

  /** The agent-clock capture time of a frame stamped `deviceNs` that arrived at agent time `arrivalNs`. */
  map(deviceNs: bigint, arrivalNs: bigint): bigint {
    if (this.kind === undefined) {
      const gap = arrivalNs - deviceNs;
      this.kind = gap >= -this.sameClockWindowNs && gap <= this.sameClockWindowNs ? "device_monotonic" : "device_offset";
      this.offsetNs = gap;
    }
    if (this.kind === "device_monotonic") return deviceNs;
    if (arrivalNs - deviceNs < this.offsetNs) this.offsetNs = arrivalNs - deviceNs;
    return deviceNs + this.offsetNs;
  }

  /** Undefined until the first frame. */
  info(): CameraClockInfo | undefined {
    if (this.kind === undefined) return undefined;
    return { kind: this.kind, description: DESCRIPTIONS[this.kind], ...(this.kind === "device_offset" ? { offsetNs: this.offsetNs } : {}) };
  }

  /** A restarted stream starts its stamps again: map its first frame afresh. */
  reset(): void {
    this.kind = undefined;
    this.offsetNs = 0n;
  }
}
