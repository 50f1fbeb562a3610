/**
 * The headline of a Result in words. The console's result card, the CLI (`runs get`, `runs watch`)
 * and the PDF report print these sentences as they are, so every surface says the same thing in the
 * same words (docs/statistics.md, "The headline", quotes them).
 *
 *   Model-level success rate (a new cell of this robot model): 1.00 [0.84, 1.00], 95% beta-binomial posterior over 3 cells.
 *   On these 3 cells: 1.00 [0.84, 1.00] (Wilson, 95%).
 *   Between-cell correlation (ICC): median 0.08, 95% upper bound 0.31; the model-level interval is worth 15.5 independent episodes.
 *   With 3 cells the model-level interval rests mostly on the prior for how much cells differ (ICC ~ Beta(1, 9), default): run on more cells to narrow it.
 */

import type { HeadlinePrior } from "../stats/beta-binomial-rate.js";
import type { TheseCellsRate } from "../stats/these-cells-rate.js";

/** What the statement reads of a Result. */
export interface StatementInput {
  rate: { n: number; success_rate: number; ci95: [number, number] };
  cells: {
    clusters: number;
    effective_n: number;
    these_cells: TheseCellsRate;
    icc: { median: number; upper95: number };
    prior: HeadlinePrior;
    rests_on_prior: boolean;
  };
}

const rate = (x: number) => x.toFixed(2);
const interval = (ci: readonly [number, number]) => `[${rate(ci[0])}, ${rate(ci[1])}]`;
const cellCount = (g: number) => `${g} cell${g === 1 ? "" : "s"}`;

/** `ICC ~ Beta(1, 9), default` or `ICC ~ Beta(1.4, 11.2), fitted on 37 runs on 2026-11-20`. */
export function priorLabel(prior: HeadlinePrior): string {
  const { a, b } = prior.icc.parameters;
  const origin = prior.source === "default"
    ? "default"
    : `${prior.source}${prior.fitted_on_runs !== null ? `, fitted on ${prior.fitted_on_runs} runs` : ""}${prior.fitted_at ? ` on ${prior.fitted_at.slice(0, 10)}` : ""}`;
  return `ICC ~ Beta(${Number(a.toPrecision(3))}, ${Number(b.toPrecision(3))}), ${origin}`;
}

/** The headline's sentences; none while no episode has finished. */
export function headlineStatement(summary: StatementInput["rate"], cells: StatementInput["cells"]): string[] {
  if (summary.n === 0) return [];
  const g = cells.clusters;
  const these = cells.these_cells;
  const lines = [
    `Model-level success rate (a new cell of this robot model): ${rate(summary.success_rate)} ${interval(summary.ci95)}, 95% beta-binomial posterior over ${cellCount(g)}.`,
    `On ${g === 1 ? "this cell" : `these ${cellCount(g)}`}: ${rate(these.success_rate)} ${interval(these.ci95)} (${these.interval_method === "wilson" ? "Wilson" : "stratified Wilson"}, 95%).`,
    `Between-cell correlation (ICC): median ${rate(cells.icc.median)}, 95% upper bound ${rate(cells.icc.upper95)}; `
      + `the model-level interval is worth ${cells.effective_n.toFixed(1)} independent episodes.`,
  ];
  if (cells.rests_on_prior) {
    lines.push(`${g === 1 ? "One cell ran these episodes, so the model-level interval rests on" : `With ${cellCount(g)} the model-level interval rests mostly on`}`
      + ` the prior for how much cells differ (${priorLabel(cells.prior)}): run on more cells to narrow it.`);
  }
  return lines;
}
