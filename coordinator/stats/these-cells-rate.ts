/**
 * The success rate on these very cells: what the cells that ran a unit's episodes would do over
 * many more episodes, each cell counting once. A narrower claim than the model-level rate
 * (beta-binomial-rate.ts), which is about a new cell of the model; both are reported, labelled.
 *
 * Balanced cells (every cell ran the same number of episodes, or one cell ran them all): the
 * Wilson (1927) interval of the totals (`interval_method: "wilson"`). Unbalanced cells: the
 * stratified Wilson interval with equal stratum weights (Yan & Su 2010), `"stratified-wilson"`:
 *
 *   p̂_w = (1/G) Σ_g k_g / n_g,   n* = 1 / Σ_g (1/G)² / n_g = G² / Σ_g 1/n_g
 *   interval = Wilson's score interval at p̂_w with n* episodes
 *
 * With equal n_g it is exactly the Wilson interval of the totals. Equal weights make the estimand
 * the mean of these cells' rates whatever share of the episodes the scheduler gave each.
 */

import { wilsonInterval, wilsonScoreInterval, zForConfidence } from "./wilson.js";

/** The rate on these very cells; field names are the wire names. */
export interface TheseCellsRate {
  /** Pooled k/n when balanced, else the mean of the cells' rates. */
  success_rate: number;
  ci95: [number, number];
  interval_method: "wilson" | "stratified-wilson";
}

/** The rate on the cells `clusters` (`k` successes of `n` episodes each; n = 0 ignored) at `ci`. */
export function theseCellsRate(clusters: ReadonlyArray<{ k: number; n: number }>, ci = 0.95): TheseCellsRate {
  const used = clusters.filter((c) => c.n > 0);
  const n = used.reduce((sum, c) => sum + c.n, 0);
  const k = used.reduce((sum, c) => sum + c.k, 0);
  if (used.every((c) => c.n === used[0].n)) {
    return { success_rate: n === 0 ? 0 : k / n, ci95: wilsonInterval(k, n, ci), interval_method: "wilson" };
  }
  const g = used.length;
  const rate = used.reduce((sum, c) => sum + c.k / c.n, 0) / g;
  const atN = (g * g) / used.reduce((sum, c) => sum + 1 / c.n, 0);
  // Wilson's score interval of the stratified rate at the harmonic-mean size: rate 0 exactly when k is 0, 1 when k is n.
  return {
    success_rate: rate,
    ci95: wilsonScoreInterval(rate, 1, atN, zForConfidence(ci)),
    interval_method: "stratified-wilson",
  };
}
