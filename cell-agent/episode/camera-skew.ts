/**
 * What an episode records about its cameras' timing: which clock each camera's capture times come
 * from (/meta `camera_clocks`), and how far apart the frames of one control step were
 * (/meta end `camera_sync`, beside the per-step /camera_sync channel).
 */
import type { Camera } from "../hardware/types.js";

/** /meta `camera_clocks` for one camera: its driver's answer, or "arrival" for a driver that gives none. */
export function cameraClockRecord(camera: Camera): { kind: string; description: string } {
  const info = camera.timestampClock?.();
  if (!info) return { kind: "arrival", description: "stamped on the agent's clock when the driver handed the frame over (the driver names no capture clock)" };
  return { kind: info.kind, description: info.description };
}

/** Skew over the control steps in which several cameras captured together. */
export class CameraSkewStats {
  private steps = 0;
  private maxNs = 0n;
  private sumNs = 0n;

  add(captureNs: ReadonlyMap<string, bigint>): void {
    const times = [...captureNs.values()];
    if (times.length < 2) return;
    const skewNs = times.reduce((a, b) => (a > b ? a : b)) - times.reduce((a, b) => (a < b ? a : b));
    this.steps++;
    this.sumNs += skewNs;
    if (skewNs > this.maxNs) this.maxNs = skewNs;
  }

  /** `{steps, skew_ms_max, skew_ms_mean}`; zeros when no step had several cameras. */
  summary(): { steps: number; skew_ms_max: number; skew_ms_mean: number } {
    return {
      steps: this.steps,
      skew_ms_max: Number(this.maxNs) / 1e6,
      skew_ms_mean: this.steps ? Number(this.sumNs) / this.steps / 1e6 : 0,
    };
  }
}
