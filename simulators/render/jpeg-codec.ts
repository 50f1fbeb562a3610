/**
 * JPEG for the simulated cameras.
 *
 * - `encodeJpeg` (async): sharp, i.e. libvips with libjpeg-turbo, about 1.2 ms for a 640x480 frame
 *   on libuv's thread pool. What a camera uses for frames it encodes ahead (sim-camera.ts).
 * - `encodeJpegSync`: jpeg-js in JavaScript, ~8x slower, for a frame whose JPEG is first asked
 *   for synchronously. jpeg-js's `encode()` builds a new encoder (Huffman and colour tables) on
 *   every call, so we instantiate its `JPEGEncoder` once per quality and reuse it; if the library's
 *   file layout ever changes we fall back to the public `encode()`.
 * - `decodeJpeg`: jpeg-js, synchronous (the reference policies' vision runs in a synchronous step).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import jpeg from "jpeg-js";
import sharp from "sharp";

/** Encodes RGB24 pixels as a baseline JPEG (4:2:0; Huffman tables not optimised: faster, ~20% larger). */
export async function encodeJpeg(rgb: Uint8Array, width: number, height: number, quality = 80): Promise<Uint8Array> {
  const bytes = await sharp(rgb, { raw: { width, height, channels: 3 } }).jpeg({ quality, optimiseCoding: false }).toBuffer();
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

interface ReusableEncoder {
  encode(image: { width: number; height: number; data: Uint8Array }, quality: number): Uint8Array;
}

type EncoderConstructor = new (quality: number) => ReusableEncoder;

let encoderClass: EncoderConstructor | null | undefined;
const encoders = new Map<number, ReusableEncoder>();

function loadEncoderClass(): EncoderConstructor | null {
  try {
    const require = createRequire(import.meta.url);
    const source = readFileSync(require.resolve("jpeg-js/lib/encoder.js"), "utf8");
    // The file defines JPEGEncoder at top level and exports only encode(); evaluate it in a
    // function scope (with a CommonJS-like `module`) and hand the class back.
    const factory = new Function("module", "Buffer", `${source}\nreturn JPEGEncoder;`) as (m: unknown, b: unknown) => unknown;
    const found = factory({ exports: {} }, Buffer);
    return typeof found === "function" ? (found as EncoderConstructor) : null;
  } catch {
    return null;
  }
}

/** Encodes RGB24 pixels as a baseline JPEG, synchronously. */
export function encodeJpegSync(rgb: Uint8Array, width: number, height: number, quality = 80): Uint8Array {
  const rgba = new Uint8Array(width * height * 4);
  for (let i = 0, j = 0; i < rgb.length; i += 3, j += 4) {
    rgba[j] = rgb[i];
    rgba[j + 1] = rgb[i + 1];
    rgba[j + 2] = rgb[i + 2];
    rgba[j + 3] = 255;
  }
  if (encoderClass === undefined) encoderClass = loadEncoderClass();
  if (encoderClass) {
    let encoder = encoders.get(quality);
    if (!encoder) {
      encoder = new encoderClass(quality);
      encoders.set(quality, encoder);
    }
    return new Uint8Array(encoder.encode({ width, height, data: rgba }, quality));
  }
  return new Uint8Array(jpeg.encode({ width, height, data: rgba }, quality).data);
}

/** Decodes a JPEG to RGB24. */
export function decodeJpeg(bytes: Uint8Array): { width: number; height: number; rgb: Uint8Array } {
  const image = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: false });
  return { width: image.width, height: image.height, rgb: image.data };
}
