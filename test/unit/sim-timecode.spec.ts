/**
 * The burnt-in timecode the streams bench reads at the far end of the video pipeline: drawn into a
 * simulated camera's frames only when asked, and read back from the JPEG (a lossy codec) as the
 * millisecond the frame was captured.
 */
import assert from "node:assert/strict";
import { SimCamera } from "../../simulators/devices/sim-camera.js";
import { decodeJpeg } from "../../simulators/render/jpeg-codec.js";
import { readTimecode, stampTimecode, TIMECODE_BITS } from "../../simulators/render/timecode.js";
import { SimWorld } from "../../simulators/world/sim-world.js";

function lumaOf(image: { width: number; rgb: Uint8Array }) {
  return (x: number, y: number) => {
    const o = (y * image.width + x) * 3;
    return (image.rgb[o]! + image.rgb[o + 1]! + image.rgb[o + 2]!) / 3;
  };
}

describe("simulated camera timecode", () => {
  it("reads back every code it draws, unwrapped to the latest matching instant", () => {
    const width = 320, height = 240;
    const rgb = new Uint8Array(width * height * 3).fill(90);
    const now = 1_764_000_000_123;
    for (const ageMs of [0, 1, 37, 999, 2 ** TIMECODE_BITS - 1]) {
      stampTimecode(rgb, width, height, now - ageMs);
      assert.equal(readTimecode(lumaOf({ width, rgb }), width, height, now), now - ageMs, `age ${ageMs} ms`);
    }
  });

  it("burns the capture time into a camera's JPEG only when the cell is configured to", async () => {
    const world = new SimWorld({ model: "so101", seed: 3, engine: "kinematic" });
    const stamped = new SimCamera(world, "top", 30, { timecode: true });
    const plain = new SimCamera(world, "top", 30);
    const before = Date.now();
    const frame = await stamped.capture();
    const after = Date.now();
    const image = decodeJpeg(frame.jpeg);
    const captured = readTimecode(lumaOf(image), image.width, image.height, after);
    assert.ok(captured >= before && captured <= after, `captured ${captured} within [${before}, ${after}]`);
    // The raw frame carries the same code as its JPEG.
    assert.equal(readTimecode(lumaOf({ width: frame.width, rgb: frame.rgb! }), frame.width, frame.height, after), captured);
    // Without the option the band is the scene: no white guard block in the corner.
    const scene = decodeJpeg((await plain.capture()).jpeg);
    assert.ok(lumaOf(scene)(5, 5) < 200, "no timecode band");
  });
});
