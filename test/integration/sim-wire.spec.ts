/**
 * Simulated cells with their devices on the wire: the agent-side objects are the real drivers
 * (SerialServoBus, RosMotorBus, NatNetClient) talking to emulators whose state is the SimWorld's.
 */
import assert from "node:assert/strict";
import { NatNetClient } from "../../cell-agent/devices/natnet/natnet-client.js";
import { RosMotorBus } from "../../cell-agent/devices/ros/ros-motor-bus.js";
import { SerialServoBus } from "../../cell-agent/devices/servo/servo-bus.js";
import type { ResetPlan } from "../../cell-agent/hardware/types.js";
import { SimMotorBus } from "../../simulators/devices/sim-motor-bus.js";
import { createSimulatedCell, type SimulatedCell } from "../../simulators/sim-cell-hardware.js";
import { FirmwareLabelledBus } from "../../simulators/servo-bus/world-servo-bridge.js";

/** One servo tick (4096 per turn) plus five sigma of the world's 1 mrad encoder noise. */
const READ_TOLERANCE_RAD = (2 * Math.PI) / 4096 + 0.005;

function plan(dof: number): ResetPlan {
  return {
    objects: { cube: { object: "cube", positionM: [0.24, -0.04, 0.015], yawRad: 0.3 } },
    lighting: "nominal",
    distractors: [{ object: "block-blue", positionM: [0.17, 0.06, 0.015], yawRad: 0 }],
    homeRad: new Array(dof).fill(0),
  };
}

async function sleepS(cell: SimulatedCell, seconds: number): Promise<void> {
  await cell.clock.sleepUntil(cell.clock.nowNs() + BigInt(Math.round(seconds * 1e9)));
}

/** A goal vector that moves the world's driven joints (arm and gripper) to distinct places. */
function goalFor(cell: SimulatedCell): number[] {
  const e = cell.world.embodiment;
  const goal = new Array<number>(e.dof).fill(0);
  const arm = [0.3, 0.25, -0.35, 0.2, 0.4];
  e.armJoints.forEach((joint, k) => (goal[joint] = arm[k]));
  goal[e.gripperJoint] = 0.5 * e.gripperOpenValue;
  return goal;
}

function assertNear(actual: readonly number[], expected: readonly number[], tolerance: number, what: string): void {
  assert.equal(actual.length, expected.length, what);
  actual.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) <= tolerance, `${what}[${i}]: ${v} vs ${expected[i]} (tolerance ${tolerance})`));
}

describe("simulated cells on the wire", function () {
  this.timeout(30_000);
  const cells: SimulatedCell[] = [];
  const open = async (model: string, firmware: string, environment: string, seed = 11) => {
    const cell = await createSimulatedCell({ model, firmware, environment, seed, speed: Infinity });
    cells.push(cell);
    return cell;
  };
  afterEach(async () => {
    for (const cell of cells.splice(0)) await cell.close();
  });

  it("so101: the SerialServoBus's goal writes move the world's joints and its reads return the world's state", async () => {
    const cell = await open("so101", "3.11", "tabletop@1");
    assert.ok(cell.motors instanceof SerialServoBus, "the agent gets the real Feetech driver");
    assert.equal(await cell.motors.readFirmware(), "3.11");
    await cell.scene.reset(plan(6));
    const goal = goalFor(cell);
    await cell.motors.writeGoalPositions(goal);
    assertNear(cell.world.servos.goalRad, goal, Math.PI / 4096 + 1e-9, "world goals after one sync write");
    await sleepS(cell, 2);
    assertNear(cell.world.servos.positionRad, goal, 0.01, "world joints reached the goals");
    const state = await cell.motors.readState();
    assert.equal(state.tNs, cell.world.tNs);
    assertNear(state.positionRad, cell.world.servos.positionRad, READ_TOLERANCE_RAD, "read positions");
    assertNear(state.temperatureC, cell.world.servos.temperatureC, 0.5 + 1e-9, "read temperatures (1 degree register)");
    const counters = (cell.motors as SerialServoBus).counters();
    assert.equal(counters.timeouts + counters.retries + counters.txErrors, 0, JSON.stringify(counters));
  });

  it("so101: torque off and the e-stop reach the world through the torque enable registers", async () => {
    const cell = await open("so101", "3.10", "bench-bare@1");
    assert.equal(await cell.motors.readFirmware(), "3.10");
    await cell.motors.setTorque(false);
    assert.equal(cell.world.servos.torqueEnabled, false);
    await cell.motors.setTorque(true);
    assert.equal(cell.world.servos.torqueEnabled, true);
    cell.estop.press();
    assert.equal(cell.world.servos.torqueEnabled, false, "the e-stop cuts motor power whatever the registers say");
    cell.estop.release();
    await cell.motors.readState();
    assert.equal(cell.world.servos.torqueEnabled, true, "power returns to the servos' torque setting");
  });

  it("fr3: the Dynamixel stand-in reports the Franka firmware pin and moves the world", async () => {
    const cell = await open("fr3", "5.9.0", "bench-bare@1");
    assert.ok(cell.motors instanceof FirmwareLabelledBus);
    assert.equal(await cell.motors.readFirmware(), "5.9.0");
    const goal = goalFor(cell);
    await cell.motors.writeGoalPositions(goal);
    await sleepS(cell, 2);
    assertNear((await cell.motors.readState()).positionRad, cell.world.servos.positionRad, READ_TOLERANCE_RAD, "read positions");
    assertNear(cell.world.servos.positionRad, goal, 0.01, "world joints reached the goals");
  });

  it("aloha: each follower arm on its own Dynamixel bus (XM540-W270, XM430-W350) moves the world; torque off reaches both", async () => {
    const cell = await open("aloha", "2.1", "tabletop@1");
    assert.ok(cell.motors instanceof FirmwareLabelledBus);
    assert.equal(await cell.motors.readFirmware(), "2.1");
    const buses = cell.servoWire!.buses;
    assert.deepEqual(buses.map((b) => [b.name, b.joints.length]), [["left", 7], ["right", 7]]);
    assert.deepEqual([1, 5, 6, 7].map((id) => buses[1].mock.emulator.servo(id).get("modelNumber")), [1120, 1120, 1020, 1020], "XM540-W270 to wrist_angle, XM430-W350 wrist_rotate and gripper");
    const goal = goalFor(cell);
    const right = cell.motors.jointNames.indexOf("right_elbow");
    goal[right] = -0.3;
    await cell.motors.writeGoalPositions(goal);
    // The simulated world holds the right arm at home (embodiments.ts); its servo received the goal all the same.
    assert.equal(buses[1].mock.emulator.servo(3).get("goalPosition"), Math.round(2048 - 0.3 * 4096 / (2 * Math.PI)), "right_elbow (right bus, id 3) received its goal");
    await sleepS(cell, 2);
    assertNear(cell.world.servos.positionRad, goal.map((v, i) => (i === right ? cell.world.servos.positionRad[i] : v)), 0.01, "the driven left arm reached its goals");
    assertNear((await cell.motors.readState()).positionRad, cell.world.servos.positionRad, READ_TOLERANCE_RAD, "read positions, both buses");
    await cell.motors.setTorque(false);
    assert.equal(cell.world.servos.torqueEnabled, false);
    for (const b of buses) for (let id = 1; id <= 7; id++) assert.equal(b.mock.emulator.servo(id).get("torqueEnable"), 0, `${b.name} id ${id}`);
  });

  it("g1: RosMotorBus commands move the world's joints and /joint_states carries the world's state", async () => {
    const cell = await open("g1", "1.4.2", "kitchen-replica@2");
    assert.ok(cell.motors instanceof RosMotorBus, "the agent gets the real rosbridge driver");
    assert.equal(await cell.motors.readFirmware(), "1.4.2");
    await cell.scene.reset(plan(23));
    await cell.motors.setTorque(true);
    const goal = goalFor(cell);
    await cell.motors.writeGoalPositions(goal);
    await sleepS(cell, 0.02);
    assertNear(cell.world.servos.goalRad, goal, 1e-12, "world goals");
    await sleepS(cell, 2);
    assertNear(cell.world.servos.positionRad, goal, 0.01, "world joints reached the goals");
    const state = await cell.motors.readState();
    assert.equal(state.tNs, cell.world.tNs, "the reading is of this instant, not an older step");
    assertNear(state.positionRad, cell.world.servos.positionRad, 0.005, "read positions");
    assertNear(state.currentA, cell.world.servos.currentA, 0.03, "effort carries motor current");
    await cell.motors.setTorque(false);
    assert.equal(cell.world.servos.torqueEnabled, false);
  });

  it("is deterministic for a seed: the same commands read back the same values, joints and mocap", async () => {
    const run = async (model: string, firmware: string) => {
      const cell = await open(model, firmware, "tabletop@1", 5);
      await cell.scene.reset(plan(cell.world.embodiment.dof));
      const trace: string[] = [];
      const goal = goalFor(cell);
      for (let k = 0; k < 40; k++) {
        await cell.motors.writeGoalPositions(goal.map((g) => g * Math.min(1, k / 20)));
        await sleepS(cell, 1 / 30);
        const [state, poses] = await Promise.all([cell.motors.readState(), cell.mocap!.readPoses()]);
        trace.push(JSON.stringify([state.tNs.toString(), state.positionRad, poses.poses]));
      }
      await cell.close();
      return trace;
    };
    for (const [model, firmware] of [["so101", "3.11"], ["stretch3", "0.8.4"]]) {
      const a = await run(model, firmware);
      const b = await run(model, firmware);
      assert.deepEqual(a, b, `${model} wire cell is deterministic`);
    }
  });

  it("mocap comes through the real NatNet client; poses match the world's within marker noise", async () => {
    const cell = await open("so101", "3.11", "tabletop@1");
    assert.ok(cell.mocap instanceof NatNetClient);
    await cell.scene.reset(plan(6));
    await sleepS(cell, 0.1);
    const { tNs, poses } = await cell.mocap.readPoses();
    assert.equal(tNs, cell.world.tNs);
    const truth = cell.world.poses();
    assert.deepEqual(poses.map((p) => p.name), truth.map((p) => p.name));
    poses.forEach((p, i) => assertNear(p.positionM, truth[i].positionM, 0.0015, `${p.name} position`));
  });

  it("falls back to the in-process devices on request", async () => {
    const cell = await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, speed: Infinity, devices: "in-process" });
    cells.push(cell);
    assert.ok(cell.motors instanceof SimMotorBus);
    assert.ok(!(cell.mocap instanceof NatNetClient));
    await assert.rejects(createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, speed: 1, devices: "usb" as never }), /"wire" or "in-process"/);
  });
});
