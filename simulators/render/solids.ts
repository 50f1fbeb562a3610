/**
 * The renderer's geometry: flat convex faces in world coordinates (metres, z up), and the solids
 * the simulated cell is built from (oriented boxes and n-sided prisms), as faces with outward
 * normals so that a camera can cull the ones turned away from it.
 */
import type { Rgb } from "../world/objects.js";

export type Vec3 = [number, number, number];

/** A flat convex polygon, vertices in order around it, with its outward unit normal. */
export interface Face {
  points: Vec3[];
  normal: Vec3;
  colour: Rgb;
}

export function add(a: Vec3, b: Vec3): Vec3 {
  return [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
}

export function sub(a: Vec3, b: Vec3): Vec3 {
  return [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
}

export function scale(a: Vec3, k: number): Vec3 {
  return [a[0] * k, a[1] * k, a[2] * k];
}

export function dot(a: Vec3, b: Vec3): number {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

export function cross(a: Vec3, b: Vec3): Vec3 {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}

export function normalize(a: Vec3): Vec3 {
  const n = Math.hypot(a[0], a[1], a[2]) || 1;
  return [a[0] / n, a[1] / n, a[2] / n];
}

/** centre + a*x + b*y + c*z. */
function at(centre: Vec3, a: Vec3, x: number, b: Vec3, y: number, c: Vec3, z: number): Vec3 {
  return [
    centre[0] + a[0] * x + b[0] * y + c[0] * z,
    centre[1] + a[1] * x + b[1] * y + c[1] * z,
    centre[2] + a[2] * x + b[2] * y + c[2] * z,
  ];
}

/**
 * A box: centre, three orthonormal axes (right-handed: axes[2] = axes[0] x axes[1]) and the half
 * extents along them. Six faces.
 */
export function box(centre: Vec3, axes: [Vec3, Vec3, Vec3], half: [number, number, number], colour: Rgb): Face[] {
  const [u, v, w] = axes;
  const [hu, hv, hw] = half;
  const p = (su: number, sv: number, sw: number) => at(centre, u, su * hu, v, sv * hv, w, sw * hw);
  const face = (normal: Vec3, points: Vec3[]): Face => ({ points, normal, colour });
  return [
    face(w, [p(-1, -1, 1), p(1, -1, 1), p(1, 1, 1), p(-1, 1, 1)]),
    face(scale(w, -1), [p(-1, -1, -1), p(-1, 1, -1), p(1, 1, -1), p(1, -1, -1)]),
    face(u, [p(1, -1, -1), p(1, 1, -1), p(1, 1, 1), p(1, -1, 1)]),
    face(scale(u, -1), [p(-1, -1, -1), p(-1, -1, 1), p(-1, 1, 1), p(-1, 1, -1)]),
    face(v, [p(-1, 1, -1), p(-1, 1, 1), p(1, 1, 1), p(1, 1, -1)]),
    face(scale(v, -1), [p(-1, -1, -1), p(1, -1, -1), p(1, -1, 1), p(-1, -1, 1)]),
  ];
}

/** A box standing on its footprint: centre, yaw about z, half extents (x, y along the yaw; z up). */
export function uprightBox(centre: Vec3, yawRad: number, half: [number, number, number], colour: Rgb): Face[] {
  const c = Math.cos(yawRad);
  const s = Math.sin(yawRad);
  return box(centre, [[c, s, 0], [-s, c, 0], [0, 0, 1]], half, colour);
}

/**
 * A regular n-sided prism of circumradius `radius` from point a to point b (its axis), the first
 * side's corner towards `side` (any vector not parallel to the axis). Caps included.
 */
export function prism(a: Vec3, b: Vec3, radius: number, sides: number, side: Vec3, colour: Rgb): Face[] {
  const axis = normalize([b[0] - a[0], b[1] - a[1], b[2] - a[2]]);
  const e1 = normalize(cross(cross(axis, side), axis));
  const e2 = cross(axis, e1);
  const ring = (centre: Vec3) =>
    Array.from({ length: sides }, (_, k) => {
      const t = (2 * Math.PI * k) / sides;
      return at(centre, e1, radius * Math.cos(t), e2, radius * Math.sin(t), axis, 0);
    });
  const bottom = ring(a);
  const top = ring(b);
  const faces: Face[] = [
    { points: [...top], normal: axis, colour },
    { points: [...bottom].reverse(), normal: scale(axis, -1), colour },
  ];
  for (let k = 0; k < sides; k++) {
    const next = (k + 1) % sides;
    const t = (2 * Math.PI * (k + 0.5)) / sides;
    const normal = normalize(at([0, 0, 0], e1, Math.cos(t), e2, Math.sin(t), axis, 0));
    faces.push({ points: [bottom[k], bottom[next], top[next], top[k]], normal, colour });
  }
  return faces;
}

/** An upright disc-footprint object (a mug, a roll of tape): a 16-sided prism on the table. */
export function uprightCylinder(centre: Vec3, radius: number, heightM: number, colour: Rgb): Face[] {
  const a: Vec3 = [centre[0], centre[1], centre[2] - heightM / 2];
  const b: Vec3 = [centre[0], centre[1], centre[2] + heightM / 2];
  // A 16-gon inscribed in the circle would lose area; size it to the circle's area.
  const sides = 16;
  const areaRadius = radius * Math.sqrt((2 * Math.PI) / (sides * Math.sin((2 * Math.PI) / sides)));
  return prism(a, b, areaRadius, sides, [1, 0, 0], colour);
}
