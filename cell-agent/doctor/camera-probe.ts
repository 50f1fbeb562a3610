/**
 * What the doctor measures of a configured camera: opens it the way the agent does (openCamera),
 * waits for the first frame, then counts frames for `sampleMs` (default 1 s; longer until 3 frames,
 * at most 5 s more) to find the rate it really delivers.
 */
import type { CameraConfig, MotorsConfig } from "../config.js";
import { WallClock } from "../devices/clock/wall-clock.js";
import { RosMotorBus } from "../devices/ros/ros-motor-bus.js";
import { openCamera, openMotors } from "../hardware-factory.js";
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

/** `robot` is needed for a ROS camera only: its images come over the robot's rosbridge link. */
export async function probeCamera(camera: CameraConfig, options: { sampleMs?: number; robot?: { motors: MotorsConfig | null; robotModel: string } } = {}): Promise<CameraProbeResult> {
  const clock = new WallClock();
  let rosBus: RosMotorBus | undefined;
  if (camera.kind === "ros" && options.robot?.motors) {
    const { bus } = await openMotors(options.robot.motors, options.robot.robotModel, clock);
    if (bus instanceof RosMotorBus) rosBus = bus;
    else await bus.close();
  }
  const openedNs = clock.nowNs();
  let device;
  try {
    device = openCamera(camera, clock, undefined, rosBus);
  } catch (error) {
    await rosBus?.close();
    throw error;
  }
  try {
    const first = await device.capture();
    const firstFrameLatencyMs = Number((first.receivedNs ?? first.tNs) - openedNs) / 1e6;
    const sampleMs = options.sampleMs ?? 1000;
    const latencies: number[] = [];
    let frames = 0;
    let last = first;
    const endNs = clock.nowNs() + BigInt(sampleMs) * 1_000_000n;
    // A slow camera gets up to 5 s more to show a few frames, so its rate is measured rather than reported as 0.
    const hardEndNs = endNs + 5_000_000_000n;
    const startNs = first.receivedNs ?? first.tNs;
    // Looks a few times per frame period: often enough to see every frame, without spinning the CPU the camera needs.
    const pollMs = Math.min(50, Math.max(2, 250 / camera.rateHz));
    while ((clock.nowNs() < endNs || frames < 3) && clock.nowNs() < hardEndNs) {
      const frame = await device.capture();
      if (frame !== last) {
        frames++;
        last = frame;
        if (frame.receivedNs !== undefined) latencies.push(Number(frame.receivedNs - frame.tNs) / 1e6);
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
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
    device.close?.();
    await rosBus?.close();
  }
}
