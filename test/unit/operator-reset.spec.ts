import { strict as assert } from "node:assert";
import { nextAgentState } from "../../cell-agent/agent-state.js";
import { sceneAttention } from "../../cell-agent/devices/scene/scene-attention.js";
import { SceneReadyGate, type PendingScene } from "../../cell-agent/devices/scene/scene-ready-gate.js";

const scene: PendingScene = {
  since: "2026-01-01T00:00:00.000Z", lighting: "dim",
  objects: { cube: { object: "cube", positionM: [0.22, 0.01, 0.015], yawRad: 0.5 } },
  distractors: [{ object: "mug", positionM: [0.1, 0.2, 0], yawRad: 0 }],
};

describe("operator resets on the cell agent", () => {
  it("the agent is awaiting_reset while a reset waits for a person, busy again after", () => {
    let state = nextAgentState("idle", "assign");
    state = nextAgentState(state, "await_person");
    assert.equal(state, "awaiting_reset");
    assert.equal(nextAgentState(state, "welcome"), "awaiting_reset");
    assert.equal(nextAgentState(state, "estop"), "estopped");
    assert.equal(nextAgentState(state, "episode_end"), "idle");
    assert.equal(nextAgentState(state, "person_done"), "busy");
    assert.throws(() => nextAgentState("idle", "await_person"), /cannot await person while idle/);
  });

  it("the gate tells subscribers when a person is needed and when not, and reports the wait", async () => {
    let nowMs = 1000;
    const gate = new SceneReadyGate(() => nowMs);
    const seen: Array<PendingScene | null> = [];
    gate.subscribe((pending) => seen.push(pending));
    const waiting = gate.wait(scene, 60_000, () => null);
    assert.deepEqual(seen, [scene]);
    nowMs = 8500;
    assert.equal(gate.confirm(), true);
    assert.deepEqual(await waiting, { waitedMs: 7500 });
    assert.deepEqual(seen, [scene, null]);
    assert.equal(gate.confirm(), false, "nothing left to confirm");
  });

  it("cancel() ends the wait with the reason (an aborted episode does not wait out the timeout)", async () => {
    const gate = new SceneReadyGate();
    const waiting = gate.wait(scene, 60_000, () => null);
    assert.equal(gate.cancel("a person aborted the episode at the operator station"), true);
    await assert.rejects(waiting, /aborted the episode at the operator station/);
    assert.equal(gate.pending, null);
    assert.equal(gate.cancel("again"), false);
  });

  it("the Attention scene carries each target pose with the task's tolerance in metres", () => {
    const wire = sceneAttention(scene, { cube: { object: "cube", pose: [0.22, 0, 0.015, 0], tolMm: 5 } });
    assert.deepEqual(wire, {
      lighting: "dim",
      objects: { cube: { object: "cube", position_m: [0.22, 0.01, 0.015], yaw_rad: 0.5, tolerance_m: 0.005 } },
      distractors: [{ object: "mug", position_m: [0.1, 0.2, 0], yaw_rad: 0 }],
      cameras: {},
    });
    assert.equal("tolerance_m" in sceneAttention(scene, {}).objects.cube, false);
  });
});
