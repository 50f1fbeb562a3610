import { strict as assert } from "node:assert";
import { failureClusterOf } from "../../cell-agent/episode/failure-cluster.js";

const trace = (...names: string[]) => names.map((name) => ({ name }));

describe("agent failure clusters", () => {
  it("names a contact spike without any grasp a collision", () => {
    assert.equal(failureClusterOf(trace("contact_spike", "gripper_closed")), "collision");
  });
  it("names a grasp acquired then lost dropped", () => {
    assert.equal(failureClusterOf(trace("gripper_closed", "grasp_acquired", "object_lifted", "grasp_lost")), "dropped");
  });
  it("names a grasp lost with a contact spike after the grasp dropped, not a collision", () => {
    assert.equal(failureClusterOf(trace("gripper_closed", "grasp_acquired", "contact_spike", "grasp_lost")), "dropped");
  });
  it("names a closed gripper that never held anything a missed grasp", () => {
    assert.equal(failureClusterOf(trace("gripper_closed", "gripper_opened", "gripper_closed")), "missed_grasp");
  });
  it("names a gripper that never closed no_attempt", () => {
    assert.equal(failureClusterOf(trace()), "no_attempt");
  });
  it("names a held-but-unfinished task without stages a timeout", () => {
    assert.equal(failureClusterOf(trace("gripper_closed", "grasp_acquired", "object_lifted")), "timeout");
  });
  it("names a held-but-unfinished task by the last stage the monitor says it reached", () => {
    const stages = { reached: { reached: true }, grasped: { reached: true }, lifted: { reached: false } };
    assert.equal(failureClusterOf(trace("gripper_closed", "grasp_acquired"), stages), "timeout_after_grasped");
  });
  it("names what the runner ended the episode for before anything in the trace", () => {
    assert.equal(failureClusterOf(trace("contact_spike"), {}, "safety_limit"), "safety_limit");
    assert.equal(failureClusterOf(trace(), {}, "policy_error"), "policy_error");
  });
});
