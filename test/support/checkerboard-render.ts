/**
 * Synthetic checkerboard views for the calibration tests: a known pinhole camera with OpenCV's
 * plumb_bob distortion looks at a board of (cols + 1) x (rows + 1) squares (cols x rows inner corners,
 * corner (i, j) at (i, j) x square on the board's z = 0 plane) with a white margin, on a grey
 * background. Each pixel's samples (n x n, anti-aliasing) are undistorted into rays and met with the
 * board plane; seeded Gaussian noise is added. Written from the camera model, independent of the
 * detector under test.
 */
import { distortNormalised, undistortNormalised, type Intrinsics, type ViewPose } from "../../cell-agent/calibration/pinhole-model.js";
import { rodriguesToMatrix } from "../../cell-agent/calibration/rotation.js";

export interface Board {
  cols: number;
  rows: number;
  squareMm: number;
}

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** Where the inner corners land, in the detector's order (row by row, `cols` per row), px. */
export function trueCorners(board: Board, pose: ViewPose, k: Intrinsics): [number, number][] {
  const r = rodriguesToMatrix(pose.rvec);
  const out: [number, number][] = [];
  for (let j = 0; j < board.rows; j++) {
    for (let i = 0; i < board.cols; i++) {
      const bx = i * board.squareMm, by = j * board.squareMm;
      const X = r[0] * bx + r[1] * by + pose.t[0], Y = r[3] * bx + r[4] * by + pose.t[1], Z = r[6] * bx + r[7] * by + pose.t[2];
      const [xd, yd] = distortNormalised(X / Z, Y / Z, k.distortion);
      out.push([k.fx * xd + k.cx, k.fy * yd + k.cy]);
    }
  }
  return out;
}

const rayMaps = new Map<string, Float32Array>();

/** The undistorted normalised ray (x, y) of every sub-pixel sample, computed once per camera and size. */
function rayMap(k: Intrinsics, width: number, height: number, n: number): Float32Array {
  const key = JSON.stringify([k, width, height, n]);
  const cached = rayMaps.get(key);
  if (cached) return cached;
  const sw = width * n, sh = height * n;
  const map = new Float32Array(sw * sh * 2);
  for (let sv = 0; sv < sh; sv++) {
    for (let su = 0; su < sw; su++) {
      const u = -0.5 + (su + 0.5) / n, v = -0.5 + (sv + 0.5) / n;
      const [x, y] = undistortNormalised((u - k.cx) / k.fx, (v - k.cy) / k.fy, k.distortion, 12);
      map[2 * (sv * sw + su)] = x;
      map[2 * (sv * sw + su) + 1] = y;
    }
  }
  rayMaps.set(key, map);
  return map;
}

/** Renders one grey view (values 0..255, row-major). */
export function renderBoard(board: Board, pose: ViewPose, k: Intrinsics, width: number, height: number, options: { samples?: number; noise?: number; seed?: number } = {}): Float32Array {
  const n = options.samples ?? 4;
  const noise = options.noise ?? 0;
  const random = mulberry32(options.seed ?? 1);
  const pinhole = k.distortion.every((d) => d === 0);
  const rays = pinhole ? undefined : rayMap(k, width, height, n);
  const sw = width * n;
  const r = rodriguesToMatrix(pose.rvec);
  const normal = [r[2], r[5], r[8]];
  const nt = normal[0]! * pose.t[0] + normal[1]! * pose.t[1] + normal[2]! * pose.t[2];
  const s = board.squareMm;
  const margin = s * 0.8;
  const image = new Float32Array(width * height);
  for (let v = 0; v < height; v++) {
    for (let u = 0; u < width; u++) {
      let sum = 0;
      for (let b = 0; b < n; b++) {
        for (let a = 0; a < n; a++) {
          const m = 2 * ((v * n + b) * sw + u * n + a);
          const x = rays ? rays[m]! : (u - 0.5 + (a + 0.5) / n - k.cx) / k.fx, y = rays ? rays[m + 1]! : (v - 0.5 + (b + 0.5) / n - k.cy) / k.fy;
          const nd = normal[0]! * x + normal[1]! * y + normal[2]!;
          const lambda = nt / nd;
          let value = 90;
          if (lambda > 0) {
            const px = lambda * x - pose.t[0], py = lambda * y - pose.t[1], pz = lambda - pose.t[2];
            const bx = r[0] * px + r[3] * py + r[6] * pz, by = r[1] * px + r[4] * py + r[7] * pz;
            const inBoard = bx >= -s && bx < board.cols * s && by >= -s && by < board.rows * s;
            const inMargin = bx >= -s - margin && bx < board.cols * s + margin && by >= -s - margin && by < board.rows * s + margin;
            if (inBoard) value = (Math.floor(bx / s) + Math.floor(by / s)) % 2 === 0 ? 25 : 225;
            else if (inMargin) value = 225;
          }
          sum += value;
        }
      }
      image[v * width + u] = sum / (n * n) + (noise ? noise * gaussian(random) : 0);
    }
  }
  return image;
}

/** `count` board poses, seeded, each with the whole board (and its margin) inside the image and tilted up to `maxTiltDeg`. */
export function boardPoses(board: Board, k: Intrinsics, width: number, height: number, count: number, seed = 7, maxTiltDeg = 40): ViewPose[] {
  const random = mulberry32(seed);
  const poses: ViewPose[] = [];
  const bw = (board.cols - 1) * board.squareMm, bh = (board.rows - 1) * board.squareMm;
  const inset = 1.9 * board.squareMm;
  for (let attempt = 0; poses.length < count && attempt < 10_000; attempt++) {
    const tilt = (maxTiltDeg * Math.PI) / 180;
    const ax = (random() * 2 - 1) * tilt, ay = (random() * 2 - 1) * tilt, az = (random() * 2 - 1) * 0.35;
    const distance = (bw * k.fx) / width * (1.3 + random() * 0.9);
    // Rotation: about z, then y, then x; the board's centre placed `distance` ahead with a random offset.
    const rz = rodriguesToMatrix([0, 0, az]), ry = rodriguesToMatrix([0, ay, 0]), rx = rodriguesToMatrix([ax, 0, 0]);
    const mul = (p: number[], q: number[]) => Array.from({ length: 9 }, (_, i) => p[Math.floor(i / 3) * 3]! * q[i % 3]! + p[Math.floor(i / 3) * 3 + 1]! * q[3 + (i % 3)]! + p[Math.floor(i / 3) * 3 + 2]! * q[6 + (i % 3)]!);
    const rm = mul(mul(rx, ry), rz);
    const centre = [(random() * 2 - 1) * distance * 0.15, (random() * 2 - 1) * distance * 0.12, distance];
    const t: [number, number, number] = [0, 1, 2].map((i) => centre[i]! - (rm[i * 3]! * bw) / 2 - (rm[i * 3 + 1]! * bh) / 2) as [number, number, number];
    const q = rmToRodrigues(rm);
    const pose: ViewPose = { rvec: q, t };
    const extremes: [number, number][] = [];
    for (const bx of [-inset, bw + inset]) for (const by of [-inset, bh + inset]) {
      const X = rm[0]! * bx + rm[1]! * by + t[0], Y = rm[3]! * bx + rm[4]! * by + t[1], Z = rm[6]! * bx + rm[7]! * by + t[2];
      const [xd, yd] = distortNormalised(X / Z, Y / Z, k.distortion);
      extremes.push([k.fx * xd + k.cx, k.fy * yd + k.cy]);
    }
    if (extremes.every(([u, v]) => u > 4 && u < width - 5 && v > 4 && v < height - 5)) poses.push(pose);
  }
  return poses;
}

function rmToRodrigues(m: number[]): [number, number, number] {
  const angle = Math.acos(Math.max(-1, Math.min(1, (m[0]! + m[4]! + m[8]! - 1) / 2)));
  if (angle < 1e-9) return [0, 0, 0];
  const f = angle / (2 * Math.sin(angle));
  return [(m[7]! - m[5]!) * f, (m[2]! - m[6]!) * f, (m[3]! - m[1]!) * f];
}
