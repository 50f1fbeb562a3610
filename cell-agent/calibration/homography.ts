/**
 * The plane-to-image homography of one view by the normalised DLT (Hartley and Zisserman, algorithm
 * 4.2): both point sets are moved to their centroid and scaled to a mean distance of √2, H is the
 * null vector of the 2N x 9 system, and the normalisation is undone. Row-major, H[8] scaled to 1.
 */
import { mat3Inverse, mat3Mul, nullVector, type Mat3 } from "./small-linalg.js";

function normalisation(points: readonly (readonly [number, number])[]): Mat3 {
  let mx = 0, my = 0;
  for (const [x, y] of points) { mx += x; my += y; }
  mx /= points.length; my /= points.length;
  let mean = 0;
  for (const [x, y] of points) mean += Math.hypot(x - mx, y - my);
  mean /= points.length;
  const s = mean > 0 ? Math.SQRT2 / mean : 1;
  return [s, 0, -s * mx, 0, s, -s * my, 0, 0, 1];
}

function apply(t: Mat3, [x, y]: readonly [number, number]): [number, number] {
  return [t[0] * x + t[1] * y + t[2], t[3] * x + t[4] * y + t[5]];
}

/** H with image ~ H * [bx, by, 1] for board points `from` and their pixels `to` (at least 4 pairs, not collinear). */
export function homographyDlt(from: readonly (readonly [number, number])[], to: readonly (readonly [number, number])[]): Mat3 {
  if (from.length !== to.length || from.length < 4) throw new Error(`a homography needs at least 4 point pairs; got ${from.length}`);
  const tf = normalisation(from);
  const tt = normalisation(to);
  const rows: number[][] = [];
  for (let i = 0; i < from.length; i++) {
    const [x, y] = apply(tf, from[i]!);
    const [u, v] = apply(tt, to[i]!);
    rows.push([-x, -y, -1, 0, 0, 0, u * x, u * y, u]);
    rows.push([0, 0, 0, -x, -y, -1, v * x, v * y, v]);
  }
  const hn = nullVector(rows) as Mat3;
  const h = mat3Mul(mat3Mul(mat3Inverse(tt), hn), tf);
  const scale = h[8];
  return h.map((value) => value / scale) as Mat3;
}
