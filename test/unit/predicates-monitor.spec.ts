import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { compileTaskMonitor, type SignalFrame, type TaskPredicateSpec, type TaskMonitor } from "../../protocol/predicates/index.js";

const pickCube: TaskPredicateSpec = JSON.parse(
  readFileSync(new URL("../../coordinator/catalog/tasks/pick-cube-v1.json", import.meta.url), "utf8"),
);

type Pose = SignalFrame["poses"][string];
const at = (x: number, y: number, z: number): Pose => ({ x, y, z, yaw: 0 });

function frame(tS: number, rest: Partial<Omit<SignalFrame, "tS">> = {}): SignalFrame {
  return { tS, poses: {}, events: [], ...rest };
}

/** Frames every 0.1 s from `fromS` to `toS` inclusive, built by `make`. */
function feed(monitor: TaskMonitor, fromS: number, toS: number, make: (tS: number) => SignalFrame): void {
  for (let i = Math.round(fromS * 10); i <= Math.round(toS * 10); i++) monitor.update(make(i / 10));
}

/** A monitor of one success predicate named "p". */
const single = (expression: string) => compileTaskMonitor({ success_predicates: [{ p: expression }] });
const cubeAt = (z: number) => frame(0, { poses: { cube: at(0.2, 0, z) } });

describe("predicate monitor: pick-cube episode", () => {
  it("reaches the stages in order and succeeds once the cube has been up for 1 s", () => {
    const monitor = compileTaskMonitor(pickCube);
    // The gripper descends onto the cube by 1.0 s, closes at 1.5 s, lifts from 1.6 s at 10 cm/s.
    feed(monitor, 0, 4, (tS) => {
      const cubeZ = tS < 1.6 ? 0.015 : Math.min(0.2, 0.015 + (tS - 1.6) * 0.1);
      const gripperZ = tS < 1 ? 0.3 - tS * 0.28 : cubeZ + 0.005;
      return frame(tS, {
        poses: { cube: at(0.22, 0, cubeZ), gripper: at(0.22, 0, gripperZ) },
        gripper: { opening: tS < 1.5 ? 1 : 0.3, holding: tS >= 1.5 },
      });
    });
    const status = monitor.status();
    // The cube passes 0.06 m at 2.1 s (0.015 + 0.5 * 0.1 = 0.065); 1 s later it has held.
    assert.deepEqual(status, {
      success: true,
      predicates: { lifted: { satisfied: true, atS: 3.1 } },
      stages: {
        reached: { reached: true, atS: 1 },
        grasped: { reached: true, atS: 1.5 },
        lifted: { reached: true, atS: 3.1 },
      },
    });
  });

  it("reports nothing reached before the first frame", () => {
    assert.deepEqual(compileTaskMonitor(pickCube).status(), {
      success: false,
      predicates: { lifted: { satisfied: false } },
      stages: { reached: { reached: false }, grasped: { reached: false }, lifted: { reached: false } },
    });
  });
});

describe("predicate monitor: for-duration", () => {
  it("restarts the clock when the condition breaks", () => {
    const monitor = single("pose(cube).z > 0.06 for 1.0s");
    // Up from 1.0 s, a dip at 1.9 s, up again from 2.0 s.
    feed(monitor, 0, 3.5, (tS) => frame(tS, { poses: { cube: at(0.2, 0, tS >= 1 && Math.abs(tS - 1.9) > 1e-6 ? 0.1 : 0.02) } }));
    assert.deepEqual(monitor.status().predicates.p, { satisfied: true, atS: 3 });
  });

  it("is not met by a condition that never holds long enough", () => {
    const monitor = single("gripper.holding for 1s");
    feed(monitor, 0, 5, (tS) => frame(tS, { gripper: { opening: 0, holding: Math.round(tS * 10) % 10 !== 9 } }));
    assert.deepEqual(monitor.status(), { success: false, predicates: { p: { satisfied: false } }, stages: {} });
  });

  it("treats a frame where the object is not tracked as a break", () => {
    const monitor = single("height(cube) > 0.06 for 500ms");
    feed(monitor, 0, 2, (tS) => frame(tS, { poses: Math.abs(tS - 0.3) < 1e-6 ? {} : { cube: at(0, 0, 0.1) } }));
    assert.deepEqual(monitor.status().predicates.p, { satisfied: true, atS: 0.9 });
  });

  it("counts the time between frames, whatever their spacing", () => {
    const monitor = single("gripper.holding for 1s");
    for (const tS of [0.25, 0.9, 1.25]) monitor.update(frame(tS, { gripper: { opening: 0, holding: true } }));
    assert.deepEqual(monitor.status().predicates.p, { satisfied: true, atS: 1.25 });
  });
});

describe("predicate monitor: within", () => {
  it("is met when the condition holds before the deadline", () => {
    const monitor = single("event(done) within 2s");
    monitor.update(frame(0));
    monitor.update(frame(2, { events: ["done"] }));
    assert.deepEqual(monitor.status().predicates.p, { satisfied: true, atS: 2 });
  });

  it("is never met once the deadline has passed", () => {
    const monitor = single("event(done) within 2s");
    monitor.update(frame(0));
    monitor.update(frame(2.1, { events: ["done"] }));
    monitor.update(frame(2.2, { events: ["done"] }));
    assert.equal(monitor.status().success, false);
  });

  it("needs the for-duration to complete before the deadline", () => {
    const late = single("gripper.holding for 1s within 2s");
    feed(late, 0, 4, (tS) => frame(tS, { gripper: { opening: 0, holding: tS >= 1.5 } }));
    assert.deepEqual(late.status().predicates.p, { satisfied: false });

    const early = single("gripper.holding within 2s for 1s");
    feed(early, 0, 4, (tS) => frame(tS, { gripper: { opening: 0, holding: tS >= 1 } }));
    assert.deepEqual(early.status().predicates.p, { satisfied: true, atS: 2 });
  });
});

describe("predicate monitor: latching and missing data", () => {
  it("stays satisfied after the condition stops holding", () => {
    const monitor = single("height(cube) > 5cm");
    monitor.update(frame(0, { poses: { cube: at(0, 0, 0.02) } }));
    monitor.update(frame(1, { poses: { cube: at(0, 0, 0.08) } }));
    monitor.update(frame(2, { poses: { cube: at(0, 0, 0.02) } }));
    monitor.update(frame(3));
    assert.deepEqual(monitor.status(), { success: true, predicates: { p: { satisfied: true, atS: 1 } }, stages: {} });
  });

  it("never satisfies a comparison on data the frame lacks, even negated", () => {
    const expressions = [
      "height(cube) > 0.05",
      "not (height(cube) > 0.05)",
      "distance(gripper, cube) < 1",
      "not gripper.holding",
      "ft.force < 100",
      "joint(elbow) < 10",
    ];
    for (const expression of expressions) {
      const monitor = single(expression);
      monitor.update(frame(0, { poses: { gripper: at(0, 0, 0) }, joints: { wrist: 0 } }));
      assert.equal(monitor.status().success, false, expression);
    }
  });

  it("lets a known-true side decide an or, and a known-false side decide an and", () => {
    const either = compileTaskMonitor({
      success_predicates: [{ or: "height(cube) > 0.05 or time >= 0" }, { and: "not (height(cube) > 0.05 and time < 0)" }],
    });
    either.update(frame(0));
    assert.equal(either.status().success, true);
  });

  it("reads forces, torques, joints and the gripper opening", () => {
    const monitor = compileTaskMonitor({
      success_predicates: [
        { force: "ft.force > 4.9N and ft.force < 5.1N" },
        { force_z: "ft.force_z == -4" },
        { torque: "ft.torque > 0.49 and ft.torque < 0.51" },
        { joint: "joint(elbow) > 89deg and joint(elbow) < 91deg" },
        { open: "gripper.opening >= 0.5" },
        { yaw: "pose(cube).yaw < -10deg" },
      ],
    });
    monitor.update(
      frame(0, {
        ft: { forceN: [3, 0, -4], torqueNm: [0, 0.3, 0.4] },
        joints: { elbow: Math.PI / 2 },
        gripper: { opening: 0.5, holding: false },
        poses: { cube: { x: 0, y: 0, z: 0, yaw: -0.2 } },
      }),
    );
    assert.deepEqual(
      Object.entries(monitor.status().predicates).filter(([, status]) => !status.satisfied),
      [],
    );
  });

  it("takes initial() from the first frame in which it can be computed", () => {
    const monitor = single("height(cube) - initial(height(cube)) > 4cm");
    monitor.update(frame(0)); // the tracker has not found the cube yet
    monitor.update(frame(0.1, { poses: { cube: at(0, 0, 0.1) } }));
    monitor.update(frame(0.2, { poses: { cube: at(0, 0, 0.13) } }));
    assert.equal(monitor.status().success, false);
    monitor.update(frame(0.3, { poses: { cube: at(0, 0, 0.15) } }));
    assert.deepEqual(monitor.status().predicates.p, { satisfied: true, atS: 0.3 });
  });

  it("sees an event only in its own frame", () => {
    const monitor = single("event(bell) and time > 1");
    monitor.update(frame(0.5, { events: ["bell"] }));
    monitor.update(frame(1.5));
    assert.equal(monitor.status().success, false);
    monitor.update(frame(2, { events: ["other", "bell"] }));
    assert.equal(monitor.status().success, true);
  });
});

describe("predicate monitor: stages", () => {
  const task: TaskPredicateSpec = {
    success_predicates: [{ done: "event(done)" }],
    stages: [{ first: "event(a)" }, { second: "event(b)" }, { held: "gripper.holding for 1s" }],
  };
  const holding = (holdingNow: boolean) => ({ gripper: { opening: 0, holding: holdingNow } });

  it("does not reach a stage before the one before it", () => {
    const monitor = compileTaskMonitor(task);
    monitor.update(frame(0, { events: ["b"], ...holding(true) }));
    monitor.update(frame(1, { events: ["a"], ...holding(true) }));
    monitor.update(frame(2, holding(true)));
    assert.deepEqual(monitor.status().stages, {
      first: { reached: true, atS: 1 },
      second: { reached: false },
      held: { reached: false },
    });
  });

  it("may reach consecutive stages in the same frame", () => {
    const monitor = compileTaskMonitor(task);
    monitor.update(frame(0.5, { events: ["a", "b"] }));
    assert.deepEqual(monitor.status().stages.second, { reached: true, atS: 0.5 });
  });

  it("starts a stage's for-duration when the stage before is reached", () => {
    const monitor = compileTaskMonitor(task);
    feed(monitor, 0, 4, (tS) => frame(tS, { events: tS === 2 ? ["a", "b"] : [], ...holding(true) }));
    assert.deepEqual(monitor.status().stages.held, { reached: true, atS: 3 });
    assert.equal(monitor.status().success, false);
  });

  it("keeps stages separate from success", () => {
    const monitor = compileTaskMonitor(task);
    monitor.update(frame(0, { events: ["done"] }));
    assert.deepEqual(monitor.status().success, true);
    assert.deepEqual(monitor.status().stages.first, { reached: false });
  });
});

describe("predicate monitor: frames", () => {
  it("rejects a frame older than the previous one", () => {
    const monitor = single("time > 1");
    monitor.update(frame(1));
    assert.throws(() => monitor.update(frame(0.5)), /frame\.tS must be a finite number not less than the previous frame's 1; got 0\.5/);
    assert.throws(() => monitor.update(frame(NaN)), RangeError);
  });
});
