/**
 * Known answers for NatNet: packets laid out by hand from the NatNet SDK's packet descriptions
 * (sServerDescription, sDataDescriptions, sFrameOfMocapData as NatNetClient.py 4.1 unpacks them), which
 * the agent's codec (cell-agent/devices/natnet) and the emulator's own packets (simulators/natnet) must
 * both produce and read. Floats are chosen to be exact in float32.
 */
import assert from "node:assert/strict";
import { decodeMessage, encodeConnect, encodeFrame, encodeModelDef, encodeServerInfo, type NatNetVersion } from "../../cell-agent/devices/natnet/natnet-messages.js";
import { framePacket, modelDefPacket, requestId, serverInfoPacket } from "../../simulators/natnet/natnet-wire.js";

/** Hex with spaces, comments after `#` on each line. */
function hex(text: string): Buffer {
  const clean = text.split("\n").map((line) => line.replace(/#.*/, "")).join("").replace(/\s+/g, "");
  return Buffer.from(clean, "hex");
}

const zeros = (n: number): string => "00 ".repeat(n);
const V41: NatNetVersion = [4, 1, 0, 0];
const V30: NatNetVersion = [3, 0, 0, 0];

// NAT_SERVERINFO (id 1), payload 256 + 4 + 4 + 8 + 2 + 1 + 4 = 279 = 0x0117 bytes.
const SERVER_INFO = hex(`
  01 00 17 01                      # message 1, 279 payload bytes
  4D 6F 74 69 76 65 ${zeros(250)}  # "Motive", zero-padded to char[256]
  03 01 00 00                      # server (Motive) 3.1.0.0
  04 01 00 00                      # NatNet 4.1.0.0
  40 42 0F 00 00 00 00 00          # high-resolution clock 1 000 000 Hz
  E7 05                            # data port 1511
  00                               # unicast
  00 00 00 00                      # no multicast group
`);

// NAT_MODELDEF (id 5) with one rigid body "cube" id 3, NatNet 3.0+: 4 + 4 + 5 + 4 + 4 + 12 + 4 = 37 = 0x25.
const MODEL_DEF = hex(`
  05 00 25 00                      # message 5, 37 payload bytes
  01 00 00 00                      # one description
  01 00 00 00                      # type 1: rigid body
  63 75 62 65 00                   # "cube\\0"
  03 00 00 00                      # id 3
  FF FF FF FF                      # parent -1
  ${zeros(12)}                     # offset 0, 0, 0
  00 00 00 00                      # no markers (3.0+)
`);

const FRAME_BODY = `
  03 00 00 00                      # id 3
  00 00 80 3F  00 00 00 BF  00 00 80 3E   # position 1, -0.5, 0.25 m
  00 00 00 00  00 00 00 00  00 00 00 00  00 00 80 3F   # quaternion 0, 0, 0, 1
  00 00 00 00                      # mean marker error 0
  01 00                            # params: tracking valid
`;

// NAT_FRAMEOFDATA (id 7), NatNet 4.1: frame 42, one rigid body, sections with sizes, suffix with stamps
// and precision time. Payload 4 + 8 + 8 + (8 + 38) + 8 + 8 + 8 + 8 + 8 + 4 + 4 + 8 + 24 + 8 + 2 = 156 = 0x9C.
const FRAME_41 = hex(`
  07 00 9C 00                      # message 7, 156 payload bytes
  2A 00 00 00                      # frame 42
  00 00 00 00 00 00 00 00          # marker sets: 0, 0 bytes
  00 00 00 00 00 00 00 00          # legacy markers: 0, 0 bytes
  01 00 00 00 26 00 00 00          # rigid bodies: 1, 38 bytes
  ${FRAME_BODY}
  00 00 00 00 00 00 00 00          # skeletons
  00 00 00 00 00 00 00 00          # assets (4.1+)
  00 00 00 00 00 00 00 00          # labeled markers
  00 00 00 00 00 00 00 00          # force plates
  00 00 00 00 00 00 00 00          # devices
  00 00 00 00 00 00 00 00          # timecode, subframe
  00 00 00 00 00 00 04 40          # timestamp 2.5 s
  A0 25 26 00 00 00 00 00          # camera mid-exposure 2 500 000 ticks
  A0 25 26 00 00 00 00 00          # data received
  A0 25 26 00 00 00 00 00          # transmit
  00 00 00 00 00 00 00 00          # precision timestamp (4.0+)
  02 00                            # params: tracked models changed
`);

// The same frame in NatNet 3.0: no section sizes, no assets, no precision timestamp.
// Payload 4 + 4 + 4 + 4 + 38 + 4 + 4 + 4 + 4 + 8 + 8 + 24 + 2 = 112 = 0x70.
const FRAME_30 = hex(`
  07 00 70 00
  2A 00 00 00                      # frame 42
  00 00 00 00                      # marker sets
  00 00 00 00                      # legacy markers
  01 00 00 00                      # rigid bodies: 1
  ${FRAME_BODY}
  00 00 00 00                      # skeletons
  00 00 00 00                      # labeled markers
  00 00 00 00                      # force plates
  00 00 00 00                      # devices
  00 00 00 00 00 00 00 00          # timecode, subframe
  00 00 00 00 00 00 04 40          # timestamp 2.5 s
  A0 25 26 00 00 00 00 00
  A0 25 26 00 00 00 00 00
  A0 25 26 00 00 00 00 00
  02 00
`);

const BODY = { id: 3, positionM: [1, -0.5, 0.25] as [number, number, number], orientation: [0, 0, 0, 1] as [number, number, number, number], meanErrorM: 0, trackingValid: true };

describe("NatNet wire known answers", () => {
  it("NAT_SERVERINFO: both sides write the same bytes and the agent reads them", () => {
    assert.equal(serverInfoPacket({ appName: "Motive", appVersion: [3, 1, 0, 0], natNetVersion: V41, highResClockHz: 1_000_000n, dataPort: 1511, multicastAddress: null }).toString("hex"), SERVER_INFO.toString("hex"), "emulator");
    assert.equal(encodeServerInfo({ appName: "Motive", appVersion: [3, 1, 0, 0], natNetVersion: V41, highResClockFrequency: 1_000_000n, dataPort: 1511, multicast: false, multicastAddress: "0.0.0.0" }).toString("hex"), SERVER_INFO.toString("hex"), "agent");
    const message = decodeMessage(SERVER_INFO, V41);
    assert.ok("serverInfo" in message);
    assert.deepEqual(message.serverInfo, { appName: "Motive", appVersion: [3, 1, 0, 0], natNetVersion: V41, highResClockFrequency: 1_000_000n, dataPort: 1511, multicast: false, multicastAddress: "0.0.0.0" });
  });

  it("NAT_MODELDEF with one rigid body: both sides write the same bytes and the agent reads them", () => {
    assert.equal(modelDefPacket([{ name: "cube", id: 3 }], V41).toString("hex"), MODEL_DEF.toString("hex"), "emulator");
    assert.equal(encodeModelDef([{ name: "cube", id: 3, parentId: -1, offsetM: [0, 0, 0] }], V41).toString("hex"), MODEL_DEF.toString("hex"), "agent");
    const message = decodeMessage(MODEL_DEF, V41);
    assert.ok("rigidBodies" in message);
    assert.deepEqual(message.rigidBodies, [{ name: "cube", id: 3, parentId: -1, offsetM: [0, 0, 0] }]);
  });

  for (const [version, bytes] of [[V41, FRAME_41], [V30, FRAME_30]] as const) {
    it(`NAT_FRAMEOFDATA in NatNet ${version.join(".")}: both sides write the same bytes and the agent reads them`, () => {
      assert.equal(framePacket({ frameNumber: 42, timestampS: 2.5, stamp: 2_500_000n, trackedModelsChanged: true, rigidBodies: [BODY] }, version).toString("hex"), bytes.toString("hex"), "emulator");
      const agent = encodeFrame({
        frameNumber: 42, timestampS: 2.5, rigidBodies: [BODY], trackedModelsChanged: true,
        stampCameraMidExposure: 2_500_000n, stampDataReceived: 2_500_000n, stampTransmit: 2_500_000n,
      }, version);
      assert.equal(agent.toString("hex"), bytes.toString("hex"), "agent");
      const message = decodeMessage(bytes, version);
      assert.ok("frame" in message);
      assert.deepEqual(message.frame, {
        frameNumber: 42, rigidBodies: [BODY], timestampS: 2.5, trackedModelsChanged: true, otherItems: 0,
        stampCameraMidExposure: 2_500_000n, stampDataReceived: 2_500_000n, stampTransmit: 2_500_000n,
      });
    });
  }

  it("NAT_CONNECT from the agent: the emulator reads its message id; a truncated datagram is none", () => {
    // sender block: char[256] name, uint8[4] app version, uint8[4] NatNet version; then sConnectionOptions.
    const connect = hex(`
      00 00 0F 01                    # message 0, 256 + 8 + 1 + 4 + 2 = 271 payload bytes
      41 73 73 61 79 ${zeros(251)}   # "Assay"
      ${zeros(8)}                    # versions
      00                             # subscribedDataOnly
      04 01 00 00                    # bitstream 4.1 requested
      00 00
    `);
    assert.equal(encodeConnect({ appName: "Assay", requestedVersion: V41 }).toString("hex"), connect.toString("hex"), "agent");
    assert.equal(requestId(connect), 0);
    assert.equal(requestId(connect.subarray(0, 100)), null);
  });
});
