/**
 * A grey image for the corner detector: luma (BT.601, 0..255) as Float32, row-major. From a JPEG
 * through jpeg-js, refusing images larger than `MAX_IMAGE_SIDE_PX` on a side before decoding more.
 */
import jpeg from "jpeg-js";

export const MAX_IMAGE_SIDE_PX = 4096;

export interface GrayImage {
  width: number;
  height: number;
  data: Float32Array;
}

/** Decodes a JPEG into grey; throws a plain reason for a file that is not a JPEG or too large. */
export function grayFromJpeg(bytes: Uint8Array): GrayImage {
  let decoded: { width: number; height: number; data: Uint8Array };
  try {
    decoded = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: false, maxResolutionInMP: (MAX_IMAGE_SIDE_PX * MAX_IMAGE_SIDE_PX) / 1e6, maxMemoryUsageInMB: 512 });
  } catch (error) {
    throw new Error(`not a JPEG this tool can read (${String((error as Error).message).slice(0, 120)})`);
  }
  const { width, height, data } = decoded;
  if (width > MAX_IMAGE_SIDE_PX || height > MAX_IMAGE_SIDE_PX) throw new Error(`the image is ${width}x${height}; at most ${MAX_IMAGE_SIDE_PX}x${MAX_IMAGE_SIDE_PX} is accepted`);
  const gray = new Float32Array(width * height);
  for (let i = 0, p = 0; i < gray.length; i++, p += 3) gray[i] = 0.299 * data[p]! + 0.587 * data[p + 1]! + 0.114 * data[p + 2]!;
  return { width, height, data: gray };
}

/** Bilinear sample at a fractional position (pixel centres at integers), clamped at the border. */
export function sampleBilinear(image: GrayImage, x: number, y: number): number {
  const cx = Math.min(Math.max(x, 0), image.width - 1.001), cy = Math.min(Math.max(y, 0), image.height - 1.001);
  const x0 = Math.floor(cx), y0 = Math.floor(cy), fx = cx - x0, fy = cy - y0;
  const i = y0 * image.width + x0;
  const d = image.data;
  return (d[i]! * (1 - fx) + d[i + 1]! * fx) * (1 - fy) + (d[i + image.width]! * (1 - fx) + d[i + image.width + 1]! * fx) * fy;
}

/** Separable Gaussian blur, kernel radius 3 sigma, border clamped. */
export function gaussianBlur(image: GrayImage, sigma: number): GrayImage {
  const radius = Math.max(1, Math.ceil(3 * sigma));
  const kernel = Array.from({ length: 2 * radius + 1 }, (_, k) => Math.exp(-((k - radius) ** 2) / (2 * sigma * sigma)));
  const total = kernel.reduce((a, b) => a + b, 0);
  for (let k = 0; k < kernel.length; k++) kernel[k]! /= total;
  const { width, height } = image;
  const tmp = new Float32Array(width * height);
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let s = 0;
      for (let k = -radius; k <= radius; k++) s += kernel[k + radius]! * image.data[y * width + Math.min(width - 1, Math.max(0, x + k))]!;
      tmp[y * width + x] = s;
    }
  }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let s = 0;
      for (let k = -radius; k <= radius; k++) s += kernel[k + radius]! * tmp[Math.min(height - 1, Math.max(0, y + k)) * width + x]!;
      out[y * width + x] = s;
    }
  }
  return { width, height, data: out };
}
