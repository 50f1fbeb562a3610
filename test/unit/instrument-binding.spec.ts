/**
 * The instrument binding of cells to tasks: which instrument kinds a task reads, which cells can score
 * it (submission), which idle cell may take an episode (scheduling), and the sentence a waiting run shows.
 */
import assert from "node:assert/strict";
import { taskInstrumentKinds } from "../../protocol/predicates/index.js";
import { describeGaps, instrumentCoverage } from "../../coordinator/cells/instrument-coverage.js";
import { liveKinds } from "../../coordinator/cells/registry.js";
import { cellFits, planAssignments, type AvailableCell } from "../../coordinator/scheduler/assignment-plan.js";
import { instrumentWait } from "../../coordinator/scheduler/instrument-wait.js";

const PICK = {
  success_predicates: [{ lifted: "pose(cube).z > 0.06 for 1.0s" }, { released: "not gripper.holding" }],
  stages: [{ near: "distance(gripper, cube) < 0.03" }, { bent: "joint(elbow) > 0" }],
};
const FULL = ["camera", "joint_states", "gripper_state", "ft_wrist", "mocap", "estop"];
const NO_MOCAP = ["camera", "joint_states", "gripper_state", "estop"];

describe("instrument binding", () => {
  it("lists every instrument kind a task's predicates and stages read, once, sorted", () => {
    assert.deepEqual(taskInstrumentKinds(PICK), ["gripper_state", "joint_states", "mocap"]);
    assert.deepEqual(taskInstrumentKinds({ success_predicates: [{ quick: "event(door-open) and time < 5" }] }), []);
  });

  it("a cell with every kind can score the task; one lacking mocap cannot, and is named per predicate", () => {
    const coverage = instrumentCoverage(PICK, [{ cellId: "so101-c", kinds: FULL }, { cellId: "so101-b", kinds: NO_MOCAP }]);
    assert.deepEqual(coverage.able, ["so101-c"]);
    assert.deepEqual(coverage.gaps, [], "some cell can score it: no gaps to report");

    const none = instrumentCoverage(PICK, [{ cellId: "so101-b", kinds: NO_MOCAP }]);
    assert.deepEqual(none.able, []);
    assert.deepEqual(none.gaps.map((g) => [`${g.problem.field}[${g.problem.index}]`, g.problem.name, g.problem.missing, g.lacking.map((l) => l.cellId)]), [
      ["success_predicates[0]", "lifted", ["mocap"], ["so101-b"]],
      ["stages[0]", "near", ["mocap"], ["so101-b"]],
    ]);
    const text = describeGaps(none.gaps, () => NO_MOCAP);
    assert.match(text, /success_predicates\[0\] "lifted" reads instrument mocap: so101-b lacks mocap \(it reports camera, joint_states, gripper_state, estop\)/);
  });

  it("a cell that never reported instruments never makes a task scorable", () => {
    const coverage = instrumentCoverage(PICK, [{ cellId: "so101-d", kinds: null }, { cellId: "so101-b", kinds: NO_MOCAP }]);
    assert.deepEqual(coverage.able, []);
    assert.deepEqual(coverage.silent, ["so101-d"]);
    assert.deepEqual(coverage.reporting, ["so101-b"]);
    assert.equal(coverage.gaps.length, 2);
  });

  it("takes instrument kinds as data: a kind this coordinator has never heard of is carried, not refused", () => {
    assert.deepEqual(instrumentCoverage(PICK, [{ cellId: "x", kinds: [...FULL, "operator"] }]).able, ["x"]);
  });

  it("a kind counts as live while any instrument of it answers", () => {
    const hello = [{ kind: "camera", name: "top" }, { kind: "camera", name: "wrist" }, { kind: "mocap", name: "" }, { kind: "joint_states", name: "" }];
    assert.deepEqual(liveKinds(hello, []), ["camera", "joint_states", "mocap"]);
    assert.deepEqual(liveKinds(hello, [{ kind: "mocap", name: "" }, { kind: "camera", name: "top" }]), ["camera", "joint_states"]);
    assert.deepEqual(liveKinds(hello, [{ kind: "camera", name: "top" }, { kind: "camera", name: "wrist" }]), ["joint_states", "mocap"]);
  });

  it("the scheduler gives an episode only to a cell with every instrument its task reads", () => {
    const pin = { model: "so101", firmware: "3.11", environment: "tabletop@1", instruments: ["gripper_state", "mocap"] };
    const cell = (cellId: string, instruments?: string[]): AvailableCell => ({ cellId, model: "so101", firmware: "3.11", environment: "tabletop@1", ...(instruments ? { instruments } : {}) });
    assert.equal(cellFits(cell("so101-b", NO_MOCAP), pin), false);
    assert.equal(cellFits(cell("so101-c", FULL), pin), true);
    assert.equal(cellFits(cell("legacy"), pin), true, "a cell that does not say is not filtered");
    const plan = planAssignments(
      [{ id: "r1", priority: "standard", created: "2026-01-01T00:00:00Z", model: "so101", firmware: "3.11", environment: "tabletop@1", pendingEpisodeIds: ["e0", "e1"], episodePins: { e0: pin, e1: pin } }],
      [cell("so101-b", NO_MOCAP), cell("so101-c", FULL)],
    );
    assert.deepEqual(plan, [{ runId: "r1", episodeId: "e0", cellId: "so101-c" }], "so101-b lacks mocap; e1 waits for a free capable cell");
  });

  it("a run waits with a sentence naming the instrument and each cell's gap, and none while a cell can serve", () => {
    const what = { task: "pick-cube@v1", pin: "so101@3.11 in tabletop@1", required: ["gripper_state", "mocap"] };
    const note = instrumentWait(what, [
      { cellId: "so101-b", kinds: NO_MOCAP, downKinds: [] },
      { cellId: "so101-c", kinds: FULL, downKinds: ["mocap"] },
    ]);
    assert.equal(
      note,
      "waiting for instrument mocap: task pick-cube@v1 reads it, and no connected cell matching so101@3.11 in tabletop@1 has it now " +
        "(so101-b has no mocap; so101-c's mocap stopped answering); the run goes on when one has",
    );
    assert.equal(instrumentWait(what, [{ cellId: "so101-c", kinds: FULL, downKinds: [] }, { cellId: "so101-b", kinds: NO_MOCAP, downKinds: [] }]), null);
    assert.equal(instrumentWait(what, []), null, "no matching cell connected: the run waits for a cell, not an instrument");
  });
});
