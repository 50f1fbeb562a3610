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
 * 8.4 s that way.) Slow creep still counts as progress: it widens the window's span.
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
    if (this.moving()) {
      // Still moving: the window begins again at the oldest reading the robot may have been at rest from.
      this.startS = this.restingSince();
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

  /** True when the readings in the window span more than a threshold (missing readings count for neither side). */
  private moving(): boolean {
    return spansBeyond(this.readings, JOINT_PROGRESS_RAD, FINGERTIP_PROGRESS_M);
  }

  /**
   * The time of the oldest reading from which the window's readings up to the newest stay within the thresholds:
   * the robot has been at rest since then (drops the readings before it).
   */
  private restingSince(): number {
    while (this.readings.length > 1 && spansBeyond(this.readings, JOINT_PROGRESS_RAD, FINGERTIP_PROGRESS_M)) this.readings.shift();
    return this.readings[0]!.tS;
  }
}

/** True when some joint's readings span more than `jointRad`, or the fingertip's box has a diagonal over `fingertipM`. */
function spansBeyond(readings: ReadonlyArray<{ jointsRad?: readonly number[]; fingertipM?: readonly [number, number, number] }>, jointRad: number, fingertipM: number): boolean {
  const low: number[] = [], high: number[] = [];
  const tipLow = [Infinity, Infinity, Infinity], tipHigh = [-Infinity, -Infinity, -Infinity];
  for (const r of readings) {
    r.jointsRad?.forEach((p, i) => {
      if (!(p >= (low[i] ?? Infinity))) low[i] = p;
      if (!(p <= (high[i] ?? -Infinity))) high[i] = p;
    });
    if (r.fingertipM) for (let a = 0; a < 3; a++) {
      tipLow[a] = Math.min(tipLow[a]!, r.fingertipM[a]!);
      tipHigh[a] = Math.max(tipHigh[a]!, r.fingertipM[a]!);
    }
  }
  if (high.some((h, i) => h - low[i]! > jointRad)) return true;
  return tipLow[0]! !== Infinity && Math.hypot(tipHigh[0]! - tipLow[0]!, tipHigh[1]! - tipLow[1]!, tipHigh[2]! - tipLow[2]!) > fingertipM;
}
