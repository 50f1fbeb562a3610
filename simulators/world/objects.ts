/**
 * Objects on the simulated table: their shapes, colours and footprint geometry. The task object is
 * the red "cube"; distractors come from the perturbation sets (blocks, office clutter). Unknown
 * object names get a neutral grey box so a new set never crashes a cell. A customer kit
 * ("kit/<name>") brings its own shape in the reset plan (`shapeFromSpec`).
 */
import type { ObjectShapeSpec } from "../../cell-agent/hardware/types.js";

export type Rgb = [number, number, number];

export interface ObjectShape {
  /** "box": halfXM x halfYM footprint rotated by yaw; "disc": radius halfXM. */
  footprint: "box" | "disc";
  halfXM: number;
  halfYM: number;
  heightM: number;
  colour: Rgb;
  /** Mass, kilograms, when the shape brings its own (kits); otherwise the kind's table in physics/mjcf.ts. */
  massKg?: number;
}

const SHAPES: Record<string, ObjectShape> = {
  cube: { footprint: "box", halfXM: 0.015, halfYM: 0.015, heightM: 0.03, colour: [196, 32, 30] },
  "block-blue": { footprint: "box", halfXM: 0.015, halfYM: 0.015, heightM: 0.03, colour: [40, 70, 190] },
  "block-green": { footprint: "box", halfXM: 0.015, halfYM: 0.015, heightM: 0.03, colour: [45, 150, 60] },
  "block-yellow": { footprint: "box", halfXM: 0.015, halfYM: 0.015, heightM: 0.03, colour: [225, 195, 40] },
  // Red-ish clutter: a terracotta mug and the classic red stapler.
  mug: { footprint: "disc", halfXM: 0.04, halfYM: 0.04, heightM: 0.09, colour: [190, 88, 70] },
  stapler: { footprint: "box", halfXM: 0.075, halfYM: 0.02, heightM: 0.04, colour: [176, 42, 44] },
  tape: { footprint: "disc", halfXM: 0.03, halfYM: 0.03, heightM: 0.024, colour: [215, 215, 200] },
  cup: { footprint: "disc", halfXM: 0.035, halfYM: 0.035, heightM: 0.08, colour: [235, 235, 235] },
};

const UNKNOWN: ObjectShape = { footprint: "box", halfXM: 0.02, halfYM: 0.02, heightM: 0.03, colour: [110, 110, 115] };

/** The shape of an object kind (a neutral box for unknown kinds). */
export function shapeOf(kind: string): ObjectShape {
  return SHAPES[kind] ?? UNKNOWN;
}

/** A shape with every dimension multiplied by `factor` (1: the shape itself). */
export function scaledShape(shape: ObjectShape, factor: number): ObjectShape {
  if (factor === 1) return shape;
  return { ...shape, halfXM: shape.halfXM * factor, halfYM: shape.halfYM * factor, heightM: shape.heightM * factor };
}

/** The shape of an object described by the plan (a kit's box: dimensions, mass, colour). */
export function shapeFromSpec(spec: ObjectShapeSpec): ObjectShape {
  const [x, y, z] = spec.dimensionsMm;
  return {
    footprint: "box", halfXM: x / 2000, halfYM: y / 2000, heightM: z / 1000,
    colour: [...spec.colourRgb] as Rgb, massKg: spec.massG / 1000,
  };
}

/** Mocap name under which a kit object is also reported: its kind, "kit/<name>" (null for other objects). */
export function kitAliasOf(object: Pick<SimObject, "name" | "kind">): string | null {
  return object.kind.startsWith("kit/") && object.name !== object.kind ? object.kind : null;
}

/** One object in the world. Position is the centre of the object. */
export interface SimObject {
  /** Name in poses and plans: "cube", or the distractor's kind with an index ("block-blue#0"). */
  name: string;
  kind: string;
  shape: ObjectShape;
  positionM: [number, number, number];
  yawRad: number;
  /** Vertical speed while falling, m/s (0 at rest). */
  fallSpeedMS: number;
  /** Held by the gripper. */
  attached: boolean;
}

export function makeObject(name: string, kind: string, positionM: readonly number[], yawRad: number, shape: ObjectShape = shapeOf(kind)): SimObject {
  return { name, kind, shape, positionM: [positionM[0], positionM[1], positionM[2]], yawRad, fallSpeedMS: 0, attached: false };
}

/** z of the object's top face. */
export function topOf(object: SimObject): number {
  return object.positionM[2] + object.shape.heightM / 2;
}

/** z of the object's centre when it rests on the table. */
export function restZOf(object: SimObject): number {
  return object.shape.heightM / 2;
}

/** A point in the object's footprint frame (u along the object's yaw). */
export function toObjectFrame(object: SimObject, xM: number, yM: number): [number, number] {
  const dx = xM - object.positionM[0];
  const dy = yM - object.positionM[1];
  const c = Math.cos(object.yawRad);
  const s = Math.sin(object.yawRad);
  return [c * dx + s * dy, -s * dx + c * dy];
}

/** True when (x, y) lies within the footprint grown by marginM. */
export function insideFootprint(object: SimObject, xM: number, yM: number, marginM = 0): boolean {
  const [u, v] = toObjectFrame(object, xM, yM);
  if (object.shape.footprint === "disc") return Math.hypot(u, v) < object.shape.halfXM + marginM;
  return Math.abs(u) < object.shape.halfXM + marginM && Math.abs(v) < object.shape.halfYM + marginM;
}

/**
 * The smallest world-frame xy translation of the object that moves (x, y) out of its footprint
 * grown by marginM, or null when the point is outside already.
 */
export function pushOutVector(object: SimObject, xM: number, yM: number, marginM: number): [number, number] | null {
  const [u, v] = toObjectFrame(object, xM, yM);
  let du: number;
  let dv: number;
  if (object.shape.footprint === "disc") {
    const r = Math.hypot(u, v);
    const limit = object.shape.halfXM + marginM;
    if (r >= limit) return null;
    const scale = r < 1e-9 ? 1 : 1 / r;
    // The object moves away from the point: opposite to the point's offset.
    du = -(r < 1e-9 ? 1 : u) * scale * (limit - r);
    dv = -(r < 1e-9 ? 0 : v) * scale * (limit - r);
  } else {
    const pu = object.shape.halfXM + marginM - Math.abs(u);
    const pv = object.shape.halfYM + marginM - Math.abs(v);
    if (pu <= 0 || pv <= 0) return null;
    if (pu < pv) {
      du = -Math.sign(u || 1) * pu;
      dv = 0;
    } else {
      du = 0;
      dv = -Math.sign(v || 1) * pv;
    }
  }
  const c = Math.cos(object.yawRad);
  const s = Math.sin(object.yawRad);
  return [c * du - s * dv, s * du + c * dv];
}
