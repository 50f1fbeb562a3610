import assert from "node:assert/strict";
import { JpegStreamSplitter } from "../../cell-agent/devices/camera/jpeg-stream-splitter.js";

const jpeg = (fill: number, length = 6) => Buffer.from([0xff, 0xd8, ...new Array(length).fill(fill), 0xff, 0xd9]);

describe("JPEG stream splitter", () => {
  it("cuts whole frames out of multipart chunks and drops what lies between them", () => {
    const splitter = new JpegStreamSplitter();
    const stream = Buffer.concat([Buffer.from("--frame\r\nContent-Type: image/jpeg\r\n\r\n"), jpeg(1), Buffer.from("\r\n--frame\r\n\r\n"), jpeg(2)]);
    assert.deepEqual(splitter.push(stream).map((f) => Buffer.from(f)), [jpeg(1), jpeg(2)]);
  });

  it("joins a frame split anywhere across chunks, including between the two bytes of its start marker", () => {
    const stream = Buffer.concat([Buffer.from("xx"), jpeg(3), Buffer.from("yy"), jpeg(4)]);
    for (let cut = 1; cut < stream.length; cut++) {
      const splitter = new JpegStreamSplitter();
      const frames = [...splitter.push(stream.subarray(0, cut)), ...splitter.push(stream.subarray(cut))];
      assert.deepEqual(frames.map((f) => Buffer.from(f)), [jpeg(3), jpeg(4)], `cut at byte ${cut}`);
    }
  });

  it("drops a frame that never ends once it passes the bound, then finds the next one", () => {
    const splitter = new JpegStreamSplitter(64);
    assert.deepEqual(splitter.push(Buffer.concat([Buffer.from([0xff, 0xd8]), Buffer.alloc(100, 7)])), []);
    assert.deepEqual(splitter.push(jpeg(5)).map((f) => Buffer.from(f)), [jpeg(5)]);
  });

  it("forgets a partial frame on reset", () => {
    const splitter = new JpegStreamSplitter();
    splitter.push(jpeg(6).subarray(0, 5));
    splitter.reset();
    assert.deepEqual(splitter.push(Buffer.concat([Buffer.from([0, 0, 0xff, 0xd9]), jpeg(7)])).map((f) => Buffer.from(f)), [jpeg(7)]);
  });
});
