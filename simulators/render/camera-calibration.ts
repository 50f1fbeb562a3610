/**
 * Calibration of the simulated cameras: the published intrinsics/extrinsics a policy may use to
 * turn pixels into world coordinates (exactly what a real cell's calibration file would give it).
 *
 * top:   fixed overhead orthographic camera, 640 x 480 px, square pixels of 0.546875 mm covering
 *        x 0.05..0.40 m (columns, left to right) and y +0.13125..-0.13125 m (rows, top to bottom).
 * wrist: a pinhole 5 cm above the fingertip point looking straight down, 60 degree horizontal field
 *        of view, 320 x 240 px; the image's "up" is the fingers' closing axis (tool yaw), "right" is
 *        90 degrees clockwise of it. A pixel's ray meets a horizontal plane at a scale that depends
 *        on the plane's height: the table (z = 0) by default, or e.g. a cube's top face.
 */
import type { CameraCalibration } from "../../cell-agent/hardware/types.js";

export interface TopCameraCalibration {
  width: number;
  height: number;
  /** World x at the left edge of column 0, metres. */
  xMinM: number;
  /** World y at the top edge of row 0, metres. */
  yMaxM: number;
  metresPerPx: number;
}

export const TOP_CAMERA: TopCameraCalibration = { width: 640, height: 480, xMinM: 0.05, yMaxM: 0.13125, metresPerPx: 0.000546875 };

/** Pixel (column, row; fractional, pixel centres at +0.5) of a world point on the top camera. */
export function topWorldToPixel(xM: number, yM: number, cal: TopCameraCalibration = TOP_CAMERA): [number, number] {
  return [(xM - cal.xMinM) / cal.metresPerPx, (cal.yMaxM - yM) / cal.metresPerPx];
}

/** World (x, y) on the table of a top-camera pixel position. */
export function topPixelToWorld(column: number, row: number, cal: TopCameraCalibration = TOP_CAMERA): [number, number] {
  return [cal.xMinM + column * cal.metresPerPx, cal.yMaxM - row * cal.metresPerPx];
}

export const WRIST_CAMERA = {
  width: 320,
  height: 240,
  /** Height of the camera above the fingertip point, metres. */
  mountAboveTipM: 0.05,
  horizontalFovRad: Math.PI / 3,
} as const;

/** Fingertip pose as a policy knows it from its joint readings (forward kinematics). */
export interface WristTip {
  xM: number;
  yM: number;
  zM: number;
  yawRad: number;
}

/**
 * Wrist-camera metres per pixel on the horizontal plane at height planeZM (default the table,
 * z = 0) when the fingertip is at height tipZM.
 */
export function wristMetresPerPx(tipZM: number, planeZM = 0): number {
  const heightM = Math.max(0.01, tipZM + WRIST_CAMERA.mountAboveTipM - planeZM);
  return (2 * heightM * Math.tan(WRIST_CAMERA.horizontalFovRad / 2)) / WRIST_CAMERA.width;
}

/**
 * World (x, y) where a wrist-camera pixel's ray meets the horizontal plane at height planeZM
 * (default the table), given the fingertip pose.
 */
export function wristPixelToWorld(column: number, row: number, tip: WristTip, planeZM = 0): [number, number] {
  const mpp = wristMetresPerPx(tip.zM, planeZM);
  const right = (column - WRIST_CAMERA.width / 2) * mpp;
  const up = (WRIST_CAMERA.height / 2 - row) * mpp;
  const c = Math.cos(tip.yawRad);
  const s = Math.sin(tip.yawRad);
  // up along (c, s); right along (s, -c).
  return [tip.xM + up * c + right * s, tip.yM + up * s - right * c];
}

/** Pixel (column, row; fractional) of a world point below the wrist camera. */
export function wristWorldToPixel(xM: number, yM: number, zM: number, tip: WristTip): [number, number] {
  const mpp = wristMetresPerPx(tip.zM, zM);
  const dx = xM - tip.xM;
  const dy = yM - tip.yM;
  const c = Math.cos(tip.yawRad);
  const s = Math.sin(tip.yawRad);
  return [WRIST_CAMERA.width / 2 + (dx * s - dy * c) / mpp, WRIST_CAMERA.height / 2 - (dx * c + dy * s) / mpp];
}

/**
 * The calibration a cell's calibration file would give for a simulated camera (recorded in every
 * episode's start /meta). top: orthographic, looking straight down at the table's centre of view
 * from 1 m; its optical axes are world x (right), -y (down the image), -z (the view): a half turn
 * about x. wrist: a pinhole with the 60 degree horizontal field of view, no distortion, 5 cm above
 * the fingertip point in the tool frame (x along the fingers' closing axis, z up), image up along
 * tool x and image right along tool -y: a half turn about (1, -1, 0)/sqrt(2). Other (oblique)
 * cameras: none. `topMountOffsetM`: where this cell's top camera sits relative to the nominal mount.
 */
export function simCameraCalibration(name: string, topMountOffsetM: readonly [number, number] = [0, 0]): CameraCalibration | undefined {
  if (name === "top") {
    const cal = TOP_CAMERA;
    // The cell's calibration knows where its camera really is (cell-variation.ts); the catalog's TOP_CAMERA is the nominal mount.
    return {
      width: cal.width, height: cal.height, model: "orthographic", metres_per_px: cal.metresPerPx,
      extrinsics: {
        parent_frame: "world",
        translation_m: [cal.xMinM + (cal.width / 2) * cal.metresPerPx + topMountOffsetM[0], cal.yMaxM - (cal.height / 2) * cal.metresPerPx + topMountOffsetM[1], 1],
        rotation_xyzw: [1, 0, 0, 0],
      },
    };
  }
  if (name === "wrist") {
    const focalPx = WRIST_CAMERA.width / 2 / Math.tan(WRIST_CAMERA.horizontalFovRad / 2);
    return {
      width: WRIST_CAMERA.width, height: WRIST_CAMERA.height, model: "pinhole",
      fx: focalPx, fy: focalPx, cx: WRIST_CAMERA.width / 2, cy: WRIST_CAMERA.height / 2, distortion: [0, 0, 0, 0, 0],
      extrinsics: { parent_frame: "tool", translation_m: [0, 0, WRIST_CAMERA.mountAboveTipM], rotation_xyzw: [Math.SQRT1_2, -Math.SQRT1_2, 0, 0] },
    };
  }
  return undefined;
}
