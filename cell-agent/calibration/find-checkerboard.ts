/**
 * The inner corners of a checkerboard in one grey image, to a fraction of a pixel, in OpenCV's order
 * (row by row, `cols` per row): saddle-point candidates, the cols x rows lattice among them, then
 * gradient-orthogonality refinement with a window scaled to each corner's grid spacing. Throws a
 * plain reason when the whole board is not found; a calibration uses only frames with every corner.
 */
import { findSaddlePoints, type SaddleOptions } from "./saddle-points.js";
import { orderLattice } from "./checkerboard-lattice.js";
import { gradients, refineCorner } from "./corner-subpixel.js";
import type { GrayImage } from "./gray-image.js";

export interface BoardSize {
  /** Inner corners along the board's long side (OpenCV's pattern width), e.g. 9 for a 10 x 7 squares board. */
  cols: number;
  /** Inner corners along the other side, e.g. 6. */
  rows: number;
}

export function findCheckerboard(image: GrayImage, board: BoardSize, options: SaddleOptions = {}): [number, number][] {
  const candidates = findSaddlePoints(image, options);
  if (candidates.length === 0) throw new Error("no checkerboard corners in view: is the board in the picture, in focus and lit?");
  const { corners, spacingPx } = orderLattice(candidates.map((c) => [c.x, c.y]), board.cols, board.rows, candidates.map((c) => c.response));
  const field = gradients(image);
  return corners.map(([x, y], k) => refineCorner(field, x, y, Math.min(10, 0.4 * spacingPx[k]!)));
}
