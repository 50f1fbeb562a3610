/**
 * The episode video's raw input: RGB24 to yuv420p (BT.601 limited range) gives the colours ffmpeg's
 * own conversion gives, the WebAssembly SIMD kernel and the JavaScript loop agree byte for byte, and
 * a VideoEncoder fed a camera's raw pixels writes a video a decoder plays back in those colours,
 * one frame per frame, while a camera with only JPEGs still gets the JPEG path.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import ffmpegInstaller from "@ffmpeg-installer/ffmpeg";
import jpeg from "jpeg-js";
import { Yuv420pConverter, rgbToYuv420p, yuv420pSize } from "../../cell-agent/recording/rgb-to-yuv420p.js";
import { VideoEncoder } from "../../cell-agent/recording/video-encoder.js";
import type { CameraFrame } from "../../cell-agent/hardware/types.js";

/** Seeded noise, so a failure repeats. */
function noise(bytes: number, seed: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let s = seed >>> 0;
  for (let i = 0; i < bytes; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    out[i] = s >>> 24;
  }
  return out;
}

function solid(width: number, height: number, [r, g, b]: readonly number[]): Uint8Array {
  const rgb = new Uint8Array(width * height * 3);
  for (let i = 0; i < rgb.length; i += 3) rgb.set([r!, g!, b!], i);
  return rgb;
}

/** Y, Cb and Cr of a frame of one colour, through each path (SIMD, word-wise loop, byte-wise loop). */
function planesOfSolid(width: number, height: number, colour: readonly number[], simd: boolean): [number, number, number] {
  const out = new Uint8Array(yuv420pSize(width, height));
  new Yuv420pConverter(width, height, { simd }).convert(solid(width, height, colour), out);
  const ySize = width * height;
  return [out[0]!, out[ySize]!, out[ySize + ySize / 4]!];
}

describe("RGB24 to yuv420p for the episode video", () => {
  it("gives BT.601 limited-range values, as ffmpeg's yuv420p has them", () => {
    // The studio-swing values of the primaries: white 235/128/128, black 16/128/128, red 82/90/240.
    const expected: Array<[number[], [number, number, number]]> = [
      [[255, 255, 255], [235, 128, 128]],
      [[0, 0, 0], [16, 128, 128]],
      [[255, 0, 0], [82, 90, 240]],
      [[0, 255, 0], [144, 54, 34]],
      [[0, 0, 255], [41, 240, 110]],
    ];
    for (const [colour, planes] of expected) {
      for (const [width, height, simd] of [[32, 2, true], [8, 2, false], [6, 4, false]] as const) {
        assert.deepEqual(planesOfSolid(width, height, colour, simd), planes, `${colour} at ${width}x${height}${simd ? " (SIMD)" : ""}`);
      }
    }
  });

  it("gives the same bytes through the SIMD kernel, the word-wise loop and the byte-wise loop", () => {
    for (const [width, height] of [[16, 2], [48, 6], [320, 240], [640, 480]] as const) {
      const rgb = noise(width * height * 3, width + height);
      const simd = new Yuv420pConverter(width, height);
      assert.equal(simd.usesSimd, true, "a simulated camera's sizes take the SIMD kernel");
      const bySimd = new Uint8Array(yuv420pSize(width, height));
      simd.convert(rgb, bySimd);
      const byWords = new Uint8Array(yuv420pSize(width, height));
      rgbToYuv420p(rgb, width, height, byWords);
      const unaligned = new Uint8Array(rgb.length + 1).subarray(1);
      unaligned.set(rgb);
      const byBytes = new Uint8Array(yuv420pSize(width, height));
      rgbToYuv420p(unaligned, width, height, byBytes);
      assert.ok(Buffer.from(bySimd).equals(Buffer.from(byWords)), `SIMD and word-wise differ at ${width}x${height}`);
      assert.ok(Buffer.from(byBytes).equals(Buffer.from(byWords)), `byte-wise and word-wise differ at ${width}x${height}`);
    }
  });

  it("refuses odd sizes, which 4:2:0 chroma cannot cover", () => {
    assert.throws(() => new Yuv420pConverter(33, 24), /even dimensions; got 33x24/);
  });
});

describe("VideoEncoder input", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "assay-video-input-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** The video's frames decoded back to RGB24. */
  async function decode(path: string, width: number, height: number): Promise<Uint8Array[]> {
    const { stdout } = await promisify(execFile)(ffmpegInstaller.path, ["-loglevel", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1"], { encoding: "buffer", maxBuffer: 64 << 20 });
    const frameBytes = width * height * 3;
    return Array.from({ length: stdout.length / frameBytes }, (_, i) => new Uint8Array(stdout.subarray(i * frameBytes, (i + 1) * frameBytes)));
  }

  const colours = [[200, 40, 40], [40, 200, 40], [40, 40, 200], [128, 128, 128], [230, 230, 230]];

  it("encodes a camera's raw pixels as yuv420p, one frame per frame, in their colours", async () => {
    const [width, height] = [64, 48];
    const encoder = new VideoEncoder(join(dir, "raw.mp4"), 30);
    // A lending camera reuses one buffer for every frame, as the simulated camera does.
    const lent = new Uint8Array(width * height * 3);
    for (const colour of colours) {
      lent.set(solid(width, height, colour));
      const frame: CameraFrame = { tNs: 0n, width, height, jpeg: new Uint8Array(0), rgbView: () => lent };
      await encoder.addFrame(frame);
    }
    assert.equal(encoder.inputFormat, "yuv420p");
    assert.equal(await encoder.finish(), true);
    const frames = await decode(encoder.path, width, height);
    assert.equal(frames.length, colours.length);
    frames.forEach((frame, i) => {
      const centre = ((height / 2) * width + width / 2) * 3;
      for (let c = 0; c < 3; c++) assert.ok(Math.abs(frame[centre + c]! - colours[i]![c]!) <= 6, `frame ${i} channel ${c}: ${frame[centre + c]} for ${colours[i]![c]}`);
    });
  });

  it("keeps every frame's own picture while ffmpeg falls behind and the pipe still holds the frame buffers", async () => {
    // 640 x 480: a yuv420p frame (460 KiB) is more than the pipe takes at once, and converting one
    // (~0.1 ms) is far quicker than x264 encoding it, so frames are converted while the last ones are
    // still in the pipe. A buffer converted into before the pipe took it would show another frame's colour.
    const [width, height] = [640, 480];
    const encoder = new VideoEncoder(join(dir, "behind.mp4"), 30);
    const lent = new Uint8Array(width * height * 3);
    const shades = Array.from({ length: 16 }, (_, i) => [30 + 12 * i, 220 - 12 * i, i % 2 ? 60 : 180]);
    for (const colour of shades) {
      lent.set(solid(width, height, colour));
      await encoder.addFrame({ tNs: 0n, width, height, jpeg: new Uint8Array(0), rgbView: () => lent });
    }
    assert.equal(await encoder.finish(), true);
    const frames = await decode(encoder.path, width, height);
    assert.equal(frames.length, shades.length);
    frames.forEach((frame, i) => {
      const centre = ((height / 2) * width + width / 2) * 3;
      for (let c = 0; c < 3; c++) assert.ok(Math.abs(frame[centre + c]! - shades[i]![c]!) <= 5, `frame ${i} channel ${c}: ${frame[centre + c]} for ${shades[i]![c]}`);
    });
  });

  it("converts into its lent buffers in place, the same bytes as into any other buffer", () => {
    const [width, height] = [320, 240];
    const converter = new Yuv420pConverter(width, height, { buffers: 3 });
    const elsewhere = new Uint8Array(yuv420pSize(width, height));
    for (let i = 0; i < 3; i++) {
      const rgb = noise(width * height * 3, 7 + i);
      converter.convert(rgb, converter.buffer(i));
      converter.convert(rgb, elsewhere);
      assert.ok(Buffer.from(converter.buffer(i)).equals(Buffer.from(elsewhere)), `buffer ${i}`);
    }
    // Each lent buffer keeps its own frame: converting into one leaves the others alone.
    const first = Buffer.from(converter.buffer(0));
    converter.convert(noise(width * height * 3, 99), converter.buffer(1));
    assert.ok(Buffer.from(converter.buffer(0)).equals(first));
    assert.throws(() => converter.buffer(3), /lends 3 buffer\(s\); got index 3/);
  });

  it("keeps piping JPEGs for a camera that has nothing else", async () => {
    const [width, height] = [64, 48];
    const encoder = new VideoEncoder(join(dir, "jpeg.mp4"), 30);
    for (const colour of colours) {
      const rgba = Buffer.alloc(width * height * 4);
      for (let p = 0; p < width * height; p++) rgba.set([colour[0]!, colour[1]!, colour[2]!, 255], p * 4);
      await encoder.addFrame({ tNs: 0n, width, height, jpeg: jpeg.encode({ width, height, data: rgba }, 90).data });
    }
    assert.equal(encoder.inputFormat, "jpeg");
    await encoder.finish();
    assert.equal((await decode(encoder.path, width, height)).length, colours.length);
  });
});
