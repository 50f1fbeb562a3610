/**
 * RGB24 pixels to the planar yuv420p an episode video's encoder takes as it is (no swscale in ffmpeg):
 * BT.601 limited range, ffmpeg's own matrix for yuv420p, each chroma sample from the rounded mean of
 * its 2 x 2 pixels. Integer arithmetic (8-bit fixed-point coefficients), as swscale's and libyuv's C
 * paths do.
 *
 * Where the conversion runs, measured per 640 x 480 frame on the 2-core CI machine under load: in
 * ffmpeg (its generic scaler's RGB24 path) ~1.3 ms, about what decoding the camera's JPEG costs it;
 * this file's JavaScript loop ~0.9-1.3 ms, no better; the WebAssembly SIMD kernel
 * (rgb-to-yuv420p-simd.ts, widths a multiple of 16: every simulated camera's) ~0.1 ms, which is what
 * makes raw frames pay. `Yuv420pConverter` uses the kernel where it fits and this loop otherwise.
 */
import { SimdYuv420p, simdFits } from "./rgb-to-yuv420p-simd.js";

/** Bytes of a yuv420p frame of `width` x `height` (both even). */
export function yuv420pSize(width: number, height: number): number {
  return width * height + 2 * (width / 2) * (height / 2);
}

/** Whether `rgbToYuv420p` takes a frame of this size: even dimensions (4:2:0 chroma covers 2 x 2 pixels). */
export function yuv420pFits(width: number, height: number): boolean {
  return width > 0 && height > 0 && width % 2 === 0 && height % 2 === 0;
}

const luma = (r: number, g: number, b: number) => (66 * r + 129 * g + 25 * b + 4224) >> 8; // 16 + (...+128)/256
/** Cb and Cr of a 2 x 2 block from its channel sums (4 pixels each), through the rounded means. */
const cb = (r: number, g: number, b: number) => (-38 * ((r + 2) >> 2) - 74 * ((g + 2) >> 2) + 112 * ((b + 2) >> 2) + 32896) >> 8; // 128 + (...+128)/256
const cr = (r: number, g: number, b: number) => (112 * ((r + 2) >> 2) - 94 * ((g + 2) >> 2) - 18 * ((b + 2) >> 2) + 32896) >> 8;

/**
 * One frame size's conversion: the SIMD kernel where it fits, else the JavaScript loop. `buffers`
 * (default 1): yuv420p frames it lends through `buffer(i)`; with the kernel they are views on its
 * memory, and `convert` into one of them writes there directly instead of converting into the
 * kernel's memory and copying out (a 640 x 480 frame is 460 KiB).
 */
export class Yuv420pConverter {
  private readonly simd: SimdYuv420p | undefined;
  private readonly buffers: Uint8Array[];

  constructor(readonly width: number, readonly height: number, options: { simd?: boolean; buffers?: number } = {}) {
    if (!yuv420pFits(width, height)) throw new RangeError(`yuv420p needs even dimensions; got ${width}x${height}`);
    const count = options.buffers ?? 1;
    this.simd = options.simd !== false && simdFits(width, height) ? new SimdYuv420p(width, height, count) : undefined;
    this.buffers = this.simd ? [...this.simd.outs] : Array.from({ length: count }, () => new Uint8Array(yuv420pSize(width, height)));
  }

  /** Whether the SIMD kernel does the work. */
  get usesSimd(): boolean {
    return this.simd !== undefined;
  }

  /**
   * Lent frame buffer `index` (0 <= index < `buffers`), `yuv420pSize` bytes: the same buffer every call.
   * NOTE: a conversion into it overwrites it; the caller converts into a buffer only once whoever it
   * was handed to (a pipe write) is done with it.
   */
  buffer(index: number): Uint8Array {
    const buffer = this.buffers[index];
    if (!buffer) throw new RangeError(`this converter lends ${this.buffers.length} buffer(s); got index ${index}`);
    return buffer;
  }

  /** Converts `rgb` (`width * height * 3` bytes) into `out` (`yuv420pSize` bytes): one of `buffer(i)` or any other. */
  convert(rgb: Uint8Array, out: Uint8Array): void {
    if (!this.simd) return rgbToYuv420p(rgb, this.width, this.height, out);
    if (rgb.byteLength !== this.simd.rgb.byteLength || out.byteLength < this.simd.out.byteLength) {
      throw new RangeError(`a ${this.width}x${this.height} frame is ${this.simd.rgb.byteLength} RGB bytes into ${this.simd.out.byteLength}; got ${rgb.byteLength} into ${out.byteLength}`);
    }
    this.simd.rgb.set(rgb);
    const { outs } = this.simd;
    for (let i = 0; i < outs.length; i++) if (outs[i]!.buffer === out.buffer && outs[i]!.byteOffset === out.byteOffset) return this.simd.convert(i);
    this.simd.convert();
    out.set(this.simd.out);
  }
}

/**
 * Converts `rgb` (`width * height * 3` bytes, rows packed) into `out` (`yuv420pSize` bytes: the Y
 * plane, then Cb, then Cr). Both dimensions must be even (`yuv420pFits`).
 */
export function rgbToYuv420p(rgb: Uint8Array, width: number, height: number, out: Uint8Array): void {
  if (!yuv420pFits(width, height)) throw new RangeError(`yuv420p needs even dimensions; got ${width}x${height}`);
  if (rgb.byteLength < width * height * 3 || out.byteLength < yuv420pSize(width, height)) {
    throw new RangeError(`rgbToYuv420p: ${rgb.byteLength} RGB bytes or ${out.byteLength} output bytes too few for ${width}x${height}`);
  }
  if (width % 4 === 0 && rgb.byteOffset % 4 === 0 && out.byteOffset % 4 === 0) wordwise(rgb, width, height, out);
  else bytewise(rgb, width, height, out);
}

/** Any even size: 2 x 2 blocks, byte by byte. */
function bytewise(rgb: Uint8Array, width: number, height: number, out: Uint8Array): void {
  const ySize = width * height;
  const uOff = ySize;
  const vOff = ySize + ySize / 4;
  const stride = width * 3;
  for (let y = 0; y < height; y += 2) {
    let p = y * stride;
    let q = p + stride;
    let yo = y * width;
    let co = (y / 2) * (width / 2);
    for (let x = 0; x < width; x += 2) {
      const r0 = rgb[p]!, g0 = rgb[p + 1]!, b0 = rgb[p + 2]!, r1 = rgb[p + 3]!, g1 = rgb[p + 4]!, b1 = rgb[p + 5]!;
      const r2 = rgb[q]!, g2 = rgb[q + 1]!, b2 = rgb[q + 2]!, r3 = rgb[q + 3]!, g3 = rgb[q + 4]!, b3 = rgb[q + 5]!;
      out[yo] = luma(r0, g0, b0);
      out[yo + 1] = luma(r1, g1, b1);
      out[yo + width] = luma(r2, g2, b2);
      out[yo + width + 1] = luma(r3, g3, b3);
      const r = r0 + r1 + r2 + r3, g = g0 + g1 + g2 + g3, b = b0 + b1 + b2 + b3;
      out[uOff + co] = cb(r, g, b);
      out[vOff + co] = cr(r, g, b);
      p += 6;
      q += 6;
      yo += 2;
      co++;
    }
  }
}

/**
 * Width a multiple of 4, buffers word-aligned: 4 pixels of a row are 3 little-endian words
 * (r0 g0 b0 r1 | g1 b1 r2 g2 | b2 r3 g3 b3), their 4 Y bytes one word. Same results as `bytewise`.
 */
function wordwise(rgb: Uint8Array, width: number, height: number, out: Uint8Array): void {
  const src = new Uint32Array(rgb.buffer, rgb.byteOffset, (width * height * 3) >> 2);
  const yWords = new Uint32Array(out.buffer, out.byteOffset, (width * height) >> 2);
  const ySize = width * height;
  const uOff = ySize;
  const vOff = ySize + ySize / 4;
  const rowWords = (width * 3) >> 2;
  const yRowWords = width >> 2;
  for (let y = 0; y < height; y += 2) {
    let p = y * rowWords;
    let q = p + rowWords;
    let yo = y * yRowWords;
    let co = (y / 2) * (width / 2);
    const end = p + rowWords;
    while (p < end) {
      let a = src[p]!, b = src[p + 1]!, d = src[p + 2]!;
      const r0 = a & 255, g0 = (a >> 8) & 255, b0 = (a >> 16) & 255, r1 = a >>> 24;
      const g1 = b & 255, b1 = (b >> 8) & 255, r2 = (b >> 16) & 255, g2 = b >>> 24;
      const b2 = d & 255, r3 = (d >> 8) & 255, g3 = (d >> 16) & 255, b3 = d >>> 24;
      yWords[yo] = luma(r0, g0, b0) | (luma(r1, g1, b1) << 8) | (luma(r2, g2, b2) << 16) | (luma(r3, g3, b3) << 24);
      a = src[q]!;
      b = src[q + 1]!;
      d = src[q + 2]!;
      const s0 = a & 255, t0 = (a >> 8) & 255, u0 = (a >> 16) & 255, s1 = a >>> 24;
      const t1 = b & 255, u1 = (b >> 8) & 255, s2 = (b >> 16) & 255, t2 = b >>> 24;
      const u2 = d & 255, s3 = (d >> 8) & 255, t3 = (d >> 16) & 255, u3 = d >>> 24;
      yWords[yo + yRowWords] = luma(s0, t0, u0) | (luma(s1, t1, u1) << 8) | (luma(s2, t2, u2) << 16) | (luma(s3, t3, u3) << 24);
      let r = r0 + r1 + s0 + s1, g = g0 + g1 + t0 + t1, bl = b0 + b1 + u0 + u1;
      out[uOff + co] = cb(r, g, bl);
      out[vOff + co] = cr(r, g, bl);
      r = r2 + r3 + s2 + s3;
      g = g2 + g3 + t2 + t3;
      bl = b2 + b3 + u2 + u3;
      out[uOff + co + 1] = cb(r, g, bl);
      out[vOff + co + 1] = cr(r, g, bl);
      p += 3;
      q += 3;
      yo++;
      co += 2;
    }
  }
}
