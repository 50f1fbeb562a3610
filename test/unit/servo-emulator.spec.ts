import assert from "node:assert/strict";
import { toHex } from "../../cell-agent/devices/servo/codec.js";
import { dynamixelCodec } from "../../cell-agent/devices/servo/dynamixel-protocol.js";
import { feetechCodec } from "../../cell-agent/devices/servo/feetech-protocol.js";
import { FaultInjector } from "../../simulators/servo-bus/fault-injector.js";
import { ServoBusEmulator } from "../../simulators/servo-bus/servo-emulator.js";

function exchange(emulator: ServoBusEmulator, request: Uint8Array): string {
  const replies: Uint8Array[] = [];
  const off = emulator.onData((b) => replies.push(b));
  emulator.write(request);
  off();
  return replies.map(toHex).join(" | ");
}

describe("servo bus emulator", () => {
  it("answers a Feetech PING and READ byte for byte", () => {
    const emulator = new ServoBusEmulator({ nowMs: () => 0, servos: [{ id: 1, model: "sts3215", initialTicks: 2048 }] });
    assert.equal(exchange(emulator, feetechCodec.encodePing(1)), "FF FF 01 02 00 FC");
    assert.equal(exchange(emulator, feetechCodec.encodeRead(1, 0x38, 2)), "FF FF 01 04 00 00 08 F2");
    assert.equal(exchange(emulator, feetechCodec.encodeRead(1, 0, 2)), toHex(feetechCodec.encodeStatus(1, 0, [3, 11])));
    assert.equal(exchange(emulator, feetechCodec.encodePing(9)), "");
  });

  it("answers a Dynamixel PING with model number and firmware", () => {
    const emulator = new ServoBusEmulator({ nowMs: () => 0, firmware: "38", servos: [{ id: 1, model: "xm430-w350" }] });
    // Model 1020 = 0x03FC, firmware 38 = 0x26.
    assert.equal(exchange(emulator, dynamixelCodec.encodePing(1)), toHex(dynamixelCodec.encodeStatus(1, 0, [0xfc, 0x03, 0x26])));
    // Unknown instruction: Instruction Error.
    assert.equal(exchange(emulator, dynamixelCodec.encodeInstruction(1, 0x7f, [])), toHex(dynamixelCodec.encodeStatus(1, 0x02, [])));
  });

  it("ignores requests with a bad checksum, like a servo", () => {
    const emulator = new ServoBusEmulator({ nowMs: () => 0, servos: [{ id: 1, model: "sts3215" }] });
    const bad = feetechCodec.encodePing(1);
    bad[bad.length - 1] ^= 1;
    assert.equal(exchange(emulator, bad), "");
    assert.equal(emulator.stats.badRequests, 1);
  });

  it("moves only with torque on, within speed limits, and warms with current", () => {
    let now = 0;
    const emulator = new ServoBusEmulator({ nowMs: () => now, servos: [{ id: 1, model: "sts3215", initialTicks: 1000 }] });
    emulator.write(feetechCodec.encodeWrite(1, 42, [0xb8, 0x0b])); // goal 3000, torque off
    now = 1000;
    assert.equal(emulator.servo(1).get("presentPosition"), 1000);
    emulator.write(feetechCodec.encodeWrite(1, 40, [1]));
    emulator.write(feetechCodec.encodeWrite(1, 42, [0xb8, 0x0b]));
    now = 1100;
    const servo = emulator.servo(1);
    const maxTicks = 4.7 * (4096 / (2 * Math.PI)) * 0.1;
    const moved = servo.get("presentPosition") - 1000;
    assert.ok(moved > 0 && moved <= maxTicks + 1, `moved ${moved} ticks in 100 ms`);
    now = 3000;
    assert.equal(emulator.servo(1).get("presentPosition"), 3000);
    assert.equal(emulator.servo(1).get("presentVelocity"), 0);
    assert.ok(emulator.servo(1).motion.temperatureC > 25);
  });

  it("trips the Dynamixel bus watchdog only with torque on and host silent", () => {
    let now = 0;
    const emulator = new ServoBusEmulator({ nowMs: () => now, servos: [{ id: 1, model: "xl430-w250" }] });
    emulator.write(dynamixelCodec.encodeWrite(1, 98, [2])); // 40 ms
    now = 500;
    assert.equal(emulator.servo(1).memory[98], 2, "torque off: not monitored");
    emulator.write(dynamixelCodec.encodeWrite(1, 64, [1]));
    now = 530;
    emulator.write(dynamixelCodec.encodePing(1));
    now = 560;
    assert.equal(emulator.servo(1).memory[98], 2, "fed 30 ms ago");
    now = 571;
    assert.equal(emulator.servo(1).memory[98], 0xff);
  });

  it("injects faults deterministically from a seed", () => {
    const draw = () => {
      const f = new FaultInjector({ seed: 7, drop: 0.2, corruptChecksum: 0.2, short: 0.2, garbage: 0.2 });
      return Array.from({ length: 50 }, () => toHex(f.apply(Uint8Array.from([0xff, 0xff, 1, 2, 0, 0xfc]))));
    };
    assert.deepEqual(draw(), draw());
    const f = new FaultInjector();
    f.injectNext("drop");
    f.injectNext("corruptChecksum");
    assert.equal(f.apply(Uint8Array.of(1, 2, 3)).length, 0);
    assert.deepEqual(Array.from(f.apply(Uint8Array.of(1, 2, 3))), [1, 2, 0xfc]);
    assert.deepEqual(Array.from(f.apply(Uint8Array.of(1, 2, 3))), [1, 2, 3]);
  });
});
