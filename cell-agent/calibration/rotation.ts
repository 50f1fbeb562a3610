/**
 * Rotations for the calibration's per-view poses: Rodrigues vectors (OpenCV's `rvec`, the axis scaled
 * by the angle) to and from 3 x 3 matrices (row-major), and the rotation nearest a noisy matrix.
 */
import { symmetricEigen, type Mat3 } from "./small-linalg.js";

export function rodriguesToMatrix(r: readonly [number, number, number]): Mat3 {
  const theta = Math.hypot(r[0], r[1], r[2]);
  if (theta < 1e-12) return [1, -r[2], r[1], r[2], 1, -r[0], -r[1], r[0], 1];
  const [x, y, z] = [r[0] / theta, r[1] / theta, r[2] / theta];
  const c = Math.cos(theta), s = Math.sin(theta), C = 1 - c;
  return [
    c + x * x * C, x * y * C - z * s, x * z * C + y * s,
    y * x * C + z * s, c + y * y * C, y * z * C - x * s,
    z * x * C - y * s, z * y * C + x * s, c + z * z * C,
  ];
}

/** The unit quaternion [x, y, z, w] of the rotation nearest `m` (Horn's method: the Frobenius-nearest rotation). */
export function nearestRotationQuaternion(m: Mat3): [number, number, number, number] {
  const [m00, m01, m02, m10, m11, m12, m20, m21, m22] = m;
  const k = [
    [m00 - m11 - m22, m10 + m01, m20 + m02, m21 - m12],
    [m10 + m01, m11 - m00 - m22, m21 + m12, m02 - m20],
    [m20 + m02, m21 + m12, m22 - m00 - m11, m10 - m01],
    [m21 - m12, m02 - m20, m10 - m01, m00 + m11 + m22],
  ];
  const { vectors } = symmetricEigen(k);
  const q = vectors[3]!;
  const sign = q[3]! < 0 ? -1 : 1;
  return [sign * q[0]!, sign * q[1]!, sign * q[2]!, sign * q[3]!];
}

export function quaternionToRodrigues(q: readonly [number, number, number, number]): [number, number, number] {
  const [x, y, z, w] = q;
  const s = Math.hypot(x, y, z);
  if (s < 1e-12) return [2 * x, 2 * y, 2 * z];
  const angle = 2 * Math.atan2(s, w);
  return [(x / s) * angle, (y / s) * angle, (z / s) * angle];
}

/** The Rodrigues vector of the rotation nearest `m`. */
export function matrixToRodrigues(m: Mat3): [number, number, number] {
  return quaternionToRodrigues(nearestRotationQuaternion(m));
}
