/**
 * Known answers for both servo wires: packets written out by hand from the protocol documents, which
 * the driver's codec (cell-agent/devices/servo) and the emulator's own wire (simulators/servo-bus)
 * must both produce and parse. Neither side is checked against the other, so a codec bug that both
 * shared would still fail here.
 */
import assert from "node:assert/strict";
import { fromHex, toHex, type ServoCodec } from "../../cell-agent/devices/servo/codec.js";
import { dynamixelCodec } from "../../cell-agent/devices/servo/dynamixel-protocol.js";
import { feetechCodec } from "../../cell-agent/devices/servo/feetech-protocol.js";
import { DynamixelWire } from "../../simulators/servo-bus/dynamixel-wire.js";
import type { EmulatorWire, WireRequest } from "../../simulators/servo-bus/emulator-wire.js";
import { FeetechWire } from "../../simulators/servo-bus/feetech-wire.js";

interface InstructionCase {
  what: string;
  hex: string;
  encode: (codec: ServoCodec) => Uint8Array;
  request: WireRequest;
}

interface StatusCase {
  what: string;
  hex: string;
  id: number;
  error: number;
  params: number[];
}

/**
 * Feetech STS/SCS memory-table protocol: FF FF ID LEN INSTR PARAMS CHECKSUM, LEN = params + 2,
 * CHECKSUM = ~(ID + LEN + INSTR + PARAMS) & 0xFF. Checksums below worked by hand.
 */
const FEETECH_INSTRUCTIONS: InstructionCase[] = [
  // 01 + 02 + 01 = 04 -> ~04 = FB (the manual's PING example).
  { what: "PING id 1", hex: "FF FF 01 02 01 FB", encode: (c) => c.encodePing(1), request: { kind: "ping", id: 1 } },
  // READ Present_Position (0x38), 2 bytes: 01 + 04 + 02 + 38 + 02 = 41 -> BE.
  { what: "READ id 1 @0x38 x2", hex: "FF FF 01 04 02 38 02 BE", encode: (c) => c.encodeRead(1, 0x38, 2), request: { kind: "read", id: 1, address: 0x38, length: 2 } },
  // WRITE Goal_Position (0x2A) = 2048 (00 08): 01 + 05 + 03 + 2A + 00 + 08 = 3B -> C4.
  {
    what: "WRITE id 1 @0x2A 2048", hex: "FF FF 01 05 03 2A 00 08 C4", encode: (c) => c.encodeWrite(1, 0x2a, [0x00, 0x08]),
    request: { kind: "write", id: 1, address: 0x2a, data: Uint8Array.from([0x00, 0x08]) },
  },
  // SYNC READ @0x38 x2 from ids 1, 2: FE + 06 + 82 + 38 + 02 + 01 + 02 = 1C3 -> low byte C3 -> 3C.
  {
    what: "SYNC READ ids 1,2 @0x38 x2", hex: "FF FF FE 06 82 38 02 01 02 3C", encode: (c) => c.encodeSyncRead([1, 2], 0x38, 2),
    request: { kind: "syncRead", address: 0x38, length: 2, ids: [1, 2] },
  },
  // SYNC WRITE @0x2A x2: id 1 -> 2048, id 2 -> 1024. LEN = 8 + 2 = 0A; sum 1C6 -> C6 -> 39.
  {
    what: "SYNC WRITE ids 1,2 @0x2A", hex: "FF FF FE 0A 83 2A 02 01 00 08 02 00 04 39",
    encode: (c) => c.encodeSyncWrite(0x2a, 2, [{ id: 1, data: [0x00, 0x08] }, { id: 2, data: [0x00, 0x04] }]),
    request: { kind: "syncWrite", address: 0x2a, length: 2, entries: [{ id: 1, data: Uint8Array.from([0x00, 0x08]) }, { id: 2, data: Uint8Array.from([0x00, 0x04]) }] },
  },
];

const FEETECH_STATUSES: StatusCase[] = [
  // PING reply, no error: 01 + 02 + 00 = 03 -> FC.
  { what: "PING status", hex: "FF FF 01 02 00 FC", id: 1, error: 0, params: [] },
  // READ reply with 2048: 01 + 04 + 00 + 00 + 08 = 0D -> F2.
  { what: "READ status 2048", hex: "FF FF 01 04 00 00 08 F2", id: 1, error: 0, params: [0x00, 0x08] },
  // Overheat bit (0x04) set: 01 + 02 + 04 = 07 -> F8.
  { what: "status with overheat", hex: "FF FF 01 02 04 F8", id: 1, error: 0x04, params: [] },
];

/**
 * ROBOTIS e-manual, DYNAMIXEL Protocol 2.0, the packet examples of §3 (instruction details) for an
 * X-series servo with id 1; CRC-16 (0x8005) as printed there.
 */
const DYNAMIXEL_INSTRUCTIONS: InstructionCase[] = [
  // §3.1 Ping, example 1.
  { what: "PING id 1", hex: "FF FF FD 00 01 03 00 01 19 4E", encode: (c) => c.encodePing(1), request: { kind: "ping", id: 1 } },
  // §3.2 Read: Present Position (132), 4 bytes.
  {
    what: "READ id 1 @132 x4", hex: "FF FF FD 00 01 07 00 02 84 00 04 00 1D 15", encode: (c) => c.encodeRead(1, 132, 4),
    request: { kind: "read", id: 1, address: 132, length: 4 },
  },
  // §3.3 Write: Goal Position (116) = 512.
  {
    what: "WRITE id 1 @116 512", hex: "FF FF FD 00 01 09 00 03 74 00 00 02 00 00 CA 89", encode: (c) => c.encodeWrite(1, 116, [0x00, 0x02, 0x00, 0x00]),
    request: { kind: "write", id: 1, address: 116, data: Uint8Array.from([0x00, 0x02, 0x00, 0x00]) },
  },
  // §3.9 Sync Read: Present Position of ids 1 and 2.
  {
    what: "SYNC READ ids 1,2 @132 x4", hex: "FF FF FD 00 FE 09 00 82 84 00 04 00 01 02 CE FA", encode: (c) => c.encodeSyncRead([1, 2], 132, 4),
    request: { kind: "syncRead", address: 132, length: 4, ids: [1, 2] },
  },
  // §3.10 Sync Write: Goal Position 150 to id 1, 170 to id 2.
  {
    what: "SYNC WRITE ids 1,2 @116", hex: "FF FF FD 00 FE 11 00 83 74 00 04 00 01 96 00 00 00 02 AA 00 00 00 82 87",
    encode: (c) => c.encodeSyncWrite(116, 4, [{ id: 1, data: [0x96, 0, 0, 0] }, { id: 2, data: [0xaa, 0, 0, 0] }]),
    request: { kind: "syncWrite", address: 116, length: 4, entries: [{ id: 1, data: Uint8Array.from([0x96, 0, 0, 0]) }, { id: 2, data: Uint8Array.from([0xaa, 0, 0, 0]) }] },
  },
];

const DYNAMIXEL_STATUSES: StatusCase[] = [
  // §3.1 Ping status: model 1030 (06 04), firmware 38 (26).
  { what: "PING status", hex: "FF FF FD 00 01 07 00 55 00 06 04 26 65 5D", id: 1, error: 0, params: [0x06, 0x04, 0x26] },
  // §3.2 Read status: Present Position 166.
  { what: "READ status 166", hex: "FF FF FD 00 01 08 00 55 00 A6 00 00 00 8C C0", id: 1, error: 0, params: [0xa6, 0, 0, 0] },
  // §3.3 Write status.
  { what: "WRITE status", hex: "FF FF FD 00 01 04 00 55 00 A1 0C", id: 1, error: 0, params: [] },
];

function driverParse(codec: ServoCodec, bytes: Uint8Array) {
  const events = codec.createParser().push(bytes);
  assert.equal(events.length, 1, `one event, got ${JSON.stringify(events.map((e) => e.type))}`);
  assert.equal(events[0].type, "frame");
  return events[0].type === "frame" ? events[0].frame : assert.fail("no frame");
}

function suite(name: string, codec: ServoCodec, newWire: () => EmulatorWire, instructions: InstructionCase[], statuses: StatusCase[]): void {
  describe(`${name} wire known answers`, () => {
    for (const c of instructions) {
      it(`${c.what}: the driver encodes it and both sides decode it`, () => {
        assert.equal(toHex(c.encode(codec)), c.hex, "driver encoding");
        const frame = driverParse(codec, fromHex(c.hex));
        const decoded = codec.decodeInstruction(frame);
        assert.deepEqual(decoded && { ...decoded }, c.request, "driver decoding");
        const read = newWire().read(fromHex(c.hex));
        assert.deepEqual(read, { requests: [c.request], damaged: 0 }, "emulator decoding");
      });
    }
    for (const c of statuses) {
      it(`${c.what}: the emulator encodes it and both sides decode it`, () => {
        assert.equal(toHex(newWire().status(c.id, c.error, c.params)), c.hex, "emulator encoding");
        assert.equal(toHex(codec.encodeStatus(c.id, c.error, c.params)), c.hex, "driver encoding");
        const status = codec.toStatus(driverParse(codec, fromHex(c.hex)));
        assert.deepEqual(status && { id: status.id, error: status.error, params: [...status.params] }, { id: c.id, error: c.error, params: c.params }, "driver decoding");
      });
    }
    it("a flipped checksum bit: both sides drop the packet", () => {
      const bad = fromHex(instructions[0].hex);
      bad[bad.length - 1] ^= 1;
      assert.deepEqual(newWire().read(bad), { requests: [], damaged: 1 });
      const events = codec.createParser().push(bad).map((e) => (e.type === "error" ? e.error.kind : e.type));
      // The driver also reports the rest of the dropped packet as bytes outside any frame.
      assert.equal(events[0], "checksum");
      assert.ok(!events.includes("frame"), `no frame; got ${events.join(", ")}`);
    });
    it("a packet split anywhere is read once whole, by both sides", () => {
      const bytes = fromHex(instructions[1].hex);
      for (let cut = 1; cut < bytes.length; cut++) {
        const wire = newWire();
        assert.deepEqual(wire.read(bytes.subarray(0, cut)).requests, [], `emulator, first ${cut} bytes`);
        assert.deepEqual(wire.read(bytes.subarray(cut)).requests, [instructions[1].request], `emulator, cut at ${cut}`);
        const parser = codec.createParser();
        assert.deepEqual(parser.push(bytes.subarray(0, cut)), [], `driver, first ${cut} bytes`);
        assert.equal(parser.push(bytes.subarray(cut)).length, 1, `driver, cut at ${cut}`);
      }
    });
  });
}

suite("Feetech STS/SCS", feetechCodec, () => new FeetechWire(), FEETECH_INSTRUCTIONS, FEETECH_STATUSES);
suite("Dynamixel 2.0", dynamixelCodec, () => new DynamixelWire(), DYNAMIXEL_INSTRUCTIONS, DYNAMIXEL_STATUSES);

describe("emulators keep their own wire code", () => {
  it("no emulator file imports a driver codec from cell-agent/devices", async () => {
    const { readFileSync } = await import("node:fs");
    const files = [
      "simulators/servo-bus/servo-emulator.ts", "simulators/servo-bus/emulator-wire.ts", "simulators/servo-bus/feetech-wire.ts",
      "simulators/servo-bus/dynamixel-wire.ts", "simulators/servo-bus/emulated-models.ts", "simulators/servo-bus/fault-injector.ts",
      "simulators/servo-bus/motion-model.ts", "simulators/natnet/natnet-server.ts", "simulators/natnet/natnet-wire.ts",
    ];
    const offenders = files.flatMap((file) =>
      readFileSync(new URL(`../../${file}`, import.meta.url), "utf8").split("\n")
        .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
        .filter(({ line }) => /from\s+"[^"]*cell-agent\/devices\//.test(line))
        .map(({ at, line }) => `${at}: ${line.trim()}`));
    assert.deepEqual(offenders, [], "an emulator must not share the codec it is tested against");
  });
});
