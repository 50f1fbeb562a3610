/**
 * Per-cell variation of a simulated fleet: real cells of one model differ (a camera bracket a few
 * millimetres off, a lamp or white balance of another colour, the cell's own stock of cubes cut to a
 * tolerance), and the statistics of results must see that. Each simulated cell draws its variation
 * once from the fleet seed and its cell id, so a cell keeps its character whichever cells are
 * launched with it, and the scale multiplies the same draw: scale 0 is no variation at all, scale 2
 * the same directions twice as far.
 *
 * At scale s, every component is a uniform draw within (ranges documented in docs/simulation.md):
 *   top camera mount offset   x and y, each +/- 8 mm x s (the picture shifts; the reference policies
 *                             turn pixels into table coordinates with the catalog's nominal calibration,
 *                             the cell's /meta records where its camera really is)
 *   colour gain               red, green, blue, each 1 +/- 0.15 x s (lamp colour and white balance)
 *   object size               stocked objects (not kits) scaled by 1 +/- 0.06 x s (a 30 mm cube: +/- 1.8 mm)
 */
import { SimRandom, deriveSeed } from "./rng.js";

export interface CellVariation {
  /** The scale it was drawn at (0: none). */
  scale: number;
  /** Where the top camera sits relative to its nominal mount, world x and y, metres. */
  topCameraOffsetM: [number, number];
  /** Multiplies every lighting preset's red, green and blue gains. */
  colourGain: [number, number, number];
  /** Multiplies every stocked object's dimensions. */
  objectScale: number;
}

/** Half ranges at scale 1. */
export const CELL_VARIATION_RANGES = {
  topCameraOffsetM: 0.008,
  colourGain: 0.15,
  objectScale: 0.06,
} as const;

/** The largest scale accepted (at 3 a colour gain reaches 0.55..1.45 and a camera 24 mm off). */
export const MAX_CELL_VARIATION_SCALE = 3;

/** No variation: every cell as the catalog describes it. */
export const NO_CELL_VARIATION: CellVariation = Object.freeze({
  scale: 0, topCameraOffsetM: [0, 0] as [number, number], colourGain: [1, 1, 1] as [number, number, number], objectScale: 1,
});

export interface CellVariationInput {
  /** Multiplies every range; 0 (the default) turns variation off. */
  scale?: number;
  /** The fleet seed the draw is made from (default 1). */
  seed?: number;
}

export interface CellVariationOptions {
  scale: number;
  seed: number;
}

/** Fills defaults, validates and rejects unknown keys. */
export function compileCellVariationOptions(input: CellVariationInput | number | undefined): CellVariationOptions {
  if (input !== undefined && typeof input !== "number" && (typeof input !== "object" || input === null || Array.isArray(input))) {
    throw new Error(`cell variation must be a number (the scale) or {scale, seed}; got ${JSON.stringify(input)}`);
  }
  const raw: Record<string, unknown> = typeof input === "number" ? { scale: input } : { ...(input ?? {}) };
  const unknown = Object.keys(raw).filter((key) => key !== "scale" && key !== "seed");
  if (unknown.length > 0) throw new Error(`cell variation takes only "scale" and "seed"; got ${unknown.map((k) => JSON.stringify(k)).join(", ")}`);
  const scale = raw.scale ?? 0;
  if (typeof scale !== "number" || !Number.isFinite(scale) || scale < 0 || scale > MAX_CELL_VARIATION_SCALE) {
    throw new Error(`cell variation scale must be a number from 0 (off) to ${MAX_CELL_VARIATION_SCALE}; got ${JSON.stringify(raw.scale)}`);
  }
  const seed = raw.seed ?? 1;
  if (typeof seed !== "number" || !Number.isInteger(seed)) throw new Error(`cell variation seed must be an integer; got ${JSON.stringify(raw.seed)}`);
  return { scale, seed };
}

/** The variation of one cell: the same seed, cell id and scale always give the same values. */
export function cellVariationFor(cellId: string, options: CellVariationOptions): CellVariation {
  if (options.scale === 0) return NO_CELL_VARIATION;
  // Drawn in a fixed order from a stream of its own, independent of the scale.
  const random = new SimRandom(deriveSeed(options.seed, `cell-variation:${cellId}`));
  const unit = () => random.symmetric(1);
  const s = options.scale;
  const r = CELL_VARIATION_RANGES;
  const camera: [number, number] = [unit() * r.topCameraOffsetM * s, unit() * r.topCameraOffsetM * s];
  const colour: [number, number, number] = [1 + unit() * r.colourGain * s, 1 + unit() * r.colourGain * s, 1 + unit() * r.colourGain * s];
  const size = 1 + unit() * r.objectScale * s;
  return { scale: s, topCameraOffsetM: camera, colourGain: colour, objectScale: size };
}

/** A one-line description for logs: "top camera +3.1/-5.0 mm, colour x1.08/0.95/1.02, objects x1.021". */
export function describeCellVariation(variation: CellVariation): string {
  if (variation.scale === 0) return "none";
  const mm = (m: number) => `${m >= 0 ? "+" : ""}${(m * 1000).toFixed(1)}`;
  return `scale ${variation.scale}: top camera ${mm(variation.topCameraOffsetM[0])}/${mm(variation.topCameraOffsetM[1])} mm, ` +
    `colour x${variation.colourGain.map((g) => g.toFixed(3)).join("/")}, objects x${variation.objectScale.toFixed(3)}`;
}
