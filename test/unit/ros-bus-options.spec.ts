import { strict as assert } from "node:assert";
import { compileRosMotorBusOptions } from "../../cell-agent/devices/ros/ros-bus-options.js";
import { nextRosLinkState } from "../../cell-agent/devices/ros/ros-link.js";

describe("ROS bus options", () => {
  const base = { url: "ws://10.0.0.12:9090", jointNames: ["a", "b"] };

  it("fills the documented defaults", () => {
    const o = compileRosMotorBusOptions(base);
    assert.equal(o.jointStatesTopic, "/joint_states");
    assert.equal(o.commandTopic, "/joint_group_position_controller/commands");
    assert.equal(o.setTorqueService, "/assay/set_torque");
    assert.equal(o.firmwareService, "/assay/firmware");
    assert.deepEqual(o.commandJointNames, ["a", "b"]);
    assert.deepEqual(o.reconnect, { initialMs: 100, maxMs: 5000, jitter: 0.5 });
    assert.equal(o.maxStateAgeMs, 100);
    assert.equal(o.maxStampLagMs, null);
    assert.equal(o.gripper, null);
    assert.deepEqual(compileRosMotorBusOptions(o), o, "compiling compiled options changes nothing");
  });

  it("rejects unknown keys, relative names and command orders that are not a reordering", () => {
    assert.throws(() => compileRosMotorBusOptions({ ...base, jointStateTopic: "/x" }), /unknown ROS bus option "jointStateTopic"/);
    assert.throws(() => compileRosMotorBusOptions({ ...base, commandTopic: "commands" }), /absolute ROS name/);
    assert.throws(() => compileRosMotorBusOptions({ ...base, commandJointNames: ["a", "c"] }), /reordering of jointNames; not in jointNames: \["c"\]/);
    assert.throws(() => compileRosMotorBusOptions({ ...base, url: "http://x" }), /ws:\/\/ or wss:\/\//);
    assert.throws(() => compileRosMotorBusOptions({ ...base, reconnect: { initialMs: 500, maxMs: 100 } }), /reconnect.maxMs/);
    assert.throws(() => compileRosMotorBusOptions({ ...base, gripper: { jointName: "a", closedPositionRad: 1, openPositionRad: 1 } }), /must differ/);
  });

  it("link states move only along legal transitions", () => {
    assert.equal(nextRosLinkState("connecting", "connected"), "connected");
    assert.throws(() => nextRosLinkState("closed", "connecting"), /illegal rosbridge link transition closed -> connecting/);
    assert.throws(() => nextRosLinkState("backoff", "connected"), /illegal/);
  });
});
