import assert from "node:assert/strict";
import {
  NAT_CONNECT, NAT_FRAMEOFDATA, NAT_MODELDEF, NAT_REQUEST_MODELDEF, NAT_SERVERINFO, NatNetDecodeError,
  decodeMessage, encodeConnect, encodeEmpty, encodeFrame, encodeModelDef, encodeServerInfo, type NatNetFrame, type NatNetVersion,
} from "../../cell-agent/devices/natnet/natnet-messages.js";

const V3: NatNetVersion = [3, 1, 0, 0];
const V40: NatNetVersion = [4, 0, 0, 0];
const V41: NatNetVersion = [4, 1, 0, 0];

const FRAME: Omit<NatNetFrame, "otherItems"> = {
  frameNumber: 1234,
  rigidBodies: [
    { id: 1, positionM: [0.24, -0.04, 0.015], orientation: [0, 0, 0.149438, 0.988771], meanErrorM: 0.0002, trackingValid: true },
    { id: 7, positionM: [-1.5, 2.25, 0.1], orientation: [0.1, 0.2, 0.3, 0.927], meanErrorM: 0, trackingValid: false },
  ],
  timestampS: 10.283333333,
  stampCameraMidExposure: 10_283_333n,
  stampDataReceived: 10_283_400n,
  stampTransmit: 10_283_500n,
  trackedModelsChanged: true,
};

const f32 = (v: number) => Math.fround(v);

/** Little-endian helpers for hand-built packets. */
const i32 = (v: number) => { const b = Buffer.alloc(4); b.writeInt32LE(v); return b; };
const f32b = (...vs: number[]) => Buffer.concat(vs.map((v) => { const b = Buffer.alloc(4); b.writeFloatLE(v); return b; }));
const i16 = (v: number) => { const b = Buffer.alloc(2); b.writeInt16LE(v); return b; };
const u64 = (v: bigint) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(v); return b; };
const withHeader = (id: number, payload: Buffer) => Buffer.concat([Buffer.from([id & 0xff, id >> 8, payload.length & 0xff, payload.length >> 8]), payload]);

describe("NatNet packets", () => {
  for (const version of [V3, V40, V41]) {
    it(`round-trips a frame of rigid bodies in bitstream ${version.join(".")} at float32 precision`, () => {
      const bytes = encodeFrame(FRAME, version);
      assert.equal(bytes.readUInt16LE(0), NAT_FRAMEOFDATA);
      assert.equal(bytes.readUInt16LE(2), bytes.length - 4);
      const message = decodeMessage(bytes, version);
      assert.ok("frame" in message);
      const frame = message.frame;
      assert.equal(frame.frameNumber, 1234);
      assert.equal(frame.rigidBodies.length, 2);
      FRAME.rigidBodies.forEach((body, i) => {
        const got = frame.rigidBodies[i];
        assert.equal(got.id, body.id);
        assert.deepEqual(got.positionM, body.positionM.map(f32));
        assert.deepEqual(got.orientation, body.orientation.map(f32));
        assert.equal(got.trackingValid, body.trackingValid);
      });
      assert.equal(frame.timestampS, FRAME.timestampS);
      assert.equal(frame.stampTransmit, FRAME.stampTransmit);
      assert.equal(frame.trackedModelsChanged, true);
    });
  }

  it("lays a 3.x rigid body out as id, x y z, qx qy qz qw, error, params after the empty marker sections", () => {
    const bytes = encodeFrame({ ...FRAME, rigidBodies: [FRAME.rigidBodies[0]] }, V3);
    // header 4 | frame number 4 | marker sets 4 | legacy markers 4 | rigid body count 4
    assert.equal(bytes.readInt32LE(4), 1234);
    assert.equal(bytes.readInt32LE(16), 1);
    const rb = 20;
    assert.equal(bytes.readInt32LE(rb), 1);
    assert.equal(bytes.readFloatLE(rb + 4), f32(0.24));
    assert.equal(bytes.readFloatLE(rb + 16), f32(0));
    assert.equal(bytes.readFloatLE(rb + 28), f32(0.988771));
    assert.equal(bytes.readFloatLE(rb + 32), f32(0.0002));
    assert.equal(bytes.readInt16LE(rb + 36), 1);
    // 4.1 puts a byte count after every section count: the rigid body section says 38 bytes.
    const v41 = encodeFrame({ ...FRAME, rigidBodies: [FRAME.rigidBodies[0]] }, V41);
    assert.equal(v41.readInt32LE(4 + 4 + 8 + 8), 1);
    assert.equal(v41.readInt32LE(4 + 4 + 8 + 8 + 4), 38);
  });

  it("reads past marker sets, labeled markers, skeletons, force plates and devices that Motive sends", () => {
    const rigid = Buffer.concat([i32(3), f32b(1, 2, 3), f32b(0, 0, 0, 1), f32b(0.001), i16(1)]);
    const payload = Buffer.concat([
      i32(99),
      i32(1), Buffer.from("cube\0"), i32(2), f32b(0, 0, 0, 1, 1, 1), // one marker set, two markers
      i32(1), f32b(5, 5, 5), // one legacy marker
      i32(1), rigid,
      i32(1), i32(10), i32(1), rigid, // one skeleton with one bone
      i32(1), i32(0x10001), f32b(1, 1, 1), f32b(0.01), i16(0), f32b(0.0001), // one labeled marker (3.x)
      i32(1), i32(4), i32(1), i32(2), f32b(1.5, 2.5), // one force plate, one channel, two values
      i32(0), // devices
      i32(0), i32(0), Buffer.alloc(8), u64(1n), u64(2n), u64(3n), i16(0),
    ]);
    const message = decodeMessage(withHeader(NAT_FRAMEOFDATA, payload), V3);
    assert.ok("frame" in message);
    assert.equal(message.frame.frameNumber, 99);
    assert.deepEqual(message.frame.rigidBodies.map((b) => b.id), [3]);
    assert.deepEqual(message.frame.rigidBodies[0].positionM, [1, 2, 3]);
    assert.equal(message.frame.otherItems, 2 + 1 + 1 + 1 + 1);
    assert.equal(message.frame.stampTransmit, 3n);
  });

  it("round-trips model definitions (rigid body names and ids)", () => {
    for (const version of [V3, V41]) {
      const bodies = [{ name: "cube", id: 1, parentId: -1, offsetM: [0, 0, 0] as [number, number, number] }, { name: "gripper", id: 2, parentId: -1, offsetM: [0, 0, 0.01] as [number, number, number] }];
      const bytes = encodeModelDef(bodies, version);
      assert.equal(bytes.readUInt16LE(0), NAT_MODELDEF);
      assert.equal(bytes.readInt32LE(4), 2, "dataset count");
      assert.equal(bytes.readInt32LE(8), 1, "dataset type 1 = rigid body");
      assert.equal(bytes.toString("utf8", 12, 17), "cube\0");
      const message = decodeMessage(bytes, version);
      assert.ok("rigidBodies" in message);
      assert.deepEqual(message.rigidBodies.map((b) => [b.name, b.id]), [["cube", 1], ["gripper", 2]]);
      assert.equal(message.rigidBodies[1].offsetM[2], f32(0.01));
    }
  });

  it("encodes NAT_CONNECT with the bitstream version at sConnectionOptions and decodes NAT_SERVERINFO", () => {
    const connect = encodeConnect({ appName: "assay", requestedVersion: [4, 1, 0, 0] });
    assert.equal(connect.readUInt16LE(0), NAT_CONNECT);
    assert.equal(connect.readUInt16LE(2), 271);
    assert.deepEqual([...connect.subarray(4 + 265, 4 + 269)], [4, 1, 0, 0]);
    const decoded = decodeMessage(connect, [0, 0, 0, 0]);
    assert.ok("connect" in decoded);
    assert.deepEqual(decoded.connect, { appName: "assay", requestedVersion: [4, 1, 0, 0] });

    const info = encodeServerInfo({ appName: "Motive", appVersion: [3, 1, 0, 0], natNetVersion: V41, highResClockFrequency: 1_000_000n, dataPort: 1511, multicast: false, multicastAddress: "239.255.42.99" });
    assert.equal(info.readUInt16LE(0), NAT_SERVERINFO);
    assert.equal(info.readUInt16LE(2), 256 + 4 + 4 + 8 + 2 + 1 + 4);
    assert.deepEqual([...info.subarray(4 + 260, 4 + 264)], [4, 1, 0, 0]);
    const message = decodeMessage(info, [0, 0, 0, 0]);
    assert.ok("serverInfo" in message);
    assert.equal(message.serverInfo.appName, "Motive");
    assert.deepEqual(message.serverInfo.natNetVersion, V41);
    assert.equal(message.serverInfo.dataPort, 1511);
    assert.equal(message.serverInfo.multicastAddress, "239.255.42.99");
    assert.deepEqual([...encodeEmpty(NAT_REQUEST_MODELDEF)], [4, 0, 0, 0]);
  });

  it("rejects malformed packets with a NatNetDecodeError saying what was wrong", () => {
    const frame = encodeFrame(FRAME, V3);
    const cases: Array<[Buffer, NatNetVersion, RegExp]> = [
      [Buffer.from([7, 0]), V3, /shorter than the 4-byte header/],
      [frame.subarray(0, frame.length - 10), V3, /declares \d+ payload bytes but the packet carries/],
      [withHeader(NAT_FRAMEOFDATA, frame.subarray(4, frame.length - 10)), V3, /packet ends inside/],
      [withHeader(NAT_FRAMEOFDATA, Buffer.concat([i32(1), i32(0), i32(0), i32(100000)])), V3, /rigid body count 100000 cannot fit/],
      [withHeader(NAT_FRAMEOFDATA, Buffer.concat([i32(1), i32(-1)])), V3, /marker set count -1/],
      [withHeader(NAT_MODELDEF, Buffer.concat([i32(1), i32(1), Buffer.from("no-terminator")])), V3, /not NUL-terminated/],
      [frame, [2, 9, 0, 0], /bitstream version 2.9.0.0 is not supported/],
      // A 3.x frame read as 4.1 misreads counts as sizes and runs out.
      [frame, V41, /cannot fit|packet ends inside|negative/],
    ];
    for (const [bytes, version, pattern] of cases) {
      assert.throws(() => decodeMessage(bytes, version), (error: unknown) => error instanceof NatNetDecodeError && pattern.test(error.message), pattern.source);
    }
  });
});
