/**
 * Decides when an episode has stalled: for a window of episode time (STALL_WINDOW_S for runs with
 * `interventions: "on_stall"`; the plan's `idle_end_s` for the idle end of runs without
 * interventions) every joint's readings stayed within JOINT_PROGRESS_RAD of each other and the
 * fingertip's (the mocap's "gripper" pose, when the cell tracks it) within FINGERTIP_PROGRESS_M (the
 * diagonal of the box around them), while the task's success predicates are not all satisfied.
 *
 * The window slides: it holds the readings of the last `windowS` seconds, so the idle time counts
 * from when the robot came to rest, however it got there. (It was once measured from an anchor,
 * the readings when a still spell began: an anchor taken while the arm was still settling could lie
 * just under the threshold from where the arm came to rest, and a sensor's noise then crossed it
 * seconds later and started the spell again. A seeded novice episode ended 12.5 s in instead of
 * 8.2 s that way.) Slow creep still counts as progress: it widens the window's span.
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

  /** Readings since the window began, oldest first; those older than `windowS` before the newest are dropped. */
  private readings: Array<{ tS: number; jointsRad?: readonly number[]; fingertipM?: readonly [number, number, number] }> = [];
  /** When the current window began (its first reading), or undefined before any. */
  private startS: number | undefined;

  /** Feeds one control step; true when the episode has just stalled (the window then starts over). */
  update(frame: StallFrame): boolean {
    if (frame.succeeded || this.startS === undefined) {
      this.restart(frame);
      return false;
    }
    this.readings.push({ tS: frame.tS, jointsRad: frame.jointsRad, fingertipM: frame.fingertipM });
    while (this.readings.length > 1 && this.readings[0]!.tS < frame.tS - this.windowS) this.readings.shift();
    if (this.dropReadingsBeforeRest()) {
      // It moved: the window begins again at the oldest reading it may have been at rest from.
      this.startS = this.readings[0]!.tS;
      return false;
    }
    if (frame.tS - this.startS < this.windowS) return false;
    this.restart(frame);
    return true;
  }

  /** Starts a new window at this frame (call after an intervention moved the scene). */
  restart(frame: Pick<StallFrame, "tS" | "jointsRad" | "fingertipM">): void {
    this.readings = [{ tS: frame.tS, jointsRad: frame.jointsRad, fingertipM: frame.fingertipM }];
    this.startS = frame.tS;
  }

  /**
   * Walks the window from the newest reading back, widening each joint's span and the fingertip's box, and drops
   * the readings from the first that would take a span past its threshold (missing readings count for neither
   * side): what is left is the robot at rest. True when something was dropped, i.e. it moved. One pass.
   */
  private dropReadingsBeforeRest(): boolean {
    const low: number[] = [], high: number[] = [];
    const tipLow = [Infinity, Infinity, Infinity], tipHigh = [-Infinity, -Infinity, -Infinity];
    for (let k = this.readings.length - 1; k >= 0; k--) {
      const { jointsRad, fingertipM } = this.readings[k]!;
      let beyond = false;
      if (jointsRad) {
        for (let i = 0; i < jointsRad.length; i++) {
          const p = jointsRad[i]!;
          low[i] = Math.min(low[i] ?? p, p);
          high[i] = Math.max(high[i] ?? p, p);
          if (high[i]! - low[i]! > JOINT_PROGRESS_RAD) beyond = true;
        }
      }
      if (fingertipM) {
        for (let a = 0; a < 3; a++) {
          tipLow[a] = Math.min(tipLow[a]!, fingertipM[a]!);
          tipHigh[a] = Math.max(tipHigh[a]!, fingertipM[a]!);
        }
        if (Math.hypot(tipHigh[0]! - tipLow[0]!, tipHigh[1]! - tipLow[1]!, tipHigh[2]! - tipLow[2]!) > FINGERTIP_PROGRESS_M) beyond = true;
      }
      if (beyond) {
        this.readings.splice(0, k + 1);
        return true;
      }
    }
    return false;
  }
}
