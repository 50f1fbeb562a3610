import { strict as assert } from "node:assert";
import { JOINT_PROGRESS_RAD, STALL_WINDOW_S, StallDetector } from "../../cell-agent/episode/stall-detector.js";

/** Feeds 10 Hz frames from `fromS` to `toS`; returns the times at which the detector fired. */
function feed(detector: StallDetector, fromS: number, toS: number, joints: (tS: number) => number[], succeeded = false): number[] {
  const fired: number[] = [];
  for (let i = Math.round(fromS * 10); i <= Math.round(toS * 10); i++) {
    const tS = i / 10;
    if (detector.update({ tS, jointsRad: joints(tS), succeeded })) fired.push(tS);
  }
  return fired;
}

describe("stall detector", () => {
  it("fires after STALL_WINDOW_S without progress, then starts a new window", () => {
    const still = () => [0.1, 0.2, 0.3];
    assert.deepEqual(feed(new StallDetector(), 0, 12, still), [STALL_WINDOW_S, 2 * STALL_WINDOW_S]);
  });

  it("counts motion beyond the threshold as progress, and encoder noise as none", () => {
    const moving = (tS: number) => [tS * 0.1, 0, 0];
    assert.deepEqual(feed(new StallDetector(), 0, 12, moving), []);
    const noisy = (tS: number) => [Math.sin(tS * 37) * JOINT_PROGRESS_RAD * 0.5, 0, 0];
    assert.deepEqual(feed(new StallDetector(), 0, 6, noisy), [STALL_WINDOW_S]);
  });

  it("never fires while the success predicates hold", () => {
    assert.deepEqual(feed(new StallDetector(), 0, 12, () => [0, 0], true), []);
  });

  it("takes its window from the caller: the idle end's idle_end_s", () => {
    const still = () => [0.1, 0.2, 0.3];
    assert.deepEqual(feed(new StallDetector(3), 0, 7, still), [3, 6]);
    // Moving 0.1 rad/s until 2 s, then still: idle 3 s after the last reading that counted as progress
    // (1.9 s, the first more than JOINT_PROGRESS_RAD past the anchor taken at 1.6 s).
    assert.deepEqual(feed(new StallDetector(3), 0, 7, (tS) => [Math.min(tS, 2) * 0.1, 0, 0]), [4.9]);
  });
});
