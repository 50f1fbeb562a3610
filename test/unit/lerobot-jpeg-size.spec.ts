/**
 * The LeRobot export reads a camera's frame size from the first JPEG's start-of-frame header
 * instead of decoding it: checked against JPEGs from two encoders (jpeg-js baseline, libvips via
 * sharp baseline and progressive), odd sizes included.
 */
import assert from "node:assert/strict";
import jpeg from "jpeg-js";
import sharp from "sharp";
import { jpegSize } from "../../coordinator/exports/lerobot/episode-frames.js";

describe("LeRobot export: JPEG frame size from the SOF header", () => {
  it("reads width and height of baseline and progressive JPEGs, and nothing from bytes that are not a JPEG", async () => {
    for (const [width, height] of [[32, 24], [17, 13], [640, 480]] as const) {
      const raw = { raw: { width, height, channels: 3 as const } };
      const frames = [
        jpeg.encode({ width, height, data: Buffer.alloc(width * height * 4, 128) }, 90).data,
        await sharp(Buffer.alloc(width * height * 3, 100), raw).jpeg({ quality: 80 }).toBuffer(),
        await sharp(Buffer.alloc(width * height * 3, 100), raw).jpeg({ progressive: true }).toBuffer(),
      ];
      for (const frame of frames) assert.deepEqual(jpegSize(frame), { width, height });
    }
    assert.equal(jpegSize(Buffer.from("not a jpeg")), undefined);
    assert.equal(jpegSize(Buffer.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x02, 0, 0, 0, 0, 0])), undefined, "a scan before any frame header");
  });
});
