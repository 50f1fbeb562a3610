import { strict as assert } from "node:assert";
import { failureClusterOf } from "../../cell-agent/episode/failure-cluster.js";

const trace = (...names: string[]) => names.map((name) => ({ name }));

describe("agent failure clusters", () => {
  it("names a contact spike without any grasp a collision", () => {
    assert.equal(failureClusterOf(trace("contact_spike", "gripper_closed")), "collision");
  });
  it("names a grasp acquired then lost a drop", () => {
    assert.equal(failureClusterOf(trace("gripper_closed", "grasp_acquired", "object_lifted", "grasp_lost")), "drop");
  });
  it("names a grasp lost with a contact spike after the grasp a drop, not a collision", () => {
    assert.equal(failureClusterOf(trace("gripper_closed", "grasp_acquired", "contact_spike", "grasp_lost")), "drop");
  });
  it("names a closed gripper that never held anything a missed grasp", () => {
    assert.equal(failureClusterOf(trace("gripper_closed", "gripper_opened", "gripper_closed")), "missed_grasp");
  });
  it("names a gripper that never closed no_attempt", () => {
    assert.equal(failureClusterOf(trace()), "no_attempt");
  });
  it("names a held-but-unfinished task a timeout", () => {
    assert.equal(failureClusterOf(trace("gripper_closed", "grasp_acquired", "object_lifted")), "timeout");
  });
});
