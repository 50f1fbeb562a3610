/**
 * Calibration of the simulated cameras: the published intrinsics/extrinsics a policy may use to
 * turn pixels into world coordinates (exactly what a real cell's calibration file would give it).
 *
 * top:   fixed overhead orthographic camera, 160 x 120 px, square pixels of 2.1875 mm covering
 *        x 0.05..0.40 m (columns, left to right) and y +0.13125..-0.13125 m (rows, top to bottom).
 * wrist: looks straight down from 5 cm above the fingertip point, 60 degree horizontal field of
 *        view, 160 x 120 px; the image's "up" is the fingers' closing axis (tool yaw), "right" is
 *        90 degrees clockwise of it; the scale is that of the table plane (z = 0).
 */

export interface TopCameraCalibration {
  width: number;
  height: number;
  /** World x at the left edge of column 0, metres. */
  xMinM: number;
  /** World y at the top edge of row 0, metres. */
  yMaxM: number;
  metresPerPx: number;
}

export const TOP_CAMERA: TopCameraCalibration = { width: 160, height: 120, xMinM: 0.05, yMaxM: 0.13125, metresPerPx: 0.0021875 };

/** Pixel (column, row; fractional, pixel centres at +0.5) of a world point on the top camera. */
export function topWorldToPixel(xM: number, yM: number, cal: TopCameraCalibration = TOP_CAMERA): [number, number] {
  return [(xM - cal.xMinM) / cal.metresPerPx, (cal.yMaxM - yM) / cal.metresPerPx];
}

/** World (x, y) on the table of a top-camera pixel position. */
export function topPixelToWorld(column: number, row: number, cal: TopCameraCalibration = TOP_CAMERA): [number, number] {
  return [cal.xMinM + column * cal.metresPerPx, cal.yMaxM - row * cal.metresPerPx];
}

export const WRIST_CAMERA = {
  width: 160,
  height: 120,
  /** Height of the camera above the fingertip point, metres. */
  mountAboveTipM: 0.05,
  horizontalFovRad: Math.PI / 3,
} as const;

/** Wrist-camera metres per pixel on the table plane when the fingertip is at height tipZM. */
export function wristMetresPerPx(tipZM: number): number {
  const heightM = Math.max(0.01, tipZM + WRIST_CAMERA.mountAboveTipM);
  return (2 * heightM * Math.tan(WRIST_CAMERA.horizontalFovRad / 2)) / WRIST_CAMERA.width;
}

/**
 * World (x, y) on the table of a wrist-camera pixel, given the fingertip pose the policy knows from
 * its joint readings (forward kinematics).
 */
export function wristPixelToWorld(column: number, row: number, tip: { xM: number; yM: number; zM: number; yawRad: number }): [number, number] {
  const mpp = wristMetresPerPx(tip.zM);
  const right = (column - WRIST_CAMERA.width / 2) * mpp;
  const up = (WRIST_CAMERA.height / 2 - row) * mpp;
  const c = Math.cos(tip.yawRad);
  const s = Math.sin(tip.yawRad);
  // up along (c, s); right along (s, -c).
  return [tip.xM + up * c + right * s, tip.yM + up * s - right * c];
}
