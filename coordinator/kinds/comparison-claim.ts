/**
 * What a two-sample comparison is about, said the same way by every kind (docs/statistics.md, "Two
 * model-level rates"): `claim: "model"` when the interval is about the robot model (a new cell of it:
 * each arm's rate modelled over its own cells, beta-binomial posterior difference), `"these_cells"`
 * when it is about the cells and conditions the episodes ran on (Newcombe's intervals, which treat
 * episodes as independent).
 */
import { betaBinomialDifference } from "../stats/beta-binomial-difference.js";
import { pairedCellDifference, type CellPairCounts } from "../stats/paired-cell-difference.js";
import { newcombeDifference } from "../stats/two-proportions.js";
import type { HeadlinePrior } from "../stats/beta-binomial-rate.js";
import type { RunResult } from "../runs/result-summary.js";

export type ComparisonClaim = "model" | "these_cells";

/** One arm of an unpaired comparison: its per-cell counts and the prior its own headline used. */
export interface ComparisonArm {
  cells: Array<{ k: number; n: number }>;
  prior?: HeadlinePrior;
}

/** An arm from a unit's (or an earlier run's) Result. */
export function armOf(result: Pick<RunResult, "cells">): ComparisonArm {
  return { cells: result.cells.by_cell.map((c) => ({ k: c.successes, n: c.n })), prior: result.cells.prior };
}

const pct = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(2)}`;
const total = (arm: ComparisonArm) => arm.cells.reduce((sum, c) => ({ k: sum.k + c.k, n: sum.n + c.n }), { k: 0, n: 0 });

/**
 * The model-level difference A − B of two arms on their own cells: `diff` (posterior mean), `ci`,
 * `probability_a_greater`, `claim: "model"` and the sentence; beside it, under `these_cells`, the
 * Newcombe interval of the pooled counts (the claim about these cells).
 */
export function modelLevelDifference(a: ComparisonArm, b: ComparisonArm, names: { a: string; b: string }): Record<string, unknown> {
  const d = betaBinomialDifference(a.cells, b.cells, { prior: a.prior, priorB: b.prior });
  const ta = total(a);
  const tb = total(b);
  const cellsA = a.cells.filter((c) => c.n > 0).length;
  const cellsB = b.cells.filter((c) => c.n > 0).length;
  const these = newcombeDifference(ta.k, ta.n, tb.k, tb.n, 0.95);
  return {
    claim: "model" as ComparisonClaim,
    diff: d.diff, ci: d.ci, ci_level: 0.95, method: d.method, probability_a_greater: d.probability_a_greater,
    statement: `Model-level difference ${names.a} − ${names.b} (new cells of the robot model): ${pct(d.diff)} [${pct(d.ci[0])}, ${pct(d.ci[1])}], `
      + `95% beta-binomial posterior, each side on its own cells (${cellsA} and ${cellsB}); P(${names.a} better) = ${d.probability_a_greater.toFixed(3)}.`
      + (cellsA <= 1 || cellsB <= 1 ? " A side ran on one cell, so the interval rests on the prior for how much cells differ: run on more cells to narrow it." : ""),
    these_cells: {
      claim: "these_cells" as ComparisonClaim, diff: these.diff, ci: these.ci, ci_level: 0.95, method: these.method,
      statement: `On these cells: ${pct(these.diff)} [${pct(these.ci[0])}, ${pct(these.ci[1])}] (Newcombe, 95%); says nothing about another cell.`,
    },
  };
}

/** One cell's complete pairs in a paired compare (both episodes of each on this cell). */
export interface CellPairs extends CellPairCounts {
  cell: string;
}

/**
 * The model-level difference A − B of a paired compare blocked by cell: the within-cell paired
 * differences, a random effect per cell (stats/paired-cell-difference.ts), `claim: "model"`, and the
 * sentence. Pairs split over two cells have no within-cell difference and are left out (`split_pairs`).
 */
export function pairedModelLevelDifference(
  byCell: readonly CellPairs[], splitPairs: number, names: { a: string; b: string }, prior: HeadlinePrior | undefined,
): Record<string, unknown> {
  const d = pairedCellDifference(byCell, { prior });
  const cells = byCell.filter((c) => c.n > 0).length;
  return {
    claim: "model" as ComparisonClaim,
    diff: d.diff, ci: d.ci, ci_level: 0.95, method: d.method, probability_a_greater: d.probability_a_greater,
    tau_median: Number.isFinite(d.tau_median) ? d.tau_median : null,
    by_cell: byCell.map((c) => ({ cell: c.cell, pairs: c.n, both: c.both, only_a: c.onlyA, only_b: c.onlyB, diff: c.n > 0 ? (c.onlyA - c.onlyB) / c.n : null })),
    split_pairs: splitPairs,
    statement: `Model-level difference ${names.a} − ${names.b} (new cells of the robot model): ${pct(d.diff)} [${pct(d.ci[0])}, ${pct(d.ci[1])}], `
      + `95%, from the paired differences within each of ${cells} cell${cells === 1 ? "" : "s"} with a cell-to-cell random effect; P(${names.a} better) = ${d.probability_a_greater.toFixed(3)}.`
      + (cells <= 1 ? " The pairs ran on one cell, so the interval rests on the prior for how much cells differ: run on more cells to narrow it." : "")
      + (splitPairs > 0 ? ` ${splitPairs} pair${splitPairs === 1 ? "" : "s"} ran on two cells (a cell left the fleet) and ${splitPairs === 1 ? "is" : "are"} left out.` : ""),
  };
}

/** The sentence of a comparison about these cells only. */
export function theseCellsStatement(what: string): string {
  return `About these cells: ${what} compares the two sides on the cells and conditions the episodes ran on, episodes counted as independent; it is not a claim about a new cell of the robot model.`;
}
