/**
 * Software rasterizer for the simulated cameras. Planar views (top, wrist) map each pixel to a
 * point of the table plane through an affine map and paint object footprints in height order;
 * oblique views (side, head) paint objects and the arm as flat shapes, far to near. Both apply the
 * lighting preset and a little seeded pixel noise, and return RGB24.
 */
import { chainPoints, type ToolPose } from "../world/kinematics.js";
import { insideFootprint, makeObject, type Rgb, type SimObject } from "../world/objects.js";
import { lightingPreset } from "./lighting.js";

const TABLE_RGB: Rgb = [142, 142, 138];
const GRIPPER_RGB: Rgb = [48, 48, 54];
const FLOOR_RGB: Rgb = [70, 66, 60];
const WALL_RGB: Rgb = [185, 190, 195];

/** What a camera saw at capture time; rendering may happen later (frames render lazily). */
export interface RenderScene {
  objects: SimObject[];
  tool: ToolPose;
  opening: number;
  /** Arm vector [yaw, shoulder, elbow, wristPitch, wristRoll], for oblique views. */
  arm: number[];
  lighting: string;
  /** Seeds this frame's pixel noise. */
  noiseSeed: number;
}

/** A pixel grid laid on the table plane: pixel centre (c+0.5, r+0.5) -> origin + c*col + r*row. */
export interface PlanarView {
  width: number;
  height: number;
  originM: [number, number];
  colStepM: [number, number];
  rowStepM: [number, number];
}

/** Shapes drawn over the scene (the gripper), as world-frame footprints, topmost last. */
export type Overlay = SimObject;

/** A dark gripper part as an object-like footprint for the rasterizer. */
export function gripperPart(xM: number, yM: number, yawRad: number, halfLengthM: number, halfWidthM: number): Overlay {
  const part = makeObject("gripper", "gripper", [xM, yM, 0], yawRad);
  part.shape = { footprint: "box", halfXM: halfLengthM, halfYM: halfWidthM, heightM: 0, colour: GRIPPER_RGB };
  return part;
}

function paint(colour: Float32Array, view: PlanarView, object: SimObject, tint: number): void {
  const [ox, oy] = view.originM;
  const [ax, ay] = view.colStepM;
  const [bx, by] = view.rowStepM;
  const det = ax * by - ay * bx;
  const radius = Math.hypot(object.shape.halfXM, object.shape.halfYM);
  let cMin = Infinity, cMax = -Infinity, rMin = Infinity, rMax = -Infinity;
  for (const [dx, dy] of [[-radius, -radius], [radius, -radius], [-radius, radius], [radius, radius]]) {
    const px = object.positionM[0] + dx - ox;
    const py = object.positionM[1] + dy - oy;
    const c = (px * by - py * bx) / det;
    const r = (ax * py - ay * px) / det;
    cMin = Math.min(cMin, c); cMax = Math.max(cMax, c); rMin = Math.min(rMin, r); rMax = Math.max(rMax, r);
  }
  const c0 = Math.max(0, Math.floor(cMin)), c1 = Math.min(view.width - 1, Math.ceil(cMax));
  const r0 = Math.max(0, Math.floor(rMin)), r1 = Math.min(view.height - 1, Math.ceil(rMax));
  const [red, green, blue] = object.shape.colour;
  for (let r = r0; r <= r1; r++) {
    for (let c = c0; c <= c1; c++) {
      const x = ox + (c + 0.5) * ax + (r + 0.5) * bx;
      const y = oy + (c + 0.5) * ay + (r + 0.5) * by;
      if (!insideFootprint(object, x, y)) continue;
      const i = (r * view.width + c) * 3;
      colour[i] = red * tint;
      colour[i + 1] = green * tint;
      colour[i + 2] = blue * tint;
    }
  }
}

/** Applies lighting (gain, falloff along world x) and seeded noise; returns RGB24. */
function expose(scene: RenderScene, colour: Float32Array, worldX: (pixel: number) => number): Uint8Array {
  const light = lightingPreset(scene.lighting);
  const out = new Uint8Array(colour.length);
  // A cheap LCG per pixel from the frame's seed.
  let state = scene.noiseSeed >>> 0;
  for (let p = 0, i = 0; i < colour.length; p++, i += 3) {
    const falloff = 1 + light.falloffPerM * (worldX(p) - 0.225);
    for (let k = 0; k < 3; k++) {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      const noise = ((state >>> 24) / 255 - 0.5) * 7;
      const value = colour[i + k] * light.gain[k] * falloff + noise;
      out[i + k] = value < 0 ? 0 : value > 255 ? 255 : value;
    }
  }
  return out;
}

/** Renders a planar view of the table with its objects and the given overlays. */
export function renderPlanar(scene: RenderScene, view: PlanarView, overlays: Overlay[]): Uint8Array {
  const colour = new Float32Array(view.width * view.height * 3);
  for (let i = 0; i < colour.length; i += 3) colour.set(TABLE_RGB, i);
  const objects = [...scene.objects].sort((a, b) => a.positionM[2] + a.shape.heightM / 2 - (b.positionM[2] + b.shape.heightM / 2));
  for (const object of objects) paint(colour, view, object, 1);
  for (const overlay of overlays) paint(colour, view, overlay, 1);
  const [ox] = view.originM;
  return expose(scene, colour, (p) => {
    const c = p % view.width;
    const r = Math.floor(p / view.width);
    return ox + (c + 0.5) * view.colStepM[0] + (r + 0.5) * view.rowStepM[0];
  });
}

/**
 * Oblique view from +x looking back at the robot, tilted down by elevationRad (0: side view).
 * Columns span y +0.2..-0.2 m; rows span "screen height" h = z cos(e) + (x - 0.2) sin(e).
 */
export function renderOblique(scene: RenderScene, width: number, height: number, elevationRad: number): Uint8Array {
  const colour = new Float32Array(width * height * 3);
  const cosE = Math.cos(elevationRad);
  const sinE = Math.sin(elevationRad);
  const screen = (x: number, y: number, z: number): [number, number] => [
    ((0.2 - y) / 0.4) * width,
    ((0.35 - (z * cosE + (x - 0.2) * sinE)) / 0.5) * height,
  ];
  const tableEdge = screen(0.4, 0, 0)[1];
  const tableFar = screen(0, 0, 0)[1];
  for (let r = 0; r < height; r++) {
    const rgb = r > tableEdge ? FLOOR_RGB : r >= tableFar - 1 ? TABLE_RGB : WALL_RGB;
    for (let c = 0; c < width; c++) colour.set(rgb, (r * width + c) * 3);
  }
  const fill = (c0: number, c1: number, r0: number, r1: number, rgb: Rgb) => {
    for (let r = Math.max(0, Math.floor(r0)); r <= Math.min(height - 1, Math.ceil(r1)); r++) {
      for (let c = Math.max(0, Math.floor(c0)); c <= Math.min(width - 1, Math.ceil(c1)); c++) colour.set(rgb, (r * width + c) * 3);
    }
  };
  const shapes: Array<{ depth: number; draw: () => void }> = scene.objects.map((o) => ({
    depth: o.positionM[0],
    draw: () => {
      const radius = Math.max(o.shape.halfXM, o.shape.halfYM);
      const [cl, rt] = screen(o.positionM[0], o.positionM[1] + radius, o.positionM[2] + o.shape.heightM / 2);
      const [cr, rb] = screen(o.positionM[0], o.positionM[1] - radius, o.positionM[2] - o.shape.heightM / 2);
      fill(cl, cr, rt, rb, o.shape.colour);
    },
  }));
  const points = chainPoints(scene.arm);
  for (let k = 1; k < points.length; k++) {
    const [a, b] = [points[k - 1], points[k]];
    shapes.push({
      depth: (a[0] + b[0]) / 2,
      draw: () => {
        for (let t = 0; t <= 1; t += 0.02) {
          const [c, r] = screen(a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t);
          fill(c - 2, c + 2, r - 2, r + 2, GRIPPER_RGB);
        }
      },
    });
  }
  shapes.sort((a, b) => a.depth - b.depth).forEach((s) => s.draw());
  return expose(scene, colour, () => 0.225);
}
