/**
 * Zhang's calibration of one camera from several views of a checkerboard (what cv::calibrateCamera
 * does with OpenCV's default flags): a homography per view, the closed-form start, each view's pose,
 * then Levenberg-Marquardt over the intrinsics, plumb_bob distortion and the poses. Refuses fewer than
 * `MIN_VIEWS` views, more than `MAX_VIEWS`, and a set of views whose board planes are all nearly
 * parallel (the intrinsics are then not determined), each with what to do.
 */
import { homographyDlt } from "./homography.js";
import { refineCalibration } from "./camera-refinement.js";
import { projectBoardPoints, type Intrinsics, type ViewPose } from "./pinhole-model.js";
import { rodriguesToMatrix } from "./rotation.js";
import type { Mat3 } from "./small-linalg.js";
import { centredIntrinsics, poseFromHomography, zhangIntrinsics } from "./zhang-initial-guess.js";

export const MIN_VIEWS = 5;
export const MAX_VIEWS = 50;
/** Below this largest angle between any two views' board normals the set is refused as degenerate. */
export const MIN_TILT_SPREAD_DEG = 10;

export interface CalibrationView {
  /** What the view is called in messages (a file name, "view 3"). */
  label: string;
  objectPoints: readonly (readonly [number, number])[];
  imagePoints: readonly (readonly [number, number])[];
}

export interface CameraCalibrationResult {
  width: number;
  height: number;
  intrinsics: Intrinsics;
  /** Root mean square reprojection error over every corner of every view, px (cv::calibrateCamera's return value). */
  rmsPx: number;
  perView: { label: string; rmsPx: number }[];
  poses: ViewPose[];
  /** Largest angle between two views' board normals, degrees. */
  tiltSpreadDeg: number;
  iterations: number;
}

function normalOf(pose: ViewPose): [number, number, number] {
  const r = rodriguesToMatrix(pose.rvec);
  return [r[2], r[5], r[8]];
}

function largestNormalAngleDeg(poses: readonly ViewPose[]): number {
  const normals = poses.map(normalOf);
  let largest = 0;
  for (let i = 0; i < normals.length; i++) {
    for (let j = i + 1; j < normals.length; j++) {
      const [a, b] = [normals[i]!, normals[j]!];
      const cos = Math.min(1, Math.abs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2]));
      largest = Math.max(largest, (Math.acos(cos) * 180) / Math.PI);
    }
  }
  return largest;
}

export function calibrateCamera(views: readonly CalibrationView[], width: number, height: number, options: { maxIterations?: number } = {}): CameraCalibrationResult {
  if (views.length < MIN_VIEWS) throw new Error(`a calibration needs at least ${MIN_VIEWS} views with the whole board found; got ${views.length}: take more views, the board at different tilts and places in the image`);
  if (views.length > MAX_VIEWS) throw new Error(`a calibration takes at most ${MAX_VIEWS} views; got ${views.length}: use fewer, varied views`);
  const homographies: Mat3[] = views.map((view) => homographyDlt(view.objectPoints, view.imagePoints));
  // The spread of tilts, judged with a nominal camera (about 53 degrees across): any real tilt shows.
  const nominal = { fx: Math.max(width, height), fy: Math.max(width, height), cx: width / 2, cy: height / 2 };
  const spread = largestNormalAngleDeg(homographies.map((h) => poseFromHomography(h, nominal)));
  const degenerate = `the ${views.length} views show the board in nearly parallel planes (largest angle between two of them ${spread.toFixed(1)} degrees; at least ${MIN_TILT_SPREAD_DEG} needed), so the focal length cannot be told from the distance: tilt the board more (about 20-40 degrees, towards and away from the camera, left and right) in some views`;
  if (spread < MIN_TILT_SPREAD_DEG) throw new Error(degenerate);
  const start = zhangIntrinsics(homographies, width, height) ?? centredIntrinsics(homographies, width, height);
  if (!start) throw new Error(degenerate);
  const poses = homographies.map((h) => poseFromHomography(h, start));
  const refined = refineCalibration(views, { ...start, distortion: [0, 0, 0, 0, 0] }, poses, options.maxIterations ?? 100);
  let total = 0, count = 0;
  const perView = views.map((view, v) => {
    const projected = projectBoardPoints(view.objectPoints, refined.poses[v]!, refined.intrinsics);
    let sum = 0;
    for (let i = 0; i < view.imagePoints.length; i++) {
      sum += (projected[2 * i]! - view.imagePoints[i]![0]) ** 2 + (projected[2 * i + 1]! - view.imagePoints[i]![1]) ** 2;
    }
    total += sum;
    count += view.imagePoints.length;
    return { label: view.label, rmsPx: Math.sqrt(sum / view.imagePoints.length) };
  });
  const k = refined.intrinsics;
  if (![k.fx, k.fy, k.cx, k.cy, ...k.distortion].every(Number.isFinite) || k.fx <= 0 || k.fy <= 0) throw new Error(degenerate);
  return { width, height, intrinsics: k, rmsPx: Math.sqrt(total / count), perView, poses: refined.poses, tiltSpreadDeg: spread, iterations: refined.iterations };
}
