import assert from "node:assert/strict";
import { ParseEvent, fromHex, toHex } from "../../cell-agent/devices/servo/codec.js";
import {
  FeetechErrorBit,
  decodeSignMagnitude,
  encodeSignMagnitude,
  feetechChecksum,
  feetechCodec as codec,
} from "../../cell-agent/devices/servo/feetech-protocol.js";

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

describe("Feetech STS/SCS protocol", () => {
  // Examples from the Feetech SCS/STS protocol manual, as reproduced by scservo_sdk users.
  it("encodes the manual's instruction packets byte for byte", () => {
    assert.equal(toHex(codec.encodePing(1)), "FF FF 01 02 01 FB");
    assert.equal(toHex(codec.encodeRead(1, 0x38, 2)), "FF FF 01 04 02 38 02 BE");
    assert.equal(toHex(codec.encodeRead(1, 0x3f, 1)), "FF FF 01 04 02 3F 01 B8");
    assert.equal(toHex(codec.encodeWrite(1, 0x28, [1])), "FF FF 01 04 03 28 01 CE");
    assert.equal(toHex(codec.encodeWrite(1, 0x28, [0])), "FF FF 01 04 03 28 00 CF");
    assert.equal(toHex(codec.encodeWrite(1, 42, [0x00, 0x08])), "FF FF 01 05 03 2A 00 08 C4");
    // Goal position 2048, time 0, speed 1000.
    assert.equal(toHex(codec.encodeWrite(1, 42, [0x00, 0x08, 0x00, 0x00, 0xe8, 0x03])), "FF FF 01 09 03 2A 00 08 00 00 E8 03 D5");
  });

  it("checksum is ~(id + len + instruction + params) & 0xFF", () => {
    assert.equal(feetechChecksum([0x01, 0x04, 0x02, 0x38, 0x02]), 0xbe);
    assert.equal(feetechChecksum([0x01, 0x02, 0x00]), 0xfc);
  });

  it("parses status packets: empty reply and a 2-byte position", () => {
    const events = codec.createParser().push(fromHex("FF FF 01 02 00 FC FF FF 01 04 00 00 08 F2"));
    assert.deepEqual(errors(events), []);
    const statuses = events.flatMap((e) => (e.type === "frame" ? [codec.toStatus(e.frame)!] : []));
    assert.equal(statuses.length, 2);
    assert.deepEqual({ id: statuses[0].id, error: statuses[0].error, n: statuses[0].params.length }, { id: 1, error: 0, n: 0 });
    assert.equal(statuses[1].params[0] | (statuses[1].params[1] << 8), 2048);
  });

  it("encodes SYNC_READ and SYNC_WRITE to the broadcast id and decodes them back", () => {
    const read = codec.encodeSyncRead([1, 2, 3], 56, 15);
    assert.equal(toHex(read.subarray(0, 7)), "FF FF FE 07 82 38 0F");
    const write = codec.encodeSyncWrite(42, 2, [{ id: 1, data: [0x00, 0x08] }, { id: 2, data: [0xff, 0x0f] }]);
    assert.equal(toHex(write), toHex(codec.encodeInstruction(0xfe, 0x83, [42, 2, 1, 0x00, 0x08, 2, 0xff, 0x0f])));
    const [event] = codec.createParser().push(write);
    assert.equal(event.type, "frame");
    const decoded = event.type === "frame" ? codec.decodeInstruction(event.frame) : null;
    assert.deepEqual(decoded, { kind: "syncWrite", address: 42, length: 2, entries: [{ id: 1, data: Uint8Array.from([0, 8]) }, { id: 2, data: Uint8Array.from([0xff, 0x0f]) }] });
  });

  it("uses sign-magnitude: bit 15 for positions and speeds, bit 11 for the homing offset, bit 10 for load", () => {
    assert.equal(encodeSignMagnitude(-5, 15), 0x8005);
    assert.equal(decodeSignMagnitude(0x8005, 15), -5);
    assert.equal(encodeSignMagnitude(-100, 11), 0x0800 | 100);
    assert.equal(decodeSignMagnitude(0x0400 | 7, 10), -7);
    assert.equal(decodeSignMagnitude(2048, 15), 2048);
    assert.throws(() => encodeSignMagnitude(4096, 11), /out of range/);
  });

  it("describes error bits", () => {
    assert.equal(codec.describeError(FeetechErrorBit.overheat | FeetechErrorBit.overload), "overheat+overload");
    assert.equal(codec.describeError(0), "none");
  });

  describe("stream parser", () => {
    const good = "FF FF 01 04 00 00 08 F2";

    it("finds frames split across any chunking", () => {
      const parser = codec.createParser();
      const bytes = fromHex(`${good} ${good}`);
      const events: ParseEvent[] = [];
      for (const b of bytes) events.push(...parser.push(Uint8Array.of(b)));
      assert.deepEqual(frames(events), [good, good]);
      assert.equal(parser.pendingBytes, 0);
    });

    it("resynchronises after garbage, including stray FF bytes", () => {
      const events = codec.createParser().push(fromHex(`00 13 FF 42 FF ${good} 7E FF ${good}`));
      assert.deepEqual(frames(events), [good, good]);
      assert.deepEqual(errors(events), []);
      assert.equal(garbageBytes(events), 7);
    });

    it("reports a checksum-bad frame and still finds the next one", () => {
      const events = codec.createParser().push(fromHex(`FF FF 01 04 00 00 08 F3 ${good}`));
      assert.deepEqual(errors(events), ["checksum"]);
      assert.deepEqual(frames(events), [good]);
    });

    it("finds a good frame inside a truncated one", () => {
      const events = codec.createParser().push(fromHex(`FF FF 01 04 00 00 ${good}`));
      assert.deepEqual(frames(events), [good]);
      assert.ok(errors(events).includes("checksum"));
    });

    it("reports an impossible length as malformed and a cut-off frame as short on flush", () => {
      const parser = codec.createParser();
      const events = parser.push(fromHex(`FF FF 01 01 00 ${good} FF FF 02 04 00`));
      assert.deepEqual(frames(events), [good]);
      assert.equal(errors(events)[0], "malformed");
      assert.equal(parser.pendingBytes, 5);
      assert.deepEqual(errors(parser.flush()), ["short"]);
      assert.equal(parser.pendingBytes, 0);
    });

    it("never throws on random bytes", () => {
      const parser = codec.createParser();
      let seed = 42;
      for (let i = 0; i < 2000; i++) {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        parser.push(Uint8Array.of(seed & 1 ? 0xff : seed & 0xff));
      }
      parser.flush();
    });
  });
});
