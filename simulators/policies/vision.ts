/**
 * Image processing for the reference policies: decoding camera JPEGs, red-object masks (adaptive
 * or fixed threshold), connected components, and a square's centre and yaw from its pixels.
 */
import type { CameraFrame } from "../../cell-agent/hardware/types.js";
import { decodeJpeg } from "../render/jpeg-codec.js";

export interface Image {
  width: number;
  height: number;
  rgb: Uint8Array;
}

/** Decodes the frame's JPEG (what a policy container would receive). */
export function decodeFrame(frame: CameraFrame): Image {
  return decodeJpeg(frame.jpeg);
}

/** Redness as a share of the red channel: ~0 for greys whatever the light, ~0.85 for the cube. */
function chroma(r: number, g: number, b: number): number {
  return (r - Math.max(g, b)) / (r + 8);
}

/**
 * Mask of strongly red pixels with a threshold chosen from the image itself (Otsu's method over
 * the chroma histogram), so dim, bright or tinted light moves the threshold with the colours.
 */
export function adaptiveRedMask(image: Image): Uint8Array {
  const n = image.width * image.height;
  const values = new Float32Array(n);
  const histogram = new Float64Array(64);
  for (let p = 0; p < n; p++) {
    const i = p * 3;
    const value = Math.max(0, chroma(image.rgb[i], image.rgb[i + 1], image.rgb[i + 2]));
    values[p] = value;
    histogram[Math.min(63, Math.floor(value * 64))]++;
  }
  let sumAll = 0;
  for (let k = 0; k < 64; k++) sumAll += k * histogram[k];
  let best = 0, threshold = 32, weightBelow = 0, sumBelow = 0;
  for (let k = 0; k < 63; k++) {
    weightBelow += histogram[k];
    sumBelow += k * histogram[k];
    const weightAbove = n - weightBelow;
    if (weightBelow === 0 || weightAbove === 0) continue;
    const between = weightBelow * weightAbove * (sumBelow / weightBelow - (sumAll - sumBelow) / weightAbove) ** 2;
    if (between > best) {
      best = between;
      threshold = k + 1;
    }
  }
  // Otsu splits whatever is there; never call a faint tint "red", nor miss a clear red.
  const cut = Math.min(0.6, Math.max(0.45, threshold / 64));
  const mask = new Uint8Array(n);
  for (let p = 0; p < n; p++) mask[p] = values[p] > cut ? 1 : 0;
  return mask;
}

/** Mask of pixels passing a fixed RGB rule tuned once under nominal light. */
export function fixedRedMask(image: Image): Uint8Array {
  const n = image.width * image.height;
  const mask = new Uint8Array(n);
  for (let p = 0; p < n; p++) {
    const i = p * 3;
    mask[p] = image.rgb[i] > 120 && image.rgb[i + 1] < 80 && image.rgb[i + 2] < 80 ? 1 : 0;
  }
  return mask;
}

/** 4-connected components of a mask, each as its pixel indices. */
export function components(mask: Uint8Array, width: number): number[][] {
  const seen = new Uint8Array(mask.length);
  const found: number[][] = [];
  const stack: number[] = [];
  for (let start = 0; start < mask.length; start++) {
    if (!mask[start] || seen[start]) continue;
    const pixels: number[] = [];
    stack.push(start);
    seen[start] = 1;
    while (stack.length > 0) {
      const p = stack.pop()!;
      pixels.push(p);
      const c = p % width;
      for (const q of [p - width, p + width, c > 0 ? p - 1 : -1, c < width - 1 ? p + 1 : -1]) {
        if (q >= 0 && q < mask.length && mask[q] && !seen[q]) {
          seen[q] = 1;
          stack.push(q);
        }
      }
    }
    found.push(pixels);
  }
  return found;
}

/** Bounding box (min/max column and row) of every set pixel, or null for an empty mask. */
export function maskBoundingBox(mask: Uint8Array, width: number): { c0: number; c1: number; r0: number; r1: number } | null {
  let c0 = Infinity, c1 = -Infinity, r0 = Infinity, r1 = -Infinity;
  for (let p = 0; p < mask.length; p++) {
    if (!mask[p]) continue;
    const c = p % width;
    const r = (p - c) / width;
    c0 = Math.min(c0, c); c1 = Math.max(c1, c); r0 = Math.min(r0, r); r1 = Math.max(r1, r);
  }
  return Number.isFinite(c0) ? { c0, c1, r0, r1 } : null;
}

/**
 * Centre and yaw of a square from points on it (world xy). A square's second moments are
 * isotropic, so the yaw comes from the fourth-order angular moment: r^4-weighted, the corners
 * dominate, and atan2(sum sin 4phi, sum cos 4phi) / 4 points at a corner (45 degrees off a face).
 */
export function squarePose(points: Array<[number, number]>): { xM: number; yM: number; yawRad: number } {
  let sx = 0, sy = 0;
  for (const [x, y] of points) { sx += x; sy += y; }
  const xM = sx / points.length;
  const yM = sy / points.length;
  let s4 = 0, c4 = 0;
  for (const [x, y] of points) {
    const dx = x - xM;
    const dy = y - yM;
    const r2 = dx * dx + dy * dy;
    const phi = Math.atan2(dy, dx);
    s4 += r2 * r2 * Math.sin(4 * phi);
    c4 += r2 * r2 * Math.cos(4 * phi);
  }
  const corner = Math.atan2(s4, c4) / 4;
  let yawRad = corner - Math.PI / 4;
  // Report in (-45, 45] degrees: a square's yaw is only defined mod 90.
  while (yawRad <= -Math.PI / 4) yawRad += Math.PI / 2;
  while (yawRad > Math.PI / 4) yawRad -= Math.PI / 2;
  return { xM, yM, yawRad };
}
