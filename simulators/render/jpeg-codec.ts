/**
 * JPEG for the simulated cameras.
 *
 * - `encodeJpeg` (async, on libuv's thread pool) and `encodeJpegSync`: libjpeg-turbo through its
 *   TurboJPEG API (@julusian/jpeg-turbo, a prebuilt N-API binding): baseline, 4:2:0, standard
 *   Huffman tables. CPU per call, measured against sharp on the cameras' frames: 640x480 0.62 ms
 *   against 1.36 ms, 320x240 0.14 ms against 0.91 ms. sharp (libvips) costs about 0.45 ms a call
 *   whatever the size (pipeline set-up, option parsing, worker threads), more than the wrist
 *   frame's encoding itself. The files are 1-2% larger than sharp's (libvips builds on mozjpeg).
 * - Where that binding's binary does not load (a platform without a prebuild), `encodeJpeg` falls
 *   back to sharp and `encodeJpegSync` to jpeg-js in JavaScript (~8x slower than sharp). jpeg-js's
 *   `encode()` builds a new encoder (Huffman and colour tables) on every call, so we instantiate
 *   its `JPEGEncoder` once per quality and reuse it; if the library's file layout ever changes we
 *   fall back to the public `encode()`.
 * - `decodeJpeg`: synchronous (the reference policies' vision runs in a synchronous step), through the
 *   same binding (TurboJPEG's decompress: 0.79 ms a top frame against jpeg-js's 17.8 ms, 0.20 against
 *   4.25 ms a wrist frame; `npm run bench -- render`), falling back to jpeg-js. The two differ by about a level per channel on
 *   average (chroma upsampling and rounding); a policy's red mask and cube centroid do not move
 *   (test/unit/jpeg-decode.spec.ts).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import jpeg from "jpeg-js";
import { loadSharp } from "../../protocol/image/load-sharp.js";

/** The part of @julusian/jpeg-turbo used here. */
interface TurboJpeg {
  FORMAT_RGB: number;
  SAMP_420: number;
  bufferSize(options: { width: number; height: number; subsampling: number }): number;
  compress(raw: Buffer, out: Buffer, options: TurboOptions): Promise<Buffer>;
  compressSync(raw: Buffer, out: Buffer, options: TurboOptions): Buffer;
  decompressSync(image: Buffer, options: { format: number }): { data: Buffer; width: number; height: number };
}

interface TurboOptions {
  format: number;
  width: number;
  height: number;
  subsampling: number;
  quality: number;
}

let turbo: TurboJpeg | null | undefined;

/** The TurboJPEG binding, loaded on first use; null where its binary does not load. */
function turboJpeg(): TurboJpeg | null {
  if (turbo === undefined) {
    try {
      turbo = createRequire(import.meta.url)("@julusian/jpeg-turbo") as TurboJpeg;
    } catch {
      turbo = null;
    }
  }
  return turbo;
}

/** Bytes of scratch an encoding of a width x height frame may need (`scratch` of `encodeJpeg`). */
export function jpegScratchSize(width: number, height: number): number {
  const t = turboJpeg();
  return t ? t.bufferSize({ width, height, subsampling: t.SAMP_420 }) : 0;
}

function turboArguments(t: TurboJpeg, rgb: Uint8Array, width: number, height: number, quality: number, scratch: Uint8Array | undefined): [Buffer, Buffer, TurboOptions] {
  const options = { format: t.FORMAT_RGB, width, height, subsampling: t.SAMP_420, quality };
  const size = t.bufferSize(options);
  const out = scratch && scratch.length >= size ? Buffer.from(scratch.buffer, scratch.byteOffset, size) : Buffer.allocUnsafe(size);
  return [Buffer.from(rgb.buffer, rgb.byteOffset, rgb.byteLength), out, options];
}

/**
 * Encodes RGB24 pixels as a baseline JPEG (4:2:0; Huffman tables not optimised: faster, ~20%
 * larger). `scratch` (jpegScratchSize bytes, not used by anything else until this resolves) saves
 * allocating the encoder's worst-case output buffer; the JPEG returned is a copy of its own.
 */
export async function encodeJpeg(rgb: Uint8Array, width: number, height: number, quality = 80, scratch?: Uint8Array): Promise<Uint8Array> {
  const t = turboJpeg();
  if (t) return new Uint8Array(await t.compress(...turboArguments(t, rgb, width, height, quality, scratch)));
  const sharp = await loadSharp();
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
  const t = turboJpeg();
  if (t) return new Uint8Array(t.compressSync(...turboArguments(t, rgb, width, height, quality, undefined)));
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

/** Decodes a JPEG to RGB24: libjpeg-turbo where its binding loads, jpeg-js otherwise. */
export function decodeJpeg(bytes: Uint8Array): { width: number; height: number; rgb: Uint8Array } {
  const t = turboJpeg();
  if (t) {
    const image = t.decompressSync(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { format: t.FORMAT_RGB });
    return { width: image.width, height: image.height, rgb: new Uint8Array(image.data.buffer, image.data.byteOffset, image.width * image.height * 3) };
  }
  return decodeJpegInJavaScript(bytes);
}

/** Decodes a JPEG to RGB24 with jpeg-js (the fallback of `decodeJpeg`). */
export function decodeJpegInJavaScript(bytes: Uint8Array): { width: number; height: number; rgb: Uint8Array } {
  const image = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: false });
  return { width: image.width, height: image.height, rgb: image.data };
}
