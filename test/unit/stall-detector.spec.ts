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
    // Moving 0.1 rad/s until 2 s, then still: idle 3 s after the robot came to rest, the oldest reading the
    // readings since stay within JOINT_PROGRESS_RAD of (1.8 s: 0.18 rad against the final 0.2).
    assert.deepEqual(feed(new StallDetector(3), 0, 7, (tS) => [Math.min(tS, 2) * 0.1, 0, 0]), [4.8]);
  });

  it("counts the idle time from when the robot came to rest, not from a reading taken while it settled", () => {
    // 8 Hz frames (exact in binary). The fingertip comes down 12.5 mm a frame until 3.125 s and rests 4.9 mm
    // below where it was then; one reading at 7.5 s is 0.15 mm further (marker noise). Measured from the reading
    // at 3.125 s, that one would be 5.05 mm away, progress, and the idle end would come 5 s after it (12.5 s);
    // the robot has rested since 3.25 s.
    const restZ = 0.2 - 3.125 * 0.1 - 0.0049;
    const tip = (tS: number): [number, number, number] => [0.25, 0, tS <= 3.125 ? 0.2 - tS * 0.1 : tS === 7.5 ? restZ - 0.00015 : restZ];
    const detector = new StallDetector(5);
    const fired: number[] = [];
    for (let i = 0; i <= 8 * 13; i++) {
      const tS = i / 8;
      if (detector.update({ tS, jointsRad: [0, 0], fingertipM: tip(tS), succeeded: false })) fired.push(tS);
    }
    assert.deepEqual(fired, [8.25]);
  });
});
