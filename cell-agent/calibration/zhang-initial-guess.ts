/**
 * Zhang's closed-form start ("A flexible new technique for camera calibration", 2000): from the
 * homographies of several views of a plane, the image of the absolute conic B = K⁻ᵀK⁻¹ (two linear
 * constraints per view, plus zero skew, as OpenCV assumes), the intrinsics from B, and each view's
 * pose from K⁻¹H. Distortion starts at zero; the Levenberg-Marquardt fit does the rest.
 * When the closed form fails (noise, few tilts), the principal point is put at the image centre and
 * the focal lengths are solved from the vanishing points, as OpenCV's initIntrinsicParams2D does.
 */
import type { Intrinsics, ViewPose } from "./pinhole-model.js";
import { matrixToRodrigues } from "./rotation.js";
import { mat3Inverse, mat3Mul, mat3Vec, nullVector, type Mat3 } from "./small-linalg.js";

function column(h: Mat3, i: number): [number, number, number] {
  return [h[i]!, h[3 + i]!, h[6 + i]!];
}

function vij(h: Mat3, i: number, j: number): number[] {
  const a = column(h, i), b = column(h, j);
  return [a[0] * b[0], a[0] * b[1] + a[1] * b[0], a[1] * b[1], a[2] * b[0] + a[0] * b[2], a[2] * b[1] + a[1] * b[2], a[2] * b[2]];
}

/** Zhang's closed form; undefined when B is not positive definite (too few or too similar views, or noise). */
export function zhangIntrinsics(homographies: readonly Mat3[], width: number, height: number): { fx: number; fy: number; cx: number; cy: number } | undefined {
  // Conditioning: work on pixels moved to the image centre and scaled by the image size.
  const s = Math.max(width, height);
  const n: Mat3 = [1 / s, 0, -width / 2 / s, 0, 1 / s, -height / 2 / s, 0, 0, 1];
  const rows: number[][] = [];
  for (const raw of homographies) {
    const h = mat3Mul(n, raw);
    const norm = Math.hypot(...h);
    const hn = h.map((x) => x / norm) as Mat3;
    rows.push(vij(hn, 0, 1));
    const v11 = vij(hn, 0, 0), v22 = vij(hn, 1, 1);
    rows.push(v11.map((x, k) => x - v22[k]!));
  }
  rows.push([0, 1, 0, 0, 0, 0]); // zero skew
  let b = nullVector(rows);
  if (b[0]! < 0) b = b.map((x) => -x);
  const [B11, B12, B22, B13, B23, B33] = b as [number, number, number, number, number, number];
  const den = B11 * B22 - B12 * B12;
  if (!(B11 > 0) || !(den > 0)) return undefined;
  const v0 = (B12 * B13 - B11 * B23) / den;
  const lambda = B33 - (B13 * B13 + v0 * (B12 * B13 - B11 * B23)) / B11;
  const alpha = Math.sqrt(lambda / B11);
  const beta = Math.sqrt((lambda * B11) / den);
  const u0 = -(B13 * alpha * alpha) / lambda;
  const k = { fx: alpha * s, fy: beta * s, cx: u0 * s + width / 2, cy: v0 * s + height / 2 };
  const plausible = Object.values(k).every(Number.isFinite) && k.fx > 0 && k.fy > 0 && k.cx > 0 && k.cx < width && k.cy > 0 && k.cy < height && k.fx / k.fy < 3 && k.fy / k.fx < 3;
  return plausible ? k : undefined;
}

/** OpenCV's initIntrinsicParams2D: principal point at the centre, fx and fy from the vanishing points of each view. */
export function centredIntrinsics(homographies: readonly Mat3[], width: number, height: number): { fx: number; fy: number; cx: number; cy: number } | undefined {
  const cx = (width - 1) / 2, cy = (height - 1) / 2;
  const shift: Mat3 = [1, 0, -cx, 0, 1, -cy, 0, 0, 1];
  let a00 = 0, a01 = 0, a11 = 0, r0 = 0, r1 = 0;
  const add = (p: number, q: number, rhs: number) => { a00 += p * p; a01 += p * q; a11 += q * q; r0 += p * rhs; r1 += q * rhs; };
  for (const raw of homographies) {
    const h = mat3Mul(shift, raw);
    let c0 = column(h, 0), c1 = column(h, 1);
    const d1 = c0.map((x, i) => (x + c1[i]!) / 2), d2 = c0.map((x, i) => (x - c1[i]!) / 2);
    const unit = (v: number[]) => { const m = Math.hypot(...v); return v.map((x) => x / m) as [number, number, number]; };
    c0 = unit(c0); c1 = unit(c1);
    const e1 = unit(d1), e2 = unit(d2);
    add(c0[0] * c1[0], c0[1] * c1[1], -c0[2] * c1[2]);
    add(e1[0] * e2[0], e1[1] * e2[1], -e1[2] * e2[2]);
  }
  const det = a00 * a11 - a01 * a01;
  if (Math.abs(det) < 1e-30) return undefined;
  const f0 = (a11 * r0 - a01 * r1) / det, f1 = (a00 * r1 - a01 * r0) / det;
  if (!(f0 > 0) || !(f1 > 0)) return undefined;
  return { fx: 1 / Math.sqrt(f0), fy: 1 / Math.sqrt(f1), cx, cy };
}

/** A view's pose from its homography and K: r1, r2, t from K⁻¹H scaled to unit r1, r3 = r1 x r2, nearest rotation. */
export function poseFromHomography(h: Mat3, k: Pick<Intrinsics, "fx" | "fy" | "cx" | "cy">): ViewPose {
  const kinv = mat3Inverse([k.fx, 0, k.cx, 0, k.fy, k.cy, 0, 0, 1]);
  let r1 = mat3Vec(kinv, column(h, 0)), r2 = mat3Vec(kinv, column(h, 1)), t = mat3Vec(kinv, column(h, 2));
  let lambda = 2 / (Math.hypot(...r1) + Math.hypot(...r2));
  if (t[2] * lambda < 0) lambda = -lambda; // the board is in front of the camera
  r1 = r1.map((x) => x * lambda) as typeof r1;
  r2 = r2.map((x) => x * lambda) as typeof r2;
  t = t.map((x) => x * lambda) as typeof t;
  const r3: [number, number, number] = [r1[1] * r2[2] - r1[2] * r2[1], r1[2] * r2[0] - r1[0] * r2[2], r1[0] * r2[1] - r1[1] * r2[0]];
  const m: Mat3 = [r1[0], r2[0], r3[0], r1[1], r2[1], r3[1], r1[2], r2[2], r3[2]];
  return { rvec: matrixToRodrigues(m), t };
}

