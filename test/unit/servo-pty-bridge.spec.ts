/**
 * The servo pty bridge (node-pty's openpty, no socat): raw bytes both ways through a real pseudo-
 * terminal, every byte value included, and SerialServoBus opening the agent end by path.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { SerialPort } from "serialport";
import { SerialServoBus } from "../../cell-agent/devices/servo/servo-bus.js";
import { openPtyPair, startPtyBridge, type PtyPair } from "../../simulators/servo-bus/pty-bridge.js";

const joints = ["shoulder_pan", "shoulder_lift"];
const calibration = {
  calibratedAt: null,
  joints: Object.fromEntries(joints.map((name, i) => [name, { id: i + 1, model: "sts3215" as const, homingOffsetTicks: 2048, rangeMinTicks: 0, rangeMaxTicks: 4095, driveMode: 0 as const }])),
};

/** Every byte value, then the ones a cooked terminal would act on, in runs a line discipline would notice. */
const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const CONTROL_RUNS = Buffer.from([
  0x0d, 0x0a, 0x0a, 0x0d, 0x0d, 0x0d, 0x0a, // CR/LF translation (ICRNL, INLCR, IGNCR, ONLCR, OCRNL)
  0x03, 0x1c, 0x1a, 0x19, // ^C ^\ ^Z ^Y (ISIG)
  0x13, 0x11, 0x13, 0x11, 0x11, // XOFF XON (IXON / IXOFF / IXANY)
  0x04, 0x7f, 0x08, 0x15, 0x17, 0x12, 0x16, 0x0f, 0x00, // EOF ERASE ^H KILL WERASE REPRINT LNEXT DISCARD NUL (ICANON, IEXTEN)
  0xff, 0xff, 0x00, 0xff, 0x7f, 0x80, 0x09, 0x1b, // PARMRK escapes, ISTRIP, tab expansion, ESC
]);
const PAYLOAD = Buffer.concat([ALL_BYTES, CONTROL_RUNS, Buffer.from(ALL_BYTES).reverse(), CONTROL_RUNS, ALL_BYTES]);

async function openPath(path: string): Promise<SerialPort> {
  const port = new SerialPort({ path, baudRate: 1_000_000, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
  return port;
}

const closePort = (port: SerialPort) => new Promise<void>((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve()));

/** Collects bytes from a source; `settled` waits for `n` bytes, then a quiet spell to catch extras (echoes). */
function collector(subscribe: (listener: (chunk: Buffer) => void) => void) {
  const chunks: Buffer[] = [];
  subscribe((chunk) => chunks.push(Buffer.from(chunk)));
  const bytes = () => Buffer.concat(chunks);
  return {
    bytes,
    clear: () => void chunks.splice(0),
    async settled(n: number, timeoutMs = 5000): Promise<Buffer> {
      const deadline = Date.now() + timeoutMs;
      while (bytes().length < n && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setTimeout(resolve, 100));
      return bytes();
    },
  };
}

describe("servo pty bridge (node-pty)", () => {
  describe("the raw pty pair", () => {
    let pair: PtyPair;
    let port: SerialPort | undefined;
    beforeEach(() => {
      pair = openPtyPair();
    });
    afterEach(async () => {
      if (port) await closePort(port);
      port = undefined;
      await pair.close();
    });

    it("gives a /dev/pts device path that serialport opens like a serial device", async () => {
      assert.match(pair.agentPath, /^\/dev\/pts\/\d+$/);
      assert.ok(existsSync(pair.agentPath));
      port = await openPath(pair.agentPath);
      assert.ok(port.isOpen);
    });

    it("carries all 256 byte values unchanged from the emulator end to the agent, with no echo", async () => {
      port = await openPath(pair.agentPath);
      const atAgent = collector((listener) => port!.on("data", listener));
      const atMaster = collector((listener) => pair.onData(listener));
      pair.write(PAYLOAD);
      const received = await atAgent.settled(PAYLOAD.length);
      assert.equal(received.length, PAYLOAD.length, "byte count");
      assert.deepEqual(received, PAYLOAD);
      assert.equal(atMaster.bytes().length, 0, `the pty echoed ${atMaster.bytes().toString("hex")}`);
    });

    it("carries all 256 byte values unchanged from the agent to the emulator end, with no echo", async () => {
      port = await openPath(pair.agentPath);
      const atAgent = collector((listener) => port!.on("data", listener));
      const atMaster = collector((listener) => pair.onData(listener));
      await new Promise<void>((resolve, reject) => port!.write(PAYLOAD, (error) => (error ? reject(error) : resolve())));
      const received = await atMaster.settled(PAYLOAD.length);
      assert.equal(received.length, PAYLOAD.length, "byte count");
      assert.deepEqual(received, PAYLOAD);
      assert.equal(atAgent.bytes().length, 0, `the pty echoed ${atAgent.bytes().toString("hex")}`);
    });

    it("each single byte value arrives alone, both ways (no byte waits for a line end or is swallowed)", async () => {
      port = await openPath(pair.agentPath);
      const atAgent = collector((listener) => port!.on("data", listener));
      const atMaster = collector((listener) => pair.onData(listener));
      for (let value = 0; value < 256; value++) {
        const one = Buffer.from([value]);
        pair.write(one);
        const down = await waitFor(() => atAgent.bytes().length >= 1, 2000);
        assert.ok(down, `byte 0x${value.toString(16)} did not reach the agent on its own`);
        assert.deepEqual(atAgent.bytes(), one);
        port.write(one);
        const up = await waitFor(() => atMaster.bytes().length >= 1, 2000);
        assert.ok(up, `byte 0x${value.toString(16)} did not reach the emulator end on its own`);
        assert.deepEqual(atMaster.bytes(), one);
        atAgent.clear();
        atMaster.clear();
      }
    });

    it("survives the agent closing and reopening the device (the doctor opens it twice)", async () => {
      for (let round = 0; round < 3; round++) {
        port = await openPath(pair.agentPath);
        const atMaster = collector((listener) => pair.onData(listener));
        port.write(ALL_BYTES);
        assert.deepEqual(await atMaster.settled(ALL_BYTES.length), ALL_BYTES, `round ${round}`);
        await closePort(port);
        port = undefined;
      }
    });

    it("removes the device when closed", async () => {
      const path = pair.agentPath;
      await pair.close();
      assert.equal(existsSync(path), false, `${path} still exists`);
      assert.throws(() => pair.write(Buffer.from([1])), /closed/);
    });
  });

  it("lets SerialServoBus open the agent end by path", async () => {
    const bridge = await startPtyBridge({ servos: joints.map((_, i) => ({ id: i + 1, model: "sts3215" as const })) });
    try {
      const bus = await SerialServoBus.open({ jointNames: joints, calibration, path: bridge.agentPath, transactionTimeoutMs: 50 });
      try {
        assert.equal(await bus.readFirmware(), "3.11");
        for (let i = 0; i < 20; i++) {
          const state = await bus.readState();
          assert.deepEqual(state.positionRad, [0, 0]);
        }
        assert.ok(bridge.emulator.stats.requests > 20, `emulator saw ${bridge.emulator.stats.requests} requests`);
      } finally {
        await bus.close();
      }
    } finally {
      await bridge.close();
    }
  });

  it("serves Dynamixel servos the same way", async () => {
    const calib = { calibratedAt: null, joints: Object.fromEntries(joints.map((name, i) => [name, { ...calibration.joints[name], id: i + 1, model: "xl430-w250" as const }])) };
    const bridge = await startPtyBridge({ firmware: "46", servos: joints.map((_, i) => ({ id: i + 1, model: "xl430-w250" as const })) });
    try {
      const bus = await SerialServoBus.open({ jointNames: joints, calibration: calib, path: bridge.agentPath, transactionTimeoutMs: 50, watchdogMs: 0 });
      try {
        assert.equal(await bus.readFirmware(), "46");
        assert.deepEqual((await bus.readState()).positionRad, [0, 0]);
      } finally {
        await bus.close();
      }
    } finally {
      await bridge.close();
    }
  });
});

async function waitFor(predicate: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return true;
}
