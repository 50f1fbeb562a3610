/**
 * Puts corner candidates on the board's lattice: from a seed, the nearest neighbour and the nearest
 * one off that line give the two grid steps; the lattice grows breadth-first, each step predicted from
 * the step that reached the point (so perspective and lens distortion bend it gradually), and the
 * nearest candidate within 30 % of a step taken. The result must be exactly cols x rows, complete.
 * Order, as OpenCV gives it: row by row, `cols` per row; i runs along the board's `cols` side pointing
 * right in the image (left to right), j runs so that (i, j) turns like (x right, y down).
 */
export interface LatticeResult {
  /** cols * rows points, row by row. */
  corners: [number, number][];
  /** Per corner, the distance to its nearest lattice neighbour, px. */
  spacingPx: number[];
}

type Vec = [number, number];

const MAX_SEEDS = 12;

function grow(points: readonly Vec[], neighbours: readonly number[][], seed: number): Map<string, number> | undefined {
  const p0 = points[seed]!;
  const near = neighbours[seed]!;
  if (near.length < 2) return undefined;
  const a: Vec = [points[near[0]!]![0] - p0[0], points[near[0]!]![1] - p0[1]];
  const la = Math.hypot(...a);
  let b: Vec | undefined;
  for (const n of near.slice(1)) {
    const d: Vec = [points[n]![0] - p0[0], points[n]![1] - p0[1]];
    const ld = Math.hypot(...d);
    if (Math.abs(a[0] * d[1] - a[1] * d[0]) / (la * ld) > 0.5 && ld < 2.5 * la && ld > 0.4 * la) { b = d; break; }
  }
  if (!b) return undefined;
  const at = new Map<string, number>();
  const coord = new Map<number, Vec>();
  const steps = new Map<number, { a: Vec; b: Vec }>();
  at.set("0,0", seed);
  coord.set(seed, [0, 0]);
  steps.set(seed, { a, b });
  const queue = [seed];
  while (queue.length) {
    const index = queue.shift()!;
    const [i, j] = coord.get(index)!;
    const { a: sa, b: sb } = steps.get(index)!;
    const p = points[index]!;
    for (const [di, dj, step] of [[1, 0, sa], [-1, 0, [-sa[0], -sa[1]]], [0, 1, sb], [0, -1, [-sb[0], -sb[1]]]] as [number, number, Vec][]) {
      const predicted: Vec = [p[0] + step[0], p[1] + step[1]];
      const tolerance = 0.3 * Math.min(Math.hypot(...sa), Math.hypot(...sb));
      let best = -1, bestDistance = tolerance;
      for (const n of neighbours[index]!) {
        const distance = Math.hypot(points[n]![0] - predicted[0], points[n]![1] - predicted[1]);
        if (distance < bestDistance) { best = n; bestDistance = distance; }
      }
      if (best < 0) continue;
      const key = `${i + di},${j + dj}`;
      const existing = coord.get(best);
      if (existing) {
        if (existing[0] !== i + di || existing[1] !== j + dj) return undefined; // the lattice folds: not a board
        continue;
      }
      if (at.has(key)) continue;
      at.set(key, best);
      coord.set(best, [i + di, j + dj]);
      const actual: Vec = [points[best]![0] - p[0], points[best]![1] - p[1]];
      const sign = di + dj;
      const taken: Vec = [actual[0] * sign, actual[1] * sign];
      steps.set(best, di !== 0 ? { a: taken, b: sb } : { a: sa, b: taken });
      queue.push(best);
      if (at.size > 4 * points.length) return undefined;
    }
  }
  return at;
}

/** Finds the cols x rows lattice among `points`; throws a plain reason when there is none. */
export function orderLattice(points: readonly Vec[], cols: number, rows: number, strength: readonly number[] = []): LatticeResult {
  if (points.length < cols * rows) throw new Error(`found ${points.length} corner-like points, fewer than the board's ${cols}x${rows} = ${cols * rows} inner corners: is the whole board in view, sharp and evenly lit?`);
  const k = Math.min(points.length - 1, 8);
  const neighbours = points.map((p, i) => points.map((q, j) => ({ j, d: (q[0] - p[0]) ** 2 + (q[1] - p[1]) ** 2 })).filter((e) => e.j !== i).sort((x, y) => x.d - y.d).slice(0, k).map((e) => e.j));
  // Seeds: the strongest responses near the candidates' middle first.
  const mx = points.reduce((s, p) => s + p[0], 0) / points.length, my = points.reduce((s, p) => s + p[1], 0) / points.length;
  const order = points.map((_, i) => i).sort((x, y) => Math.hypot(points[x]![0] - mx, points[x]![1] - my) - Math.hypot(points[y]![0] - mx, points[y]![1] - my));
  const seeds = (strength.length ? order.slice(0, MAX_SEEDS * 2).sort((x, y) => strength[y]! - strength[x]!) : order).slice(0, MAX_SEEDS);
  let largest = { cols: 0, rows: 0, count: 0 };
  for (const seed of seeds) {
    const lattice = grow(points, neighbours, seed);
    if (!lattice) continue;
    const ij = [...lattice.keys()].map((key) => key.split(",").map(Number) as Vec);
    const imin = Math.min(...ij.map((c) => c[0])), imax = Math.max(...ij.map((c) => c[0]));
    const jmin = Math.min(...ij.map((c) => c[1])), jmax = Math.max(...ij.map((c) => c[1]));
    const ni = imax - imin + 1, nj = jmax - jmin + 1;
    if (lattice.size > largest.count) largest = { cols: ni, rows: nj, count: lattice.size };
    const fits = (ni === cols && nj === rows) || (ni === rows && nj === cols);
    if (!fits || lattice.size !== cols * rows) continue;
    const pos = (i: number, j: number) => points[lattice.get(`${i + imin},${j + jmin}`)!]!;
    // Axis directions over the whole board.
    const along = (di: number, dj: number): Vec => {
      let x = 0, y = 0;
      for (let j = 0; j < nj - dj; j++) for (let i = 0; i < ni - di; i++) { x += pos(i + di, j + dj)[0] - pos(i, j)[0]; y += pos(i + di, j + dj)[1] - pos(i, j)[1]; }
      return [x, y];
    };
    const A = along(1, 0), B = along(0, 1);
    // Which lattice axis is the board's `cols` side; for a square board, the more horizontal one.
    let iIsA = ni === cols && (ni !== nj || Math.abs(A[0]) / Math.hypot(...A) >= Math.abs(B[0]) / Math.hypot(...B));
    if (ni !== nj) iIsA = ni === cols;
    const dirI = iIsA ? A : B, dirJ = iIsA ? B : A;
    const flipI = dirI[0] < 0 || (dirI[0] === 0 && dirI[1] < 0);
    const di: Vec = flipI ? [-dirI[0], -dirI[1]] : dirI;
    const flipJ = di[0] * dirJ[1] - di[1] * dirJ[0] < 0;
    const corners: [number, number][] = [];
    const spacingPx: number[] = [];
    for (let j = 0; j < rows; j++) {
      for (let i = 0; i < cols; i++) {
        const ii = flipI ? cols - 1 - i : i, jj = flipJ ? rows - 1 - j : j;
        const [li, lj] = iIsA ? [ii, jj] : [jj, ii];
        const p = pos(li, lj);
        corners.push([p[0], p[1]]);
        let nearest = Infinity;
        for (const [oi, oj] of [[1, 0], [-1, 0], [0, 1], [0, -1]] as Vec[]) {
          if (li + oi < 0 || li + oi >= ni || lj + oj < 0 || lj + oj >= nj) continue;
          const q = pos(li + oi, lj + oj);
          nearest = Math.min(nearest, Math.hypot(q[0] - p[0], q[1] - p[1]));
        }
        spacingPx.push(nearest);
      }
    }
    return { corners, spacingPx };
  }
  if (largest.count === 0) throw new Error(`found ${points.length} corner-like points but no checkerboard lattice among them: is the whole board in view, sharp and evenly lit?`);
  throw new Error(`found a ${largest.cols}x${largest.rows} lattice of ${largest.count} corners, not the board's ${cols}x${rows} inner corners: is the whole board in view with a white margin around it, and is --board the count of inner corners (squares minus one on each side)?`);
}
