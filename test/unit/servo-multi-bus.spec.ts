/**
 * Several serial servo buses as one robot (issue 27, item 5): ALOHA's two follower arms, each on its own
 * emulated Dynamixel bus (XM540-W270 for waist..wrist_angle, XM430-W350 for wrist_rotate and gripper, as
 * LeRobot's AlohaRobotConfig lists them). The robot's joint order maps to (bus, id); reads and writes go to
 * every bus, torque off reaches every bus even when one fails, and the agent config describes the buses.
 */
import assert from "node:assert/strict";
import { compileAgentConfig } from "../../cell-agent/config.js";
import type { Calibration } from "../../cell-agent/devices/servo/calibration.js";
import { controlTable, type ServoModel } from "../../cell-agent/devices/servo/control-tables.js";
import { MultiServoBus } from "../../cell-agent/devices/servo/multi-bus.js";
import { SerialServoBus } from "../../cell-agent/devices/servo/servo-bus.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { createMockServoPort, type MockServoPort } from "../../simulators/servo-bus/mock-port.js";

const ALOHA = loadFirmwarePins().models.find((m) => m.id === "aloha")!.joints;
const ARM_MODELS: ServoModel[] = ["xm540-w270", "xm540-w270", "xm540-w270", "xm540-w270", "xm540-w270", "xm430-w350", "xm430-w350"];
const TICK_RAD = (2 * Math.PI) / 4096;

function calibration(joints: readonly string[]): Calibration {
  return {
    calibratedAt: new Date("2026-11-20T00:00:00Z"),
    joints: Object.fromEntries(joints.map((name, i) => [name, { id: i + 1, model: ARM_MODELS[i], homingOffsetTicks: 2048, rangeMinTicks: 0, rangeMaxTicks: 4095, driveMode: 0 as const }])),
  };
}

interface Rig {
  robot: MultiServoBus;
  mocks: Record<"left" | "right", MockServoPort>;
  close(): Promise<void>;
}

/** Left arm servos start at 2048 + 10 x id ticks, right arm at 2048 - 10 x id: every reading says which bus it came from. */
async function rig(options: { robotOrder?: readonly string[] } = {}): Promise<Rig> {
  const clock = { ms: 0 };
  const mocks = {} as Rig["mocks"];
  const buses = [];
  for (const side of ["left", "right"] as const) {
    const joints = ALOHA.filter((j) => j.startsWith(`${side}_`));
    const sign = side === "left" ? 1 : -1;
    mocks[side] = await createMockServoPort({ nowMs: () => clock.ms, servos: joints.map((_, i) => ({ id: i + 1, model: ARM_MODELS[i], initialTicks: 2048 + sign * 10 * (i + 1) })) });
    buses.push({ name: side, bus: await SerialServoBus.open({ jointNames: joints, calibration: calibration(joints), port: mocks[side].port, nowNs: () => BigInt(clock.ms * 1e6) }) });
  }
  const robot = new MultiServoBus(options.robotOrder ?? ALOHA, buses);
  return { robot, mocks, close: async () => { await robot.close(); for (const m of Object.values(mocks)) await m.close(); } };
}

describe("MultiServoBus (ALOHA on two emulated Dynamixel buses)", () => {
  let r: Rig | undefined;
  afterEach(async () => {
    await r?.close();
    r = undefined;
  });

  it("knows the XM540-W270: model number 1120 in its registers, Current Limit full scale 2047 of 2.69 mA", () => {
    const table = controlTable("xm540-w270");
    assert.equal(table.modelNumber, 1120);
    assert.equal(table.effortLimitFullScale, 2047);
    assert.equal(table.currentUnitA, 0.00269);
    assert.deepEqual([table.registers.torqueEnable!.address, table.registers.goalPosition!.address, table.registers.presentPosition!.address, table.registers.effortLimit!.address], [64, 116, 132, 38]);
  });

  it("opens each bus with its servo models checked, and reads all 14 joints in the robot's order", async () => {
    r = await rig();
    assert.deepEqual(r.robot.jointNames, ALOHA);
    // Model Number register (address 0, 2 bytes little-endian) as each emulated servo holds it.
    assert.deepEqual([...r.mocks.left.emulator.servo(1).memory.slice(0, 2)], [0x60, 0x04], "1120 = 0x0460");
    const state = await r.robot.readState();
    assert.equal(state.positionRad.length, 14);
    state.positionRad.forEach((rad, i) => {
      const sign = i < 7 ? 1 : -1;
      assert.ok(Math.abs(rad - sign * 10 * ((i % 7) + 1) * TICK_RAD) < 1e-9, `${ALOHA[i]}: ${rad}`);
    });
  });

  it("maps any robot joint order onto (bus, id)", async () => {
    const shuffled = [...ALOHA].reverse();
    r = await rig({ robotOrder: shuffled });
    const state = await r.robot.readState();
    // right_gripper (id 7 on the right bus) comes first.
    assert.ok(Math.abs(state.positionRad[0] - -70 * TICK_RAD) < 1e-9);
  });

  it("writes each bus's goals in one SYNC_WRITE to that bus, with that bus's ids", async () => {
    r = await rig();
    await r.robot.setTorque(true);
    for (const m of Object.values(r.mocks)) m.written.length = 0;
    const goals = ALOHA.map((_, i) => (i < 7 ? 0.1 : -0.2));
    await r.robot.writeGoalPositions(goals);
    for (const side of ["left", "right"] as const) {
      const packets: Buffer[] = r!.mocks[side].written;
      const syncWrites = packets.filter((p: Buffer) => p[7] === 0x83);
      assert.equal(syncWrites.length, 1, `${side}: one SYNC_WRITE`);
      for (let id = 1; id <= 7; id++) {
        const goal = r!.mocks[side].emulator.servo(id).get("goalPosition");
        assert.equal(goal, Math.round(2048 + (side === "left" ? 0.1 : -0.2) / TICK_RAD), `${side} id ${id}`);
      }
    }
    await assert.rejects(r.robot.writeGoalPositions([0, 0]), /needs 14 positions/);
  });

  it("turns torque off on every bus, and still on the others when one bus fails", async () => {
    r = await rig();
    await r.robot.setTorque(true);
    assert.ok([1, 7].every((id) => r!.mocks.left.emulator.servo(id).motion.torqueOn && r!.mocks.right.emulator.servo(id).motion.torqueOn));
    // The left bus goes silent (every reply dropped): its torque off cannot be confirmed.
    r.mocks.left.emulator.faults.setProbabilities({ drop: 1 });
    await assert.rejects(r.robot.setTorque(false), /torque off failed on bus left: torque off could not be confirmed/);
    for (let id = 1; id <= 7; id++) assert.equal(r.mocks.right.emulator.servo(id).motion.torqueOn, false, `right id ${id} is off`);
    // The left servos did receive the torque-off write; only its read-back was lost.
    for (let id = 1; id <= 7; id++) assert.equal(r.mocks.left.emulator.servo(id).motion.torqueOn, false, `left id ${id} is off`);
  });

  it("refuses a joint on two buses or on none, naming it", async () => {
    r = await rig();
    const buses = r.robot.buses;
    assert.throws(() => new MultiServoBus(ALOHA, [buses[0], buses[0]]), /joint left_waist is on two buses, left and left/);
    assert.throws(() => new MultiServoBus(ALOHA, [buses[0]]), /joint\(s\) right_waist, .* are on no bus/);
  });

  it("sums the buses' counters for /metrics and keeps them by bus", async () => {
    r = await rig();
    await r.robot.readState();
    const byBus = r.robot.countersByBus();
    assert.deepEqual(Object.keys(byBus), ["left", "right"]);
    assert.equal(r.robot.counters().transactions, byBus.left.transactions + byBus.right.transactions);
  });
});

describe("agent config: several servo buses", () => {
  const base = { cellId: "aloha-a", cellToken: "t", robotModel: "aloha", environment: "tabletop@1", dataDir: "/tmp/x" };
  const left = ALOHA.slice(0, 7);
  const right = ALOHA.slice(7);
  const buses = [
    { name: "left", path: "/dev/ttyDXL_follower_left", calibration: "/etc/assay/left.json", joints: left },
    { name: "right", path: "/dev/ttyDXL_follower_right", calibration: "/etc/assay/right.json", joints: right, effortLimitPercent: 80 },
  ];

  it("compiles motors.buses, each with its joints, defaults and tuning", () => {
    const config = compileAgentConfig({ ...base, motors: { kind: "dynamixel", buses } });
    assert.equal(config.motors?.kind, "dynamixel");
    if (config.motors?.kind !== "dynamixel") return;
    assert.deepEqual(config.motors.buses.map((b) => [b.name, b.path, b.baudRate, b.joints.length]), [["left", "/dev/ttyDXL_follower_left", 1_000_000, 7], ["right", "/dev/ttyDXL_follower_right", 1_000_000, 7]]);
    assert.equal(config.motors.buses[1].effortLimitPercent, 80);
  });

  it("keeps the one-bus SO-101 form: one bus named arm carrying every joint", () => {
    const config = compileAgentConfig({ ...base, cellId: "so101-a", robotModel: "so101", motors: { kind: "feetech", path: "/dev/ttyACM0", calibration: "/etc/assay/calibration.json", retries: 5 } });
    assert.deepEqual(config.motors, { kind: "feetech", buses: [{ name: "arm", path: "/dev/ttyACM0", baudRate: 1_000_000, calibration: "/etc/assay/calibration.json", joints: loadFirmwarePins().models.find((m) => m.id === "so101")!.joints, retries: 5 }] });
  });

  it("refuses a joint on no bus, on two, a joint the robot lacks, a device twice, and mixing the two forms", () => {
    const compile = (motors: unknown) => () => compileAgentConfig({ ...base, motors });
    assert.throws(compile({ kind: "dynamixel", buses: [buses[0]] }), /puts joint\(s\) right_waist, .* of aloha on no bus/);
    assert.throws(compile({ kind: "dynamixel", buses: [buses[0], { ...buses[1], joints: [...right, "left_gripper"] }] }), /puts the joint "left_gripper" twice/);
    assert.throws(compile({ kind: "dynamixel", buses: [buses[0], { ...buses[1], joints: [...right, "right_thumb"] }] }), /names joint\(s\) "right_thumb", which aloha lacks/);
    assert.throws(compile({ kind: "dynamixel", buses: [buses[0], { ...buses[1], path: buses[0].path }] }), /opens the device "\/dev\/ttyDXL_follower_left" twice/);
    assert.throws(compile({ kind: "dynamixel", buses: [buses[0], { ...buses[1], joints: undefined }] }), /"motors.buses\[1\].joints" is required with several buses/);
    assert.throws(compile({ kind: "dynamixel", path: "/dev/ttyUSB0", buses }), /unknown agent config key "motors.path"/);
    assert.throws(compile({ kind: "dynamixel", buses: [] }), /"motors.buses" must list 1 to 16 buses/);
    assert.throws(() => compileAgentConfig({ ...base, robotModel: "aloha2", motors: { kind: "dynamixel", buses } }), /"robotModel" "aloha2" is not in firmware-pins\/catalog.json, so the joints on the servo bus are unknown; known models: so101, /);
  });
});
