/**
 * Benchmark suite `stats-cells`: the two-sample rules of issue 25 item 4 that model cells, on their own
 * (they are also part of `npm run bench -- stats`). Groups: paired compare blocked by cell
 * (stats-paired-cells.ts); the threshold test over cells (stats-cell-threshold.ts); regressions over 12
 * units when cells drift between runs (stats-cell-regression.ts).
 *
 *   npm run bench -- stats-cells
 */
import type { Figure } from "../bench.js";
import { run as pairedCellFigures } from "./stats-paired-cells.js";
import { run as cellThresholdFigures } from "./stats-cell-threshold.js";
import { run as cellRegressionFigures } from "./stats-cell-regression.js";

/** Every group's figures, in order. */
export async function run(): Promise<Figure[]> {
  return [...pairedCellFigures(), ...cellThresholdFigures(), ...cellRegressionFigures()];
}
