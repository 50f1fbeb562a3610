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

  it("reads the same mocap poses after the same placement whatever the cell did before it", async () => {
    // An episode's poses (marker noise included) depend on its plan and the time since its placement, as its
    // joint readings do, not on the cell's earlier episodes or how long it sat idle (the frame grid and the noise
    // start again at a placement).
    const run = async (history: boolean) => {
      const cell = await open("so101", "3.11", "tabletop@1", 5);
      if (history) {
        const other = plan(cell.world.embodiment.dof);
        other.objects.cube!.positionM = [0.2, 0.05, 0.015];
        await cell.scene.reset(other);
        await cell.motors.writeGoalPositions(goalFor(cell));
        await sleepS(cell, 0.4137); // off the 120 Hz grid of the first placement
      }
      await cell.scene.reset(plan(cell.world.embodiment.dof));
      const trace: string[] = [];
      for (let k = 0; k < 20; k++) {
        await cell.motors.writeGoalPositions(goalFor(cell).map((g) => g * Math.min(1, k / 10)));
        await sleepS(cell, 1 / 30);
        const [state, poses] = await Promise.all([cell.motors.readState(), cell.mocap!.readPoses()]);
        trace.push(JSON.stringify([state.positionRad, poses.poses]));
      }
      await cell.close();
      return trace;
    };
    assert.deepEqual(await run(true), await run(false));
  });

  it("stays deterministic when the process is kept off the CPU while a mocap frame is on its way", async () => {
    // The clock sends the newest NatNet frame when it wakes the agent and waits for it to arrive. Here the
    // process is busy for longer than that wait's timeout right after the frame went out (a microtask queued by
    // the world's step runs once the step's send and the wait's timer are set), as a cell on a loaded machine
    // can be: the expired timer then runs before the datagram is read (libuv's timers come before its poll).
    // The agent must still read that frame, as it does when nothing delays it.
    const run = async (starve: boolean) => {
      const cell = await open("so101", "3.11", "tabletop@1", 5);
      await cell.scene.reset(plan(cell.world.embodiment.dof));
      let starveAt: bigint | undefined;
      const advanceTo = cell.world.advanceTo.bind(cell.world);
      cell.world.advanceTo = (tNs: bigint) => {
        advanceTo(tNs);
        if (starveAt === undefined || tNs < starveAt) return;
        starveAt = undefined;
        queueMicrotask(() => {
          const until = performance.now() + 700;
          while (performance.now() < until);
        });
      };
      const trace: string[] = [];
      for (let k = 0; k < 12; k++) {
        await cell.motors.writeGoalPositions(goalFor(cell).map((g) => g * Math.min(1, k / 6)));
        const wakeNs = cell.clock.nowNs() + BigInt(Math.round(1e9 / 30));
        if (starve && k % 4 === 1) starveAt = wakeNs;
        await cell.clock.sleepUntil(wakeNs);
        const poses = await cell.mocap!.readPoses();
        trace.push(JSON.stringify([poses.tNs.toString(), poses.poses]));
      }
      await cell.close();
      return trace;
    };
    assert.deepEqual(await run(true), await run(false));
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
