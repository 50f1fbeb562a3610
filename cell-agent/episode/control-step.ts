/**
 * The control loop's per-step work that does not decide anything: asking the due cameras for frames
 * and building the task monitor's signal frame. They are functions of their own, not code inside
 * `runEpisode`, so V8 optimizes each small function once with the shapes it always sees; inside a
 * ~370-line async function they were compiled with it, twice a cell at 0.5-0.9 s of compile CPU each,
 * and lost with it on every deopt anywhere in the loop.
 */
import type { LiveTap } from "../link/live-feed.js";
import type { McapRecorder } from "../recording/mcap-recorder.js";
import type { Camera, CameraFrame, JointState, ObjectPose, Wrench } from "../hardware/types.js";
import type { CameraSkewStats } from "./camera-skew.js";
import { yawOf } from "./observation.js";
import type { SignalFrame } from "./task-monitor.js";

/** A camera's schedule over an episode: its period and when its next frame is due. */
export interface CameraSchedule {
  readonly camera: Camera;
  readonly periodNs: bigint;
  /** Undefined before the episode's first frame (due at once). */
  nextCaptureNs: bigint | undefined;
}

/** What a step's capture writes to: the latest frame per camera, the recording, the live view, the skew statistics. */
export interface CaptureSinks {
  readonly frames: Map<string, CameraFrame>;
  readonly recorder: McapRecorder;
  readonly live: LiveTap | undefined;
  readonly skew: CameraSkewStats;
}

/**
 * Asks every camera due at `nowNs` at once (their frames are as close together as the devices allow),
 * records each frame and its camera's next due time; returns the cameras that captured this step.
 */
export async function captureDueCameras(schedules: readonly CameraSchedule[], nowNs: bigint, sinks: CaptureSinks): Promise<CameraSchedule[]> {
  const due: CameraSchedule[] = [];
  for (const schedule of schedules) if (nowNs >= (schedule.nextCaptureNs ?? nowNs)) due.push(schedule);
  if (due.length === 0) return due;
  const frames = await Promise.all(due.map((schedule) => schedule.camera.capture()));
  for (let i = 0; i < due.length; i++) {
    const schedule = due[i]!;
    const frame = frames[i]!;
    const name = schedule.camera.name;
    const dueNs = schedule.nextCaptureNs ?? nowNs;
    sinks.frames.set(name, frame);
    sinks.recorder.camera(nowNs, name, frame);
    sinks.live?.frame(name, frame);
    schedule.nextCaptureNs = dueNs + schedule.periodNs > nowNs ? dueNs + schedule.periodNs : nowNs + schedule.periodNs;
  }
  if (due.length > 1) {
    const captureNs = new Map<string, bigint>();
    for (let i = 0; i < due.length; i++) captureNs.set(due[i]!.camera.name, frames[i]!.tNs);
    sinks.recorder.cameraSync(nowNs, captureNs);
    sinks.skew.add(captureNs);
  }
  return due;
}

/** The step's readings as the task monitor and event detector see them (no events yet). */
export function signalFrameOf(
  tS: number,
  jointNames: readonly string[],
  joints: JointState | undefined,
  gripper: { opening: number; holding: boolean } | undefined,
  wrench: Wrench | undefined,
  poses: readonly ObjectPose[] | undefined,
): Omit<SignalFrame, "events"> {
  // Object.fromEntries defines own properties, so a pose or joint named like an Object.prototype member
  // ("__proto__") is a name like any other; plain assignment would not be.
  const byName: SignalFrame["poses"] = Object.fromEntries((poses ?? []).map((p) => [p.name, { x: p.positionM[0], y: p.positionM[1], z: p.positionM[2], yaw: yawOf(p.orientation) }]));
  const jointsByName = joints ? Object.fromEntries(jointNames.map((name, i) => [name, joints.positionRad[i]!])) : undefined;
  return { tS, poses: byName, gripper, ft: wrench ? { forceN: wrench.forceN, torqueNm: wrench.torqueNm } : undefined, joints: jointsByName };
}
