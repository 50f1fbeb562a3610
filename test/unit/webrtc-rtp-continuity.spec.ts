import { strict as assert } from "node:assert";
import { RtpContinuity } from "../../coordinator/streams/webrtc/rtp-continuity.js";

/** A minimal RTP packet (12-byte header, one payload byte). */
function rtp(seq: number, timestamp: number): Buffer {
  const packet = Buffer.alloc(13);
  packet[0] = 0x80;
  packet[1] = 96;
  packet.writeUInt16BE(seq, 2);
  packet.writeUInt32BE(timestamp, 4);
  packet.writeUInt32BE(0x1234, 8);
  return packet;
}

const header = (packet: Buffer) => ({ seq: packet.readUInt16BE(2), timestamp: packet.readUInt32BE(4) });

describe("webrtc RTP continuity across encoder restarts", () => {
  it("leaves the first source's packets as they are", () => {
    const continuity = new RtpContinuity();
    const packets = [rtp(100, 5000), rtp(101, 5000), rtp(102, 11000)];
    packets.forEach((p, i) => continuity.rewrite(p, 1000 + i));
    assert.deepEqual(packets.map(header), [{ seq: 100, timestamp: 5000 }, { seq: 101, timestamp: 5000 }, { seq: 102, timestamp: 11000 }]);
  });

  it("continues a new source from the last packet: next sequence number, timestamp advanced by the wall-clock gap", () => {
    const continuity = new RtpContinuity();
    continuity.rewrite(rtp(65535, 4294967000), 1000);
    continuity.newSource();
    const first = rtp(7, 123);
    const second = rtp(8, 123 + 9000);
    continuity.rewrite(first, 1500); // 500 ms later: 45000 ticks
    continuity.rewrite(second, 1600);
    assert.deepEqual(header(first), { seq: 0, timestamp: (4294967000 + 45000) % 2 ** 32 });
    assert.deepEqual(header(second), { seq: 1, timestamp: (4294967000 + 45000 + 9000) % 2 ** 32 });
  });

  it("has nothing to rebase on when the first source is new", () => {
    const continuity = new RtpContinuity();
    continuity.newSource();
    const packet = rtp(42, 777);
    continuity.rewrite(packet, 0);
    assert.deepEqual(header(packet), { seq: 42, timestamp: 777 });
  });
});
