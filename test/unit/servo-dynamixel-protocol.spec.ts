import assert from "node:assert/strict";
import { ParseEvent, fromHex, toHex, uintBytes } from "../../cell-agent/devices/servo/codec.js";
import {
  DYNAMIXEL_CRC_TABLE,
  dynamixelCodec as codec,
  dynamixelCrc,
  stuff,
  unstuff,
} from "../../cell-agent/devices/servo/dynamixel-protocol.js";

function frames(events: ParseEvent[]): string[] {
  return events.flatMap((e) => (e.type === "frame" ? [toHex(e.frame.raw)] : []));
}

/** Damaged-frame errors, in order (garbage between frames is counted separately). */
function errors(events: ParseEvent[]): string[] {
  return events.flatMap((e) => (e.type === "error" && e.error.kind !== "garbage" ? [e.error.kind] : []));
}

function garbageBytes(events: ParseEvent[]): number {
  return events.reduce((n, e) => n + (e.type === "error" && e.error.kind === "garbage" ? e.error.bytes.length : 0), 0);
}

describe("Dynamixel Protocol 2.0", () => {
  it("builds the CRC table of ROBOTIS' update_crc (polynomial 0x8005)", () => {
    assert.deepEqual(Array.from(DYNAMIXEL_CRC_TABLE.slice(0, 8)), [0x0000, 0x8005, 0x800f, 0x000a, 0x801b, 0x001e, 0x0014, 0x8011]);
    assert.equal(DYNAMIXEL_CRC_TABLE[255], 0x0202);
  });

  // Instruction and status examples of the ROBOTIS e-manual, Protocol 2.0 page
  // (https://emanual.robotis.com/docs/en/dxl/protocol2/).
  it("encodes the e-manual's instruction packets byte for byte", () => {
    assert.equal(toHex(codec.encodePing(1)), "FF FF FD 00 01 03 00 01 19 4E");
    assert.equal(toHex(codec.encodePing(0xfe)), "FF FF FD 00 FE 03 00 01 31 42");
    assert.equal(toHex(codec.encodeRead(1, 132, 4)), "FF FF FD 00 01 07 00 02 84 00 04 00 1D 15");
    assert.equal(toHex(codec.encodeWrite(1, 116, uintBytes(512, 4))), "FF FF FD 00 01 09 00 03 74 00 00 02 00 00 CA 89");
    assert.equal(toHex(codec.encodeSyncRead([1, 2], 132, 4)), "FF FF FD 00 FE 09 00 82 84 00 04 00 01 02 CE FA");
    assert.equal(
      toHex(codec.encodeSyncWrite(116, 4, [{ id: 1, data: uintBytes(150, 4) }, { id: 2, data: uintBytes(170, 4) }])),
      "FF FF FD 00 FE 11 00 83 74 00 04 00 01 96 00 00 00 02 AA 00 00 00 82 87",
    );
    assert.equal(toHex(codec.encodeInstruction(1, 0x08, [])), "FF FF FD 00 01 03 00 08 2F 4E");
  });

  it("encodes and parses the e-manual's status packets", () => {
    const examples = [
      { hex: "FF FF FD 00 01 07 00 55 00 06 04 26 65 5D", id: 1, params: [0x06, 0x04, 0x26] }, // PING: model 1030, fw 38
      { hex: "FF FF FD 00 01 08 00 55 00 A6 00 00 00 8C C0", id: 1, params: [0xa6, 0, 0, 0] }, // READ: position 166
      { hex: "FF FF FD 00 02 08 00 55 00 1F 08 00 00 BA BE", id: 2, params: [0x1f, 0x08, 0, 0] }, // SYNC_READ id 2: 2079
      { hex: "FF FF FD 00 01 04 00 55 00 A1 0C", id: 1, params: [] }, // WRITE acknowledged
    ];
    for (const example of examples) {
      assert.equal(toHex(codec.encodeStatus(example.id, 0, example.params)), example.hex);
      const [event] = codec.createParser().push(fromHex(example.hex));
      assert.equal(event.type, "frame", example.hex);
      const status = event.type === "frame" ? codec.toStatus(event.frame) : null;
      assert.deepEqual(status, { id: example.id, error: 0, params: Uint8Array.from(example.params) });
    }
  });

  it("computes CRC over header to last parameter", () => {
    assert.equal(dynamixelCrc([0xff, 0xff, 0xfd, 0x00, 0x01, 0x03, 0x00, 0x01]), 0x4e19);
  });

  describe("byte stuffing", () => {
    it("adds FD after FF FF FD and removes it again", () => {
      assert.deepEqual(stuff([0xff, 0xff, 0xfd]), [0xff, 0xff, 0xfd, 0xfd]);
      assert.deepEqual(stuff([0x01, 0xff, 0xff, 0xfd, 0xff, 0xff, 0xfd, 0x02]), [0x01, 0xff, 0xff, 0xfd, 0xfd, 0xff, 0xff, 0xfd, 0xfd, 0x02]);
      assert.deepEqual(stuff([0xff, 0xff, 0xff, 0xfd]), [0xff, 0xff, 0xff, 0xfd, 0xfd]);
      for (const data of [[0xff, 0xff, 0xfd], [0xff, 0xff, 0xfd, 0xfd], [0xff, 0xff, 0xff, 0xfd, 0x00], [0xfd, 0xff, 0xff], []]) {
        assert.deepEqual(Array.from(unstuff(stuff(data))), data);
      }
    });

    it("stuffs the packet on send (length counts the extra byte) and unstuffs on receive", () => {
      // Writing 0x00FDFFFF to Goal Position contains FF FF FD on the wire.
      const data = [0xff, 0xff, 0xfd, 0x00];
      const packet = codec.encodeWrite(1, 116, data);
      assert.equal(toHex(packet.subarray(0, 15)), "FF FF FD 00 01 0A 00 03 74 00 FF FF FD FD 00");
      assert.equal(packet.length, 17);
      assert.equal(dynamixelCrc(packet, 0, packet.length - 2), packet[15] | (packet[16] << 8));
      const [event] = codec.createParser().push(packet);
      const decoded = event.type === "frame" ? codec.decodeInstruction(event.frame) : null;
      assert.deepEqual(decoded, { kind: "write", id: 1, address: 116, data: Uint8Array.from(data) });
    });

    it("round-trips status packets whose data contains the header pattern", () => {
      const params = [0xff, 0xff, 0xfd, 0x00, 0xff, 0xff, 0xfd, 0xfd];
      const [event] = codec.createParser().push(codec.encodeStatus(3, 0, params));
      assert.deepEqual(event.type === "frame" ? codec.toStatus(event.frame)?.params : null, Uint8Array.from(params));
    });
  });

  describe("stream parser", () => {
    const good = "FF FF FD 00 01 04 00 55 00 A1 0C";

    it("resynchronises on garbage and splits", () => {
      const parser = codec.createParser();
      const bytes = fromHex(`00 FF FF FD 12 FF ${good} FF FF ${good}`);
      const events: ParseEvent[] = [];
      for (let i = 0; i < bytes.length; i += 3) events.push(...parser.push(bytes.subarray(i, i + 3)));
      assert.deepEqual(frames(events), [good, good]);
      assert.deepEqual(errors(events), []);
      assert.equal(garbageBytes(events), 8);
    });

    it("reports a CRC mismatch and keeps going", () => {
      const events = codec.createParser().push(fromHex(`FF FF FD 00 01 04 00 55 00 A1 0D ${good}`));
      assert.deepEqual(errors(events), ["checksum"]);
      assert.deepEqual(frames(events), [good]);
    });

    it("reports impossible ids and lengths as malformed, unfinished packets as short", () => {
      const parser = codec.createParser();
      const events = parser.push(fromHex(`FF FF FD 00 FD 04 00 FF FF FD 00 01 02 00 ${good} FF FF FD 00 01 08 00 55`));
      assert.deepEqual(errors(events), ["malformed", "malformed"]);
      assert.deepEqual(frames(events), [good]);
      assert.deepEqual(errors(parser.flush()), ["short"]);
    });

    it("flags the hardware alert bit and error numbers", () => {
      assert.equal(codec.isInstructionError(0x80), false);
      assert.equal(codec.isInstructionError(0x04), true);
      assert.equal(codec.describeError(0x84), "dataRangeError+hardwareAlert");
    });
  });
});
