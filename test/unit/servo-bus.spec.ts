import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { Calibration } from "../../cell-agent/devices/servo/calibration.js";
import { toHex } from "../../cell-agent/devices/servo/codec.js";
import type { ServoModel } from "../../cell-agent/devices/servo/control-tables.js";
import { dynamixelCodec } from "../../cell-agent/devices/servo/dynamixel-protocol.js";
import { feetechCodec } from "../../cell-agent/devices/servo/feetech-protocol.js";
import { SerialServoBus, ServoBusError } from "../../cell-agent/devices/servo/servo-bus.js";
import { MockServoPort, createMockServoPort } from "../../simulators/servo-bus/mock-port.js";

const catalog = JSON.parse(readFileSync(new URL("../../firmware-pins/catalog.json", import.meta.url), "utf8")) as { models: Array<{ id: string; joints: string[] }> };
const SO101_JOINTS = catalog.models.find((m) => m.id === "so101")!.joints;
const TICK_RAD = (2 * Math.PI) / 4096;

interface Rig {
  bus: SerialServoBus;
  mock: MockServoPort;
  clock: { ms: number };
  close(): Promise<void>;
}

function calibrationFor(model: ServoModel, overrides: Partial<Record<string, Partial<Calibration["joints"][string]>>> = {}): Calibration {
  return {
    calibratedAt: new Date("2026-11-20T00:00:00Z"),
    joints: Object.fromEntries(
      SO101_JOINTS.map((name, i) => [name, { id: i + 1, model, homingOffsetTicks: 2048, rangeMinTicks: 600, rangeMaxTicks: 3500, driveMode: 0 as const, ...overrides[name] }]),
    ),
  };
}

async function rig(model: ServoModel, options: { firmware?: Record<number, string>; calibration?: Calibration; initialTicks?: number } = {}): Promise<Rig> {
  const clock = { ms: 0 };
  const mock = await createMockServoPort({
    nowMs: () => clock.ms,
    servos: SO101_JOINTS.map((_, i) => ({ id: i + 1, model, firmware: options.firmware?.[i + 1], initialTicks: options.initialTicks })),
  });
  const bus = await SerialServoBus.open({
    jointNames: SO101_JOINTS,
    calibration: options.calibration ?? calibrationFor(model),
    port: mock.port,
    nowNs: () => BigInt(Math.round(clock.ms * 1e6)),
    wallClockMs: () => Date.parse("2026-11-21T00:00:00Z"),
  });
  return { bus, mock, clock, close: async () => { await bus.close(); await mock.close(); } };
}

const cases: Array<{ model: ServoModel; firmware: string; other: string }> = [
  { model: "sts3215", firmware: "3.11", other: "3.10" },
  { model: "xm430-w350", firmware: "46", other: "45" },
];

for (const { model, firmware, other } of cases) {
  const codec = model === "sts3215" ? feetechCodec : dynamixelCodec;

  describe(`SerialServoBus over SerialPortMock (${model})`, () => {
    let r: Rig;
    afterEach(async () => r?.close());

    it("pings every servo and reports its model number", async () => {
      r = await rig(model);
      const models = await r.bus.ping();
      assert.deepEqual(Object.keys(models), SO101_JOINTS);
      assert.ok(Object.values(models).every((n) => n === (model === "sts3215" ? 777 : 1020)));
      // The first bytes on the wire are a PING to id 1.
      assert.equal(toHex(r.mock.written[0]), toHex(codec.encodePing(1)));
    });

    it("refuses to open when a servo is not the calibrated model", async function () {
      if (model === "sts3215") this.skip(); // only one Feetech model is supported
      const wrong: ServoModel = "xl430-w250";
      const clock = { ms: 0 };
      const mock = await createMockServoPort({ nowMs: () => clock.ms, servos: SO101_JOINTS.map((_, i) => ({ id: i + 1, model: i === 2 ? wrong : model })) });
      await assert.rejects(SerialServoBus.open({ jointNames: SO101_JOINTS, calibration: calibrationFor(model), port: mock.port }), /elbow_flex \(id 3\) reports model number 1060/);
      await mock.close();
    });

    it(`reads firmware "${firmware}" and shows a mismatch as a set`, async () => {
      r = await rig(model);
      assert.equal(await r.bus.readFirmware(), firmware);
      await r.close();
      r = await rig(model, { firmware: { 4: other } });
      assert.equal(await r.bus.readFirmware(), `${firmware}/${other}`);
    });

    it("reads the joint state with one SYNC_READ", async () => {
      r = await rig(model, { initialTicks: 2048 + 1024 });
      const before = r.mock.written.length;
      const state = await r.bus.readState();
      assert.equal(r.mock.written.length, before + 1);
      assert.equal(r.mock.written[before][model === "sts3215" ? 4 : 7], 0x82);
      assert.deepEqual(state.positionRad.map((p) => p.toFixed(4)), SO101_JOINTS.map(() => (Math.PI / 2).toFixed(4)));
      assert.deepEqual(state.temperatureC, SO101_JOINTS.map(() => 25));
      assert.equal(state.tNs, 0n);
    });

    it("writes goals with one SYNC_WRITE and the emulated servos reach them", async () => {
      r = await rig(model);
      await r.bus.setTorque(true);
      const goals = [0.5, -0.8, 1.2, -0.3, 0.9, 0.2];
      const before = r.mock.written.length;
      await r.bus.writeGoalPositions(goals);
      assert.equal(r.mock.written.length, before + 1);
      assert.equal(r.mock.written[before][model === "sts3215" ? 4 : 7], 0x83);
      r.clock.ms += 50;
      const moving = await r.bus.readState();
      assert.ok(Math.abs(moving.velocityRadS[2]) > 0.5, `joint moving after 50 ms: ${moving.velocityRadS[2]}`);
      assert.ok(Math.abs(moving.currentA[2]) > 0.05);
      for (let i = 0; i < 20; i++) {
        r.clock.ms += 50; // keep talking so the Dynamixel watchdog stays fed
        await r.bus.readState();
      }
      const state = await r.bus.readState();
      state.positionRad.forEach((p, i) => assert.ok(Math.abs(p - goals[i]) <= TICK_RAD, `${SO101_JOINTS[i]}: ${p} vs ${goals[i]}`));
      assert.deepEqual(state.velocityRadS, SO101_JOINTS.map(() => 0));
      assert.ok(state.temperatureC.every((t) => t >= 25));
    });

    it("clamps goals to the calibrated range and honours drive-mode inversion", async () => {
      const calibration = calibrationFor(model, { shoulder_lift: { driveMode: 1 }, gripper: { rangeMinTicks: 1900, rangeMaxTicks: 2600 } });
      r = await rig(model, { calibration });
      await r.bus.setTorque(true);
      await r.bus.writeGoalPositions([10, 0.5, 0, 0, -10, 3]);
      const goal = (id: number) => r.mock.emulator.servo(id).get("goalPosition");
      assert.equal(goal(1), 3500); // 10 rad clamped to rangeMaxTicks
      assert.equal(goal(2), 2048 - Math.round(0.5 / TICK_RAD)); // inverted
      assert.equal(goal(5), 600); // clamped to rangeMinTicks
      assert.equal(goal(6), 2600);
      for (let i = 0; i < 30; i++) {
        r.clock.ms += 50;
        await r.bus.readState();
      }
      const state = await r.bus.readState();
      assert.ok(Math.abs(state.positionRad[1] - 0.5) <= TICK_RAD, `inverted joint reads back +0.5 rad: ${state.positionRad[1]}`);
      assert.ok(Math.abs(state.positionRad[5] - (2600 - 2048) * TICK_RAD) <= TICK_RAD);
    });

    it("torque off jumps ahead of queued reads, stops motion and drops later goals", async () => {
      r = await rig(model);
      await r.bus.setTorque(true);
      await r.bus.writeGoalPositions([1, 1, 1, 1, 1, 1]);
      r.clock.ms += 40;
      const before = r.mock.written.length;
      const reads = [r.bus.readState(), r.bus.readState(), r.bus.readState()];
      const goalWrite = r.bus.writeGoalPositions([0, 0, 0, 0, 0, 0]);
      const off = r.bus.setTorque(false);
      await off;
      const sent = r.mock.written.slice(before).map((b) => (model === "sts3215" ? b[4] : b[7]));
      // read in flight, then the torque-off SYNC_WRITE and its verifying SYNC_READ, then the queued reads.
      assert.deepEqual(sent.slice(0, 3), [0x82, 0x83, 0x82]);
      const torqueWrite = r.mock.written[before + 1];
      const torqueAddress = model === "sts3215" ? torqueWrite[5] : torqueWrite[8] | (torqueWrite[9] << 8);
      assert.equal(torqueAddress, model === "sts3215" ? 40 : 64);
      await Promise.all(reads);
      await goalWrite;
      assert.equal(r.bus.counters().goalWritesSuppressed, 1);
      const stoppedAt = r.mock.emulator.servo(1).get("presentPosition");
      await r.bus.writeGoalPositions([0, 0, 0, 0, 0, 0]);
      r.clock.ms += 1000;
      await r.bus.readState();
      assert.equal(r.mock.emulator.servo(1).get("presentPosition"), stoppedAt);
      assert.equal(r.mock.emulator.servo(1).get("torqueEnable"), 0);
      assert.equal(r.bus.counters().goalWritesSuppressed, 2);
    });

    it("counts and retries dropped, corrupted, short and garbage-prefixed replies", async () => {
      r = await rig(model);
      const truth = await r.bus.readState();
      for (const fault of ["drop", "corruptChecksum", "short", "garbage"] as const) {
        r.mock.emulator.faults.injectNext(fault);
        const state = await r.bus.readState();
        assert.deepEqual(state.positionRad, truth.positionRad, fault);
      }
      const c = r.bus.counters();
      assert.equal(c.timeouts, 1);
      assert.ok(c.checksumErrors + c.shortFrames >= 2, JSON.stringify(c));
      assert.ok(c.retries >= 3, JSON.stringify(c));
      assert.ok(c.discardedBytes > 0);
      assert.equal(c.txErrors, 0);
    });

    it("survives a seeded storm of faults", async () => {
      r = await rig(model);
      r.mock.emulator.faults.setProbabilities({ drop: 0.03, corruptChecksum: 0.03, short: 0.03, garbage: 0.05 });
      for (let i = 0; i < 40; i++) await r.bus.readState();
      const c = r.bus.counters();
      assert.equal(c.txErrors, 0);
      assert.ok(c.retries > 0);
    });

    it("fails with a ServoBusError after the retries when a servo stays silent", async () => {
      r = await rig(model);
      r.mock.emulator.faults.setProbabilities({ drop: 1 });
      await assert.rejects(r.bus.readState(), (error: unknown) => error instanceof ServoBusError && /after 4 attempts/.test(error.message));
      assert.deepEqual({ timeouts: r.bus.counters().timeouts, retries: r.bus.counters().retries, txErrors: r.bus.counters().txErrors }, { timeouts: 4, retries: 3, txErrors: 1 });
    });

    it("reports the calibration age", async () => {
      r = await rig(model);
      assert.equal(await r.bus.readCalibrationAgeS!(), 86_400);
    });
  });
}

describe("SerialServoBus on an adapter that echoes", () => {
  it("does not take its own echoed READ for a Feetech reply", async () => {
    const clock = { ms: 0 };
    const mock = await createMockServoPort({ echo: true, nowMs: () => clock.ms, servos: SO101_JOINTS.map((_, i) => ({ id: i + 1, model: "sts3215" as const, initialTicks: 3072 })) });
    const bus = await SerialServoBus.open({ jointNames: SO101_JOINTS, calibration: calibrationFor("sts3215"), port: mock.port });
    try {
      const models = await bus.ping();
      assert.ok(Object.values(models).every((n) => n === 777), JSON.stringify(models));
      const state = await bus.readState();
      assert.ok(state.positionRad.every((p) => Math.abs(p - Math.PI / 2) < 1e-9));
      assert.equal(bus.counters().txErrors, 0);
    } finally {
      await bus.close();
      await mock.close();
    }
  });
});

describe("SerialServoBus Dynamixel bus watchdog", () => {
  let r: Rig;
  afterEach(async () => r?.close());

  it("is armed at open, stops a moving servo when the host goes silent, and is re-armed on the next goal", async () => {
    r = await rig("xl430-w250");
    const watchdog = () => r.mock.emulator.servo(1).memory[98];
    assert.equal(watchdog(), 5); // 100 ms in 20 ms units
    await r.bus.setTorque(true);
    await r.bus.writeGoalPositions([1.5, 0, 0, 0, 0, 0]);
    r.clock.ms += 500; // silence: the servo must stop 100 ms after the goal write
    const servo = r.mock.emulator.servo(1);
    assert.equal(watchdog(), 0xff);
    const stoppedAt = servo.get("presentPosition");
    assert.ok(stoppedAt > 2048 && stoppedAt < 2048 + Math.round(1.5 / TICK_RAD), `stopped part way: ${stoppedAt}`);
    r.clock.ms += 1000;
    assert.equal(r.mock.emulator.servo(1).get("presentPosition"), stoppedAt);
    // The host talks again: the bus sees the watchdog error, clears and re-arms it, and the goal goes through.
    await r.bus.writeGoalPositions([1.5, 0, 0, 0, 0, 0]);
    assert.equal(r.bus.counters().watchdogTrips, 1);
    assert.equal(watchdog(), 5);
    for (let i = 0; i < 30; i++) {
      r.clock.ms += 50;
      await r.bus.readState();
    }
    assert.equal(r.mock.emulator.servo(1).get("presentPosition"), 2048 + Math.round(1.5 / TICK_RAD));
  });

  it("rejects goal writes to a tripped servo with a Data Range error, like the X series", async () => {
    r = await rig("xm430-w350");
    await r.bus.setTorque(true);
    r.clock.ms += 300;
    r.mock.emulator.update();
    const replies: Uint8Array[] = [];
    const off = r.mock.emulator.onData((b) => replies.push(b));
    r.mock.emulator.write(dynamixelCodec.encodeWrite(1, 116, [0, 8, 0, 0]));
    off();
    // Status with error byte 0x04 (Data Range Error).
    assert.equal(toHex(replies[0]).slice(0, 26), "FF FF FD 00 01 04 00 55 04");
    assert.equal(toHex(replies[0]), toHex(dynamixelCodec.encodeStatus(1, 0x04, [])));
  });
});

describe("SerialServoBus effort limit", () => {
  // Addresses and full scales from the vendors' control tables, not the driver's: STS3215 Torque_Limit
  // (48, 0.1 % units, 1000 = 100 %), XM430-W350 Current Limit (38, factory 1193), XL430-W250 PWM Limit (36, 885).
  const published: Array<{ model: ServoModel; address: number; fullScale: number }> = [
    { model: "sts3215", address: 48, fullScale: 1000 },
    { model: "xm430-w350", address: 38, fullScale: 1193 },
    { model: "xl430-w250", address: 36, fullScale: 885 },
  ];
  for (const { model, address, fullScale } of published) {
    it(`${model}: writes effortLimitPercent into every servo's limit register on open`, async () => {
      const mock = await createMockServoPort({ nowMs: () => 0, servos: SO101_JOINTS.map((_, i) => ({ id: i + 1, model })) });
      const bus = await SerialServoBus.open({ jointNames: SO101_JOINTS, calibration: calibrationFor(model), port: mock.port, effortLimitPercent: 40 });
      try {
        for (let id = 1; id <= SO101_JOINTS.length; id++) {
          const memory = mock.emulator.servo(id).memory;
          assert.equal(memory[address] | (memory[address + 1] << 8), Math.round(0.4 * fullScale), `${model} id ${id}`);
        }
      } finally {
        await bus.close();
        await mock.close();
      }
    });
  }

  it("leaves the servos' own limit alone by default and refuses a bad percentage", async () => {
    const mock = await createMockServoPort({ nowMs: () => 0, servos: SO101_JOINTS.map((_, i) => ({ id: i + 1, model: "sts3215" as ServoModel })) });
    const before = mock.emulator.servo(1).memory.slice(48, 50);
    const bus = await SerialServoBus.open({ jointNames: SO101_JOINTS, calibration: calibrationFor("sts3215"), port: mock.port });
    assert.deepEqual(mock.emulator.servo(1).memory.slice(48, 50), before);
    await bus.close();
    await assert.rejects(SerialServoBus.open({ jointNames: SO101_JOINTS, calibration: calibrationFor("sts3215"), port: mock.port, effortLimitPercent: 150 }), /effortLimitPercent must be a number in \(0, 100\]; got 150/);
    await mock.close();
  });
});
