/**
 * Checkerboard corner candidates: the saddle test on the Hessian of the blurred image. Where four
 * squares meet, the grey surface is a saddle: det H = Ixx Iyy - Ixy² < 0 with |Ixy| large, while a
 * straight edge gives det H = 0 and a blob det H > 0. The response Ixy² - Ixx Iyy is kept where it is
 * the largest in its neighbourhood (non-maximum suppression) and above a fraction of the image's
 * strongest, then each survivor must look like an X on a ring around it: two bright and two dark
 * sectors (an outer corner of the board, an L, shows one of each and is dropped).
 */
import { gaussianBlur, sampleBilinear, type GrayImage } from "./gray-image.js";

export interface SaddlePoint {
  x: number;
  y: number;
  response: number;
}

export interface SaddleOptions {
  /** Blur before the Hessian, px (default 1.5, more for images over 720 px). */
  sigmaPx?: number;
  /** Kept when above this fraction of the strongest response (default 0.04). */
  relativeThreshold?: number;
  /** At most this many candidates, strongest first (default 2000). */
  maxCandidates?: number;
}

/** Counts the bright/dark alternations on a ring of radius `radius` around (x, y); an X-junction has 4. */
export function ringAlternations(image: GrayImage, x: number, y: number, radius: number, samples = 48): number {
  const values: number[] = [];
  for (let k = 0; k < samples; k++) {
    const angle = (2 * Math.PI * k) / samples;
    values.push(sampleBilinear(image, x + radius * Math.cos(angle), y + radius * Math.sin(angle)));
  }
  const lo = Math.min(...values), hi = Math.max(...values);
  if (hi - lo < 20) return 0;
  const mid = (hi + lo) / 2, band = 0.15 * (hi - lo);
  const classes = values.map((v) => (v > mid + band ? 1 : v < mid - band ? -1 : 0)).filter((c) => c !== 0);
  let changes = 0;
  for (let k = 0; k < classes.length; k++) if (classes[k] !== classes[(k + 1) % classes.length]) changes++;
  return changes;
}

export function findSaddlePoints(image: GrayImage, options: SaddleOptions = {}): SaddlePoint[] {
  const { width, height } = image;
  const sigma = options.sigmaPx ?? 1.5 * Math.max(1, Math.min(width, height) / 720);
  const blurred = gaussianBlur(image, sigma);
  const d = blurred.data;
  const response = new Float32Array(width * height);
  let strongest = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const ixx = d[i + 1]! - 2 * d[i]! + d[i - 1]!;
      const iyy = d[i + width]! - 2 * d[i]! + d[i - width]!;
      const ixy = (d[i + width + 1]! - d[i + width - 1]! - d[i - width + 1]! + d[i - width - 1]!) / 4;
      const r = ixy * ixy - ixx * iyy;
      if (r > 0) {
        response[i] = r;
        if (r > strongest) strongest = r;
      }
    }
  }
  if (strongest === 0) return [];
  const threshold = strongest * (options.relativeThreshold ?? 0.04);
  const nms = Math.max(3, Math.round(2 * sigma));
  const border = nms + 2;
  const found: SaddlePoint[] = [];
  for (let y = border; y < height - border; y++) {
    for (let x = border; x < width - border; x++) {
      const r = response[y * width + x]!;
      if (r < threshold) continue;
      let isMax = true;
      for (let dy = -nms; dy <= nms && isMax; dy++) {
        for (let dx = -nms; dx <= nms; dx++) {
          const other = response[(y + dy) * width + x + dx]!;
          if (other > r || (other === r && (dy < 0 || (dy === 0 && dx < 0)))) { isMax = false; break; }
        }
      }
      if (isMax) found.push({ x, y, response: r });
    }
  }
  found.sort((a, b) => b.response - a.response);
  const ringRadius = Math.max(3, 2.5 * sigma);
  return found.filter((p) => ringAlternations(blurred, p.x, p.y, ringRadius) === 4).slice(0, options.maxCandidates ?? 2000);
}
