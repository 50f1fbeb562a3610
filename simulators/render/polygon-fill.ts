/**
 * Scan conversion of one convex polygon into an RGB24 frame with a depth test: the inner loop of
 * the simulated cameras. A pixel belongs to the polygon when its centre (column + 0.5, row + 0.5)
 * is inside it. Nearness (larger = closer to the camera) and a brightness factor (the lamp's
 * falloff) are interpolated across the polygon as planes in screen space, which is exact for the
 * overhead and wrist cameras (they look straight down, so world x and nearness are affine in the
 * pixel position of any flat face) and close enough for the small faces of the oblique views.
 *
 * Seeded sensor noise is added per pixel from a fixed table at a per-frame offset, so drawing
 * allocates nothing and a frame is a pure function of its scene.
 */

/** One frame being drawn: RGB24 colour (clamped on write) and a nearness buffer. */
export interface FrameBuffer {
  width: number;
  height: number;
  colour: Uint8ClampedArray;
  nearness: Float32Array;
  /**
   * Rows drawn into so far (first > last while none): fillPolygon widens the range, so a renderer
   * can restore just those rows of a cached background's nearness for its next frame.
   */
  drawnRows: { first: number; last: number };
}

const NOISE_BITS = 18;
/** Mask for indexing PIXEL_NOISE. */
export const NOISE_MASK = (1 << NOISE_BITS) - 1;
/**
 * Uniform noise in +/-3.5 levels (a small sensor's), from a fixed LCG: same for every process.
 * Two entries longer than the mask reaches, so a pixel's three channels need one masking.
 */
export const PIXEL_NOISE: Float32Array = (() => {
  const table = new Float32Array((1 << NOISE_BITS) + 2);
  let state = 0x2545f491;
  for (let i = 0; i < table.length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    table[i] = ((state >>> 24) / 255 - 0.5) * 7;
  }
  return table;
})();

/**
 * Screen-space polygon: vertex columns, rows, nearness and brightness factor (the first `count`
 * entries), plus the face's colour before the factor and the noise offset of the frame.
 */
export interface ScreenPolygon {
  xs: Float64Array;
  ys: Float64Array;
  qs: Float64Array;
  fs: Float64Array;
  count: number;
  red: number;
  green: number;
  blue: number;
  noiseOffset: number;
}

/** A reusable polygon with room for `capacity` vertices (clipping adds at most one per plane). */
export function screenPolygon(capacity = 24): ScreenPolygon {
  return {
    xs: new Float64Array(capacity), ys: new Float64Array(capacity), qs: new Float64Array(capacity), fs: new Float64Array(capacity),
    count: 0, red: 0, green: 0, blue: 0, noiseOffset: 0,
  };
}

/**
 * A frame and a polygon for one renderer, and the fill that draws the polygon into the frame. The
 * frame's colour is one of two buffers: `drawInto(0)` (the one a renderer lends to its camera) or
 * `drawInto(1)` (for pictures that go elsewhere).
 */
export interface PolygonFiller {
  readonly frame: FrameBuffer;
  readonly poly: ScreenPolygon;
  readonly colourBuffers: readonly [Uint8ClampedArray, Uint8ClampedArray];
  drawInto(buffer: 0 | 1): void;
  fill(): void;
}

/** The JavaScript filler (fillPolygon): the reference the WebAssembly kernel (polygon-fill-wasm.ts) is held to. */
export function javascriptPolygonFiller(width: number, height: number, capacity = 24): PolygonFiller {
  const colourBuffers = [new Uint8ClampedArray(width * height * 3), new Uint8ClampedArray(width * height * 3)] as const;
  const frame: FrameBuffer = { width, height, colour: colourBuffers[0], nearness: new Float32Array(width * height), drawnRows: { first: height, last: -1 } };
  const poly = screenPolygon(capacity);
  return {
    frame, poly, colourBuffers,
    drawInto: (buffer) => void (frame.colour = colourBuffers[buffer]),
    fill: () => fillPolygon(frame, poly),
  };
}

/** Fills a convex polygon where it is at least as near as what the frame already shows. */
export function fillPolygon(frame: FrameBuffer, poly: ScreenPolygon): void {
  const { xs, ys, qs, fs, count: n } = poly;
  if (n < 3) return;
  let minY = Infinity, maxY = -Infinity, minX = Infinity, maxX = -Infinity;
  for (let i = 0; i < n; i++) {
    if (ys[i] < minY) minY = ys[i];
    if (ys[i] > maxY) maxY = ys[i];
    if (xs[i] < minX) minX = xs[i];
    if (xs[i] > maxX) maxX = xs[i];
  }
  const { width, height, colour, nearness } = frame;
  if (maxX < 0 || minX > width || maxY < 0 || minY > height) return;
  // Planes for nearness and factor through vertex 0 and the pair spanning the largest triangle.
  let best = 0, bi = 1;
  for (let i = 1; i + 1 < n; i++) {
    const area = Math.abs((xs[i] - xs[0]) * (ys[i + 1] - ys[0]) - (xs[i + 1] - xs[0]) * (ys[i] - ys[0]));
    if (area > best) {
      best = area;
      bi = i;
    }
  }
  if (best < 1e-9) return; // seen edge-on
  const x1 = xs[bi] - xs[0], y1 = ys[bi] - ys[0], x2 = xs[bi + 1] - xs[0], y2 = ys[bi + 1] - ys[0];
  const det = x1 * y2 - x2 * y1;
  // The planes' gradients, written out (no tuple per polygon): d/dx = (d1 y2 - d2 y1) / det, d/dy = (x1 d2 - x2 d1) / det.
  const dq1 = qs[bi] - qs[0], dq2 = qs[bi + 1] - qs[0];
  const qx = (dq1 * y2 - dq2 * y1) / det, qy = (x1 * dq2 - x2 * dq1) / det;
  const df1 = fs[bi] - fs[0], df2 = fs[bi + 1] - fs[0];
  const fx = (df1 * y2 - df2 * y1) / det, fy = (x1 * df2 - x2 * df1) / det;
  const { red, green, blue, noiseOffset } = poly;
  const rowFirst = Math.max(0, Math.ceil(minY - 0.5));
  const rowLast = Math.min(height - 1, Math.floor(maxY - 0.5));
  if (rowFirst > rowLast) return;
  const drawn = frame.drawnRows;
  if (rowFirst < drawn.first) drawn.first = rowFirst;
  if (rowLast > drawn.last) drawn.last = rowLast;
  for (let row = rowFirst; row <= rowLast; row++) {
    const y = row + 0.5;
    let left = Infinity, right = -Infinity;
    for (let i = 0, j = n - 1; i < n; j = i++) {
      const yi = ys[i], yj = ys[j];
      if ((y < yi && y < yj) || (y > yi && y > yj)) continue;
      // A horizontal edge on the scan line contributes both ends.
      const xa = yi === yj ? xs[i] : xs[i] + ((y - yi) * (xs[j] - xs[i])) / (yj - yi);
      const xb = yi === yj ? xs[j] : xa;
      if (xa < left) left = xa;
      if (xb < left) left = xb;
      if (xa > right) right = xa;
      if (xb > right) right = xb;
    }
    const colFirst = Math.max(0, Math.ceil(left - 0.5));
    const colLast = Math.min(width - 1, Math.ceil(right - 0.5) - 1);
    if (colFirst > colLast) continue;
    const dy = y - ys[0];
    let q = qs[0] + qx * (colFirst + 0.5 - xs[0]) + qy * dy;
    let f = fs[0] + fx * (colFirst + 0.5 - xs[0]) + fy * dy;
    const pEnd = row * width + colLast;
    for (let p = row * width + colFirst, i = p * 3; p <= pEnd; p++, i += 3, q += qx, f += fx) {
      if (q < nearness[p]) continue;
      nearness[p] = q;
      const k = (i + noiseOffset) & NOISE_MASK;
      colour[i] = red * f + PIXEL_NOISE[k];
      colour[i + 1] = green * f + PIXEL_NOISE[k + 1];
      colour[i + 2] = blue * f + PIXEL_NOISE[k + 2];
    }
  }
}
