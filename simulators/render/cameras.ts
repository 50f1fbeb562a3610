/**
 * The simulated cell's cameras as projections of the world: "top" (fixed overhead, orthographic),
 * "wrist" (a pinhole 5 cm above the fingertip point looking straight down, moving with the tool)
 * and any other name as a fixed oblique pinhole from across the table ("side" level, anything else
 * such as "head" tilted 35 degrees down). The top and wrist models are exactly the published
 * calibration (camera-calibration.ts); the oblique ones publish none.
 */
import type { ToolPose } from "../world/kinematics.js";
import { TOP_CAMERA, WRIST_CAMERA } from "./camera-calibration.js";
import { cross, normalize, type Vec3 } from "./solids.js";

export interface RenderedImage {
  width: number;
  height: number;
  rgb: Uint8Array;
}

/** Size of the oblique (uncalibrated) fixed cameras. */
const OBLIQUE_SIZE = { width: 640, height: 480 } as const;
const OBLIQUE_FOV_RAD = Math.PI / 3;
/** Nothing closer than this to a pinhole is drawn (faces are clipped there), metres. */
const NEAR_M = 0.004;

export interface CameraModel {
  width: number;
  height: number;
  /** True when the camera is fixed in the cell: its static scene is drawn once per lighting. */
  fixed: boolean;
  /** Near clipping distance, metres; 0 for orthographic (nothing to clip). */
  nearM: number;
  /** Camera frame of a world point, [right, down, forward] in metres, written into `out[0..2][i]` (the renderer's per-vertex path: nothing allocated). */
  toCameraInto(p: Vec3, out: readonly Float64Array[], i: number): void;
  /**
   * Column and row (fractional, pixel centres at +0.5) and nearness (larger = closer) of camera-frame point
   * (x, y, z), written into `xs[i]`, `ys[i]`, `qs[i]`.
   */
  projectInto(x: number, y: number, z: number, xs: Float64Array, ys: Float64Array, qs: Float64Array, i: number): void;
  /** True when a face through `point` with outward `normal` turns its front to the camera. */
  sees(point: Vec3, normal: Vec3): boolean;
}

/** Image size of a named camera. */
export function cameraSize(name: string): { width: number; height: number } {
  if (name === "top") return { width: TOP_CAMERA.width, height: TOP_CAMERA.height };
  if (name === "wrist") return { width: WRIST_CAMERA.width, height: WRIST_CAMERA.height };
  return { ...OBLIQUE_SIZE };
}

/**
 * The overhead camera: orthographic, looking down, image right = world +x, image down = world -y.
 * `mountOffsetM`: where this cell's camera sits relative to the nominal mount (cell-variation.ts).
 */
export function topCamera(mountOffsetM: readonly [number, number] = [0, 0]): CameraModel {
  return new OverheadCamera(mountOffsetM);
}

/**
 * The camera models are classes, not objects of closures: the wrist camera's model is made anew
 * every frame, and closures made per frame would each be garbage and lose their optimized code
 * whenever a full GC collected the last of them (V8 then compiles them again).
 */
class OverheadCamera implements CameraModel {
  readonly width = TOP_CAMERA.width;
  readonly height = TOP_CAMERA.height;
  readonly fixed = true;
  readonly nearM = 0;
  private readonly xMinM: number;
  private readonly yMaxM: number;

  constructor(mountOffsetM: readonly [number, number]) {
    this.xMinM = TOP_CAMERA.xMinM + mountOffsetM[0];
    this.yMaxM = TOP_CAMERA.yMaxM + mountOffsetM[1];
  }

  toCameraInto(p: Vec3, out: readonly Float64Array[], i: number): void {
    out[0]![i] = p[0] - this.xMinM;
    out[1]![i] = this.yMaxM - p[1];
    out[2]![i] = 1 - p[2];
  }

  projectInto(x: number, y: number, z: number, xs: Float64Array, ys: Float64Array, qs: Float64Array, i: number): void {
    xs[i] = x / TOP_CAMERA.metresPerPx;
    ys[i] = y / TOP_CAMERA.metresPerPx;
    qs[i] = -z;
  }

  sees(_point: Vec3, normal: Vec3): boolean {
    return normal[2] > 1e-9;
  }
}

/** A pinhole at `eye` with the given image axes (orthonormal, forward = right x down). */
function pinhole(eye: Vec3, right: Vec3, down: Vec3, width: number, height: number, horizontalFovRad: number, fixed: boolean): CameraModel {
  return new PinholeCamera(eye, right, down, width, height, horizontalFovRad, fixed);
}

class PinholeCamera implements CameraModel {
  readonly nearM = NEAR_M;
  private readonly forward: Vec3;
  private readonly focalPx: number;
  private readonly cx: number;
  private readonly cy: number;

  constructor(private readonly eye: Vec3, private readonly right: Vec3, private readonly down: Vec3, readonly width: number, readonly height: number, horizontalFovRad: number, readonly fixed: boolean) {
    this.forward = cross(right, down);
    this.focalPx = width / 2 / Math.tan(horizontalFovRad / 2);
    this.cx = width / 2;
    this.cy = height / 2;
  }

  toCameraInto(p: Vec3, out: readonly Float64Array[], i: number): void {
    const { eye, right, down, forward } = this;
    const d0 = p[0] - eye[0], d1 = p[1] - eye[1], d2 = p[2] - eye[2];
    out[0]![i] = d0 * right[0] + d1 * right[1] + d2 * right[2];
    out[1]![i] = d0 * down[0] + d1 * down[1] + d2 * down[2];
    out[2]![i] = d0 * forward[0] + d1 * forward[1] + d2 * forward[2];
  }

  projectInto(x: number, y: number, z: number, xs: Float64Array, ys: Float64Array, qs: Float64Array, i: number): void {
    xs[i] = this.cx + (this.focalPx * x) / z;
    ys[i] = this.cy + (this.focalPx * y) / z;
    qs[i] = 1 / z;
  }

  sees(point: Vec3, normal: Vec3): boolean {
    const { eye } = this;
    return (point[0] - eye[0]) * normal[0] + (point[1] - eye[1]) * normal[1] + (point[2] - eye[2]) * normal[2] < 0;
  }
}

/**
 * The wrist camera for a fingertip pose: 5 cm above the fingertip point, looking straight down,
 * image up along the closing axis (tool yaw), image right 90 degrees clockwise of it.
 */
export function wristCamera(tool: ToolPose): CameraModel {
  const [x, y, z] = tool.positionM;
  const c = Math.cos(tool.yawRad);
  const s = Math.sin(tool.yawRad);
  const eye: Vec3 = [x, y, z + WRIST_CAMERA.mountAboveTipM];
  return pinhole(eye, [s, -c, 0], [-c, -s, 0], WRIST_CAMERA.width, WRIST_CAMERA.height, WRIST_CAMERA.horizontalFovRad, false);
}

/** A fixed oblique camera across the table from the robot, looking back at it. */
export function obliqueCamera(name: string): CameraModel {
  const elevationRad = name === "side" ? (8 * Math.PI) / 180 : (35 * Math.PI) / 180;
  const target: Vec3 = [0.16, 0, 0.1];
  const distanceM = 0.72;
  const eye: Vec3 = [target[0] + distanceM * Math.cos(elevationRad), target[1], target[2] + distanceM * Math.sin(elevationRad)];
  const forward = normalize([target[0] - eye[0], target[1] - eye[1], target[2] - eye[2]]);
  const right = normalize(cross(forward, [0, 0, 1]));
  const down = cross(forward, right);
  return pinhole(eye, right, down, OBLIQUE_SIZE.width, OBLIQUE_SIZE.height, OBLIQUE_FOV_RAD, true);
}

/** The model of a named camera (the wrist's follows the tool, so it is built per frame); `topMountOffsetM` moves the top camera. */
export function cameraModel(name: string, tool: ToolPose, topMountOffsetM?: readonly [number, number]): CameraModel {
  if (name === "top") return topCamera(topMountOffsetM);
  if (name === "wrist") return wristCamera(tool);
  return obliqueCamera(name);
}
