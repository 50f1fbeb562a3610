/**
 * Levenberg-Marquardt over fx, fy, cx, cy, k1, k2, p1, p2, k3 and every view's pose (Rodrigues vector
 * and translation), minimising the squared reprojection error in pixels, as cv::calibrateCamera does
 * after its start. The Jacobian is by central differences, block by block (a view's pose moves only
 * its own residuals); the normal equations are dense (9 + 6 x views unknowns, at most 309).
 */
import { projectBoardPoints, type Intrinsics, type ViewPose } from "./pinhole-model.js";
import { solveSpd } from "./small-linalg.js";

export interface RefinementView {
  /** Board points (mm, on z = 0) and the pixels they were seen at, in the same order. */
  objectPoints: readonly (readonly [number, number])[];
  imagePoints: readonly (readonly [number, number])[];
}

export interface RefinementResult {
  intrinsics: Intrinsics;
  poses: ViewPose[];
  iterations: number;
  /** Sum of squared residuals (px²) at the end. */
  cost: number;
}

const INTRINSIC_COUNT = 9;

function unpackIntrinsics(p: readonly number[]): Intrinsics {
  return { fx: p[0]!, fy: p[1]!, cx: p[2]!, cy: p[3]!, distortion: [p[4]!, p[5]!, p[6]!, p[7]!, p[8]!] };
}

function unpackPose(p: readonly number[], view: number): ViewPose {
  const o = INTRINSIC_COUNT + 6 * view;
  return { rvec: [p[o]!, p[o + 1]!, p[o + 2]!], t: [p[o + 3]!, p[o + 4]!, p[o + 5]!] };
}

function viewResiduals(p: readonly number[], views: readonly RefinementView[], v: number): number[] {
  const view = views[v]!;
  const projected = projectBoardPoints(view.objectPoints, unpackPose(p, v), unpackIntrinsics(p));
  for (let i = 0; i < view.imagePoints.length; i++) {
    projected[2 * i]! -= view.imagePoints[i]![0];
    projected[2 * i + 1]! -= view.imagePoints[i]![1];
  }
  return projected;
}

function totalCost(p: readonly number[], views: readonly RefinementView[]): number {
  let cost = 0;
  for (let v = 0; v < views.length; v++) for (const r of viewResiduals(p, views, v)) cost += r * r;
  return cost;
}

/** Refines a start (`intrinsics`, `poses`) for at most `maxIterations` (default 100) accepted or rejected steps. */
export function refineCalibration(views: readonly RefinementView[], intrinsics: Intrinsics, poses: readonly ViewPose[], maxIterations = 100): RefinementResult {
  let p = [intrinsics.fx, intrinsics.fy, intrinsics.cx, intrinsics.cy, ...intrinsics.distortion, ...poses.flatMap((pose) => [...pose.rvec, ...pose.t])];
  const n = p.length;
  let cost = totalCost(p, views);
  let mu = 1e-3;
  let iterations = 0;
  for (; iterations < maxIterations; iterations++) {
    const jtj = Array.from({ length: n }, () => new Array<number>(n).fill(0));
    const jtr = new Array<number>(n).fill(0);
    for (let v = 0; v < views.length; v++) {
      const r = viewResiduals(p, views, v);
      const columns: number[] = [...Array(INTRINSIC_COUNT).keys(), ...Array.from({ length: 6 }, (_, k) => INTRINSIC_COUNT + 6 * v + k)];
      const derivatives = columns.map((c) => {
        const h = 1e-6 * Math.max(1, Math.abs(p[c]!));
        const plus = [...p], minus = [...p];
        plus[c]! += h;
        minus[c]! -= h;
        const rp = viewResiduals(plus, views, v), rm = viewResiduals(minus, views, v);
        return rp.map((value, i) => (value - rm[i]!) / (2 * h));
      });
      for (let a = 0; a < columns.length; a++) {
        const da = derivatives[a]!;
        let g = 0;
        for (let i = 0; i < r.length; i++) g += da[i]! * r[i]!;
        jtr[columns[a]!]! += g;
        for (let b = a; b < columns.length; b++) {
          const db = derivatives[b]!;
          let s = 0;
          for (let i = 0; i < r.length; i++) s += da[i]! * db[i]!;
          jtj[columns[a]!]![columns[b]!]! += s;
          if (a !== b) jtj[columns[b]!]![columns[a]!]! += s;
        }
      }
    }
    let improved = false;
    while (!improved && mu < 1e12) {
      const damped = jtj.map((row, i) => row.map((value, j) => (i === j ? value + mu * Math.max(value, 1e-12) : value)));
      const step = solveSpd(damped, jtr.map((g) => -g));
      if (step) {
        const candidate = p.map((value, i) => value + step[i]!);
        const candidateCost = totalCost(candidate, views);
        if (candidateCost < cost) {
          const relative = (cost - candidateCost) / Math.max(cost, 1e-300);
          p = candidate;
          cost = candidateCost;
          mu = Math.max(mu / 3, 1e-12);
          improved = true;
          if (relative < 1e-12) return { intrinsics: unpackIntrinsics(p), poses: views.map((_, v) => unpackPose(p, v)), iterations: iterations + 1, cost };
          break;
        }
      }
      mu *= 4;
    }
    if (!improved) break;
  }
  return { intrinsics: unpackIntrinsics(p), poses: views.map((_, v) => unpackPose(p, v)), iterations, cost };
}
