/**
 * Decides when an episode has stalled: for a window of episode time (STALL_WINDOW_S for runs with
 * `interventions: "on_stall"`; the plan's `idle_end_s` for the idle end of runs without
 * interventions) no joint moved more than JOINT_PROGRESS_RAD and the fingertip (the mocap's
 * "gripper" pose, when the cell tracks it) moved less than FINGERTIP_PROGRESS_M, while the task's
 * success predicates are not all satisfied. Progress is measured from an anchor (the readings
 * when the current still spell began), so slow creep accumulates and counts as progress.
 */

/** Episode seconds without progress before the episode counts as stalled. */
export const STALL_WINDOW_S = 5;
/** A joint moving this far from the anchor is progress (encoder noise is ~0.001 rad). */
export const JOINT_PROGRESS_RAD = 0.02;
/** The fingertip moving this far from the anchor is progress. */
export const FINGERTIP_PROGRESS_M = 0.005;

export interface StallFrame {
  tS: number;
  /** Measured joint positions, or undefined when the read failed this step. */
  jointsRad?: readonly number[];
  /** Fingertip position in the world frame, metres, when tracked. */
  fingertipM?: readonly [number, number, number];
  /** True while every success predicate holds: a settled success is not a stall. */
  succeeded: boolean;
}

export class StallDetector {
  /** `windowS`: episode seconds without progress before the episode counts as stalled. */
  constructor(private readonly windowS = STALL_WINDOW_S) {}

  private anchor: { tS: number; jointsRad?: readonly number[]; fingertipM?: readonly [number, number, number] } | undefined;

  /** Feeds one control step; true when the episode has just stalled (the window then starts over). */
  update(frame: StallFrame): boolean {
    if (frame.succeeded || !this.anchor || this.progressed(frame)) {
      this.restart(frame);
      return false;
    }
    if (frame.tS - this.anchor.tS < this.windowS) return false;
    this.restart(frame);
    return true;
  }

  /** Starts a new window at this frame (call after an intervention moved the scene). */
  restart(frame: Pick<StallFrame, "tS" | "jointsRad" | "fingertipM">): void {
    this.anchor = { tS: frame.tS, jointsRad: frame.jointsRad, fingertipM: frame.fingertipM };
  }

  private progressed(frame: StallFrame): boolean {
    const anchor = this.anchor!;
    // Missing readings neither prove progress nor keep the anchor from ageing; fill them in.
    anchor.jointsRad ??= frame.jointsRad;
    anchor.fingertipM ??= frame.fingertipM;
    const joints = frame.jointsRad && anchor.jointsRad
      ? frame.jointsRad.some((p, i) => Math.abs(p - anchor.jointsRad![i]) > JOINT_PROGRESS_RAD)
      : false;
    const fingertip = frame.fingertipM && anchor.fingertipM
      ? Math.hypot(...frame.fingertipM.map((v, i) => v - anchor.fingertipM![i])) > FINGERTIP_PROGRESS_M
      : false;
    return joints || fingertip;
  }
}
