/**
 * What the doctor measures of a configured camera: opens it the way the agent does (openCamera),
 * waits for the first frame, then counts frames for `sampleMs` to find the rate it really delivers.
 */
import type { CameraConfig } from "../config.js";
import { WallClock } from "../devices/clock/wall-clock.js";
import { openCamera } from "../hardware-factory.js";
import type { CameraClockInfo } from "../hardware/types.js";

export interface CameraProbeResult {
  width: number;
  height: number;
  /** Frames per second seen over the sample. */
  measuredRateHz: number;
  /** From opening the camera to its first frame, ms. */
  firstFrameLatencyMs: number;
  /** Median of arrival minus capture time over the sample, ms; undefined when the camera stamps on arrival. */
  captureLatencyMs?: number;
  clock?: CameraClockInfo;
}

export async function probeCamera(camera: CameraConfig, options: { sampleMs?: number; firstFrameTimeoutMs?: number } = {}): Promise<CameraProbeResult> {
  const clock = new WallClock();
  const openedNs = clock.nowNs();
  const device = openCamera(camera, clock);
  try {
    const first = await device.capture();
    const firstFrameLatencyMs = Number((first.receivedNs ?? first.tNs) - openedNs) / 1e6;
    const sampleMs = options.sampleMs ?? 1000;
    const latencies: number[] = [];
    let frames = 0;
    let last = first;
    const endNs = clock.nowNs() + BigInt(sampleMs) * 1_000_000n;
    const startNs = first.receivedNs ?? first.tNs;
    while (clock.nowNs() < endNs) {
      const frame = await device.capture();
      if (frame !== last) {
        frames++;
        last = frame;
        if (frame.receivedNs !== undefined) latencies.push(Number(frame.receivedNs - frame.tNs) / 1e6);
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const spanS = Number((last.receivedNs ?? last.tNs) - startNs) / 1e9;
    latencies.sort((a, b) => a - b);
    const info = device.timestampClock?.();
    return {
      width: first.width, height: first.height,
      measuredRateHz: spanS > 0 ? frames / spanS : 0,
      firstFrameLatencyMs,
      ...(latencies.length && info?.kind !== "arrival" ? { captureLatencyMs: latencies[Math.floor(latencies.length / 2)]! } : {}),
      ...(info ? { clock: info } : {}),
    };
  } finally {
    device.close();
  }
}
