import { strict as assert } from "node:assert";
import type { CellStreamHub } from "../../coordinator/streams/cell-stream-hub.js";
import { parseClientMessage } from "../../coordinator/streams/webrtc/signalling-messages.js";
import { transitionViewer } from "../../coordinator/streams/webrtc/viewer-session.js";
import { multipartJpegPart, vp8EncoderArgs } from "../../coordinator/streams/webrtc/vp8-rtp-encoder.js";
import { compileWebRtcSignallingOptions } from "../../coordinator/streams/webrtc/webrtc-signalling.js";

const hub: CellStreamHub = { cameras: () => [], watchCamera: () => () => undefined, watchState: () => () => undefined };

describe("webrtc signalling options", () => {
  it("fills the documented defaults", () => {
    const compiled = compileWebRtcSignallingOptions({ hub });
    assert.deepEqual(compiled.iceServers, []);
    assert.equal(compiled.maxFrameRateHz, 15);
    assert.equal(compiled.connectTimeoutMs, 20_000);
    assert.match(compiled.ffmpegPath, /ffmpeg$/);
  });

  it("rejects unknown keys, rates out of range and ICE URLs of the wrong scheme, naming the value", () => {
    assert.throws(() => compileWebRtcSignallingOptions({ hub, maxFrameRate: 10 } as never), /unknown WebRTC signalling option\(s\): maxFrameRate/);
    assert.throws(() => compileWebRtcSignallingOptions({ hub, maxFrameRateHz: 0 }), /\(0, 120\]; got 0/);
    assert.throws(() => compileWebRtcSignallingOptions({ hub, connectTimeoutMs: -5 }), /got -5/);
    assert.throws(
      () => compileWebRtcSignallingOptions({ hub, iceServers: [{ urls: ["stun:stun.example:3478", "http://example"] }] }),
      /stun:, stuns:, turn: or turns: URLs; got \["stun:stun.example:3478","http:\/\/example"\]/,
    );
    assert.doesNotThrow(() => compileWebRtcSignallingOptions({ hub, iceServers: [{ urls: "turn:turn.example:3478?transport=tcp", username: "u", credential: "p" }] }));
  });
});

describe("webrtc signalling messages", () => {
  it("reads an answer and candidates as browsers send them, end-of-candidates included", () => {
    assert.deepEqual(parseClientMessage('{"type":"answer","sdp":"v=0"}'), { type: "answer", sdp: "v=0" });
    const candidate = { candidate: "candidate:1 1 udp 2113937151 192.0.2.9 50000 typ host", sdpMid: "0", sdpMLineIndex: 0, usernameFragment: "abcd" };
    assert.deepEqual(parseClientMessage(JSON.stringify({ type: "candidate", candidate })), { type: "candidate", candidate });
    assert.deepEqual(parseClientMessage('{"type":"candidate","candidate":null}'), { type: "candidate", candidate: null });
  });

  it("says what is wrong with a message", () => {
    assert.throws(() => parseClientMessage("{"), /messages must be JSON objects; got "\{"/);
    assert.throws(() => parseClientMessage('{"type":"offer","sdp":"v=0"}'), /message type must be "answer" or "candidate"; got "offer"/);
    assert.throws(() => parseClientMessage('{"type":"candidate","candidate":{"sdpMid":"0"}}'), /invalid "candidate" message: candidate.candidate/);
  });
});

describe("webrtc viewer lifecycle", () => {
  it("allows offering -> awaiting-answer -> connecting -> connected -> closed, and closing from anywhere", () => {
    assert.equal(transitionViewer("offering", "awaiting-answer"), "awaiting-answer");
    assert.equal(transitionViewer("awaiting-answer", "connecting"), "connecting");
    assert.equal(transitionViewer("connecting", "connected"), "connected");
    for (const from of ["offering", "awaiting-answer", "connecting", "connected"] as const) assert.equal(transitionViewer(from, "closed"), "closed");
  });

  it("rejects skipping the answer, going back, or leaving closed", () => {
    assert.throws(() => transitionViewer("awaiting-answer", "connected"), /cannot move from awaiting-answer to connected/);
    assert.throws(() => transitionViewer("connected", "connecting"), /cannot move from connected to connecting/);
    assert.throws(() => transitionViewer("closed", "closed"), /cannot move from closed to closed/);
  });
});

describe("webrtc VP8 encoder input and arguments", () => {
  it("frames each JPEG as a multipart part with its Content-Length", () => {
    const part = multipartJpegPart(Uint8Array.from([0xff, 0xd8, 0xff, 0xd9]));
    assert.equal(part.subarray(0, part.length - 6).toString("latin1"), "--assayframe\r\nContent-Type: image/jpeg\r\nContent-Length: 4\r\n\r\n");
    assert.deepEqual([...part.subarray(part.length - 6)], [0xff, 0xd8, 0xff, 0xd9, 0x0d, 0x0a]);
  });

  it("sends RTP and any RTCP to our own port, with no look-ahead and a keyframe every second", () => {
    const args = vp8EncoderArgs({ rtpPort: 40000, bitrateKbps: 300, maxFrameRateHz: 15 });
    assert.equal(args.at(-1), "rtp://127.0.0.1:40000?pkt_size=1200&rtcpport=40000");
    const after = (flag: string) => args[args.indexOf(flag) + 1];
    assert.equal(after("-lag-in-frames"), "0");
    assert.equal(after("-deadline"), "realtime");
    assert.equal(after("-force_key_frames"), "expr:gte(t,n_forced*1)");
    assert.equal(after("-rtpflags"), "skip_rtcp");
    assert.ok(!args.includes("nobuffer"), "-fflags nobuffer holds every frame back by one");
  });
});
