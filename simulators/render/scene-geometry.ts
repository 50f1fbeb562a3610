/**
 * The simulated cell's surroundings and objects as faces for the cameras: the 60 x 40 cm table
 * (the robot's base at its origin; drawn as 5 cm tiles so the lamp's falloff has vertices to vary
 * across), the floor 75 cm below it, the wall behind the robot, and the objects on the table
 * (boxes and upright cylinders with their colours, world/objects.ts).
 */
import type { SimObject } from "../world/objects.js";
import type { Rgb } from "../world/objects.js";
import { baseFaces } from "./robot-geometry.js";
import { box, uprightBox, uprightCylinder, type Face } from "./solids.js";

export const TABLE_RGB: Rgb = [142, 142, 138];
const TABLE_EDGE_RGB: Rgb = [112, 110, 104];
const FLOOR_RGB: Rgb = [70, 66, 60];
const WALL_RGB: Rgb = [185, 190, 195];

/** Table top extent, metres (x from behind the base to the far edge, y across). */
export const TABLE_X_M: readonly [number, number] = [-0.1, 0.5];
export const TABLE_Y_M: readonly [number, number] = [-0.2, 0.2];
const TABLE_HEIGHT_M = 0.75;
const TILE_M = 0.05;
const WALL_X_M = -0.45;

/** Faces that never move during an episode: table, floor, wall, the robot's base plate. */
export function staticFaces(): Face[] {
  const faces: Face[] = [];
  const [x0, x1] = TABLE_X_M;
  const [y0, y1] = TABLE_Y_M;
  for (let x = x0; x < x1 - 1e-9; x += TILE_M) {
    for (let y = y0; y < y1 - 1e-9; y += TILE_M) {
      faces.push({ points: [[x, y, 0], [x + TILE_M, y, 0], [x + TILE_M, y + TILE_M, 0], [x, y + TILE_M, 0]], normal: [0, 0, 1], colour: TABLE_RGB });
    }
  }
  // The table's thickness and legs are out of every view; its edges show as a slab.
  const slab = box([(x0 + x1) / 2, (y0 + y1) / 2, -0.015], [[1, 0, 0], [0, 1, 0], [0, 0, 1]], [(x1 - x0) / 2, (y1 - y0) / 2, 0.015], TABLE_EDGE_RGB);
  faces.push(...slab.filter((f) => f.normal[2] === 0));
  const far = 3;
  faces.push({ points: [[WALL_X_M, -far, -TABLE_HEIGHT_M], [far, -far, -TABLE_HEIGHT_M], [far, far, -TABLE_HEIGHT_M], [WALL_X_M, far, -TABLE_HEIGHT_M]], normal: [0, 0, 1], colour: FLOOR_RGB });
  faces.push({ points: [[WALL_X_M, -far, -TABLE_HEIGHT_M], [WALL_X_M, far, -TABLE_HEIGHT_M], [WALL_X_M, far, 2], [WALL_X_M, -far, 2]], normal: [1, 0, 0], colour: WALL_RGB });
  faces.push(...baseFaces());
  return faces;
}

/** The objects on (or above) the table. */
export function objectFaces(objects: readonly SimObject[]): Face[] {
  const faces: Face[] = [];
  for (const o of objects) {
    const { footprint, halfXM, halfYM, heightM, colour } = o.shape;
    if (footprint === "disc") faces.push(...uprightCylinder(o.positionM, halfXM, heightM, colour));
    else faces.push(...uprightBox(o.positionM, o.yawRad, [halfXM, halfYM, heightM / 2], colour));
  }
  return faces;
}
