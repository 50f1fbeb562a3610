/**
 * OpenCV's pinhole camera with plumb_bob distortion, exactly as `cv::projectPoints` computes it:
 * x = X/Z, y = Y/Z, r² = x² + y²,
 * x_d = x (1 + k1 r² + k2 r⁴ + k3 r⁶) + 2 p1 x y + p2 (r² + 2 x²),
 * y_d = y (1 + k1 r² + k2 r⁴ + k3 r⁶) + p1 (r² + 2 y²) + 2 p2 x y,
 * u = fx x_d + cx, v = fy y_d + cy (pixel centres at integer coordinates, no skew).
 */
import { rodriguesToMatrix } from "./rotation.js";

export interface Intrinsics {
  fx: number;
  fy: number;
  cx: number;
  cy: number;
  /** plumb_bob [k1, k2, p1, p2, k3]. */
  distortion: [number, number, number, number, number];
}

/** A board's pose in the camera frame: camera point = R(rvec) * board point + t (t in the board's unit, mm here). */
export interface ViewPose {
  rvec: [number, number, number];
  t: [number, number, number];
}

/** Distorts a normalised image point (x, y) = (X/Z, Y/Z). */
export function distortNormalised(x: number, y: number, d: readonly number[]): [number, number] {
  const [k1 = 0, k2 = 0, p1 = 0, p2 = 0, k3 = 0] = d;
  const r2 = x * x + y * y;
  const radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3));
  return [x * radial + 2 * p1 * x * y + p2 * (r2 + 2 * x * x), y * radial + p1 * (r2 + 2 * y * y) + 2 * p2 * x * y];
}

/** Undoes `distortNormalised` by fixed-point iteration (as cv::undistortPoints does), for moderate distortion. */
export function undistortNormalised(xd: number, yd: number, d: readonly number[], iterations = 20): [number, number] {
  const [k1 = 0, k2 = 0, p1 = 0, p2 = 0, k3 = 0] = d;
  let x = xd, y = yd;
  for (let i = 0; i < iterations; i++) {
    const r2 = x * x + y * y;
    const radial = 1 + r2 * (k1 + r2 * (k2 + r2 * k3));
    const dx = 2 * p1 * x * y + p2 * (r2 + 2 * x * x);
    const dy = p1 * (r2 + 2 * y * y) + 2 * p2 * x * y;
    x = (xd - dx) / radial;
    y = (yd - dy) / radial;
  }
  return [x, y];
}

/** Projects board points (x, y, 0) through a pose and the camera to pixels; appends u, v pairs to `out`. */
export function projectBoardPoints(points: readonly (readonly [number, number])[], pose: ViewPose, k: Intrinsics, out: number[] = []): number[] {
  const r = rodriguesToMatrix(pose.rvec);
  for (const [bx, by] of points) {
    const X = r[0] * bx + r[1] * by + pose.t[0];
    const Y = r[3] * bx + r[4] * by + pose.t[1];
    const Z = r[6] * bx + r[7] * by + pose.t[2];
    const [xd, yd] = distortNormalised(X / Z, Y / Z, k.distortion);
    out.push(k.fx * xd + k.cx, k.fy * yd + k.cy);
  }
  return out;
}
