/**
 * Sub-pixel corner refinement by gradient orthogonality (the method of OpenCV's cornerSubPix): for
 * the true corner q, every image gradient g at p near q is orthogonal to p - q (p lies on an edge
 * through q or in a flat region), so q solves Σ w g gᵀ q = Σ w g gᵀ p over a window, iterated from
 * the pixel estimate until it moves less than `epsPx`. The window must stay inside the four squares
 * that meet at q: a half-size below the distance to the neighbouring corners.
 */
import { sampleBilinear, type GrayImage } from "./gray-image.js";

export interface GradientField {
  width: number;
  height: number;
  gx: Float32Array;
  gy: Float32Array;
}

export function gradients(image: GrayImage): GradientField {
  const { width, height, data } = image;
  const gx = new Float32Array(width * height), gy = new Float32Array(width * height);
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      gx[i] = (data[i + 1]! - data[i - 1]!) / 2;
      gy[i] = (data[i + width]! - data[i - width]!) / 2;
    }
  }
  return { width, height, gx, gy };
}

/** Refines (x, y) with a window of half-size `halfWindowPx`; returns the start when the system is singular. */
export function refineCorner(field: GradientField, x: number, y: number, halfWindowPx: number, options: { maxIterations?: number; epsPx?: number } = {}): [number, number] {
  const gxImage = { width: field.width, height: field.height, data: field.gx };
  const gyImage = { width: field.width, height: field.height, data: field.gy };
  const half = Math.max(2, Math.floor(halfWindowPx));
  const sigma = half / 1.5;
  let qx = x, qy = y;
  for (let iteration = 0; iteration < (options.maxIterations ?? 40); iteration++) {
    let a = 0, b = 0, c = 0, bx = 0, by = 0;
    for (let dy = -half; dy <= half; dy++) {
      for (let dx = -half; dx <= half; dx++) {
        const px = qx + dx, py = qy + dy;
        if (px < 1 || py < 1 || px > field.width - 2 || py > field.height - 2) continue;
        const w = Math.exp(-(dx * dx + dy * dy) / (2 * sigma * sigma));
        const gx = sampleBilinear(gxImage, px, py), gy = sampleBilinear(gyImage, px, py);
        const gxx = w * gx * gx, gxy = w * gx * gy, gyy = w * gy * gy;
        a += gxx; b += gxy; c += gyy;
        bx += gxx * px + gxy * py;
        by += gxy * px + gyy * py;
      }
    }
    const det = a * c - b * b;
    if (!(Math.abs(det) > 1e-9)) return [x, y];
    const nx = (c * bx - b * by) / det, ny = (a * by - b * bx) / det;
    const moved = Math.hypot(nx - qx, ny - qy);
    qx = nx; qy = ny;
    if (Math.hypot(qx - x, qy - y) > half) return [x, y]; // ran away: keep the pixel estimate
    if (moved < (options.epsPx ?? 0.005)) break;
  }
  return [qx, qy];
}
