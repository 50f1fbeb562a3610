/**
 * Cohen's (1960) kappa of two raters' yes/no judgements of the same items, with its large-sample
 * standard error (Fleiss, Cohen & Everitt 1969, eq. 13, as Fleiss, Levin & Paik 2003 ch. 18 give it)
 * and the Wald interval kappa ± z·SE, clipped to [-1, 1]. Used by `verify` runs (simulator against
 * real cell, agreement.ts) and by judge runs (the judge endpoint against people, runs/judge-section.ts).
 */
import type { PairedCounts } from "./paired-difference.js";
import { zForConfidence } from "./wilson.js";

export interface CohenKappa {
  n: number;
  /** Observed agreement po. */
  agreement_rate: number | null;
  /** Null when chance agreement is 1 (both raters gave one answer throughout) or there are no items. */
  kappa: number | null;
  se: number | null;
  ci: [number, number] | null;
}

/**
 * Kappa of the 2×2 table of rater A (onlyA: A said yes, B no) against rater B at confidence `ci`.
 * `designEffect` widens the interval (half-width z·SE·sqrt(deff)) for clustered items; `critical`
 * replaces z (e.g. a t quantile over clusters).
 */
export function cohenKappa(table: PairedCounts, ci = 0.95, widen: { critical?: number; designEffect?: number } = {}): CohenKappa {
  const n = table.both + table.onlyA + table.onlyB + table.neither;
  if (n === 0) return { n, agreement_rate: null, kappa: null, se: null, ci: null };
  const po = (table.both + table.neither) / n;
  const aYes = (table.both + table.onlyA) / n;
  const bYes = (table.both + table.onlyB) / n;
  const pe = aYes * bYes + (1 - aYes) * (1 - bYes);
  if (!(pe < 1)) return { n, agreement_rate: po, kappa: null, se: null, ci: null };
  const kappa = (po - pe) / (1 - pe);
  const se = kappaStandardError(table, n, kappa, pe);
  const half = (widen.critical ?? zForConfidence(ci)) * se * Math.sqrt(widen.designEffect ?? 1);
  return { n, agreement_rate: po, kappa, se, ci: [Math.max(-1, kappa - half), Math.min(1, kappa + half)] };
}

/**
 * Large-sample standard error of kappa for a 2×2 table (Fleiss, Cohen & Everitt 1969, eq. 13):
 * Var = [Σ_i p_ii (1 - (p_i. + p_.i)(1 - κ))² + (1 - κ)² Σ_{i≠j} p_ij (p_.i + p_j.)²
 *        - (κ - p_e(1 - κ))²] / (n (1 - p_e)²).
 */
function kappaStandardError(table: PairedCounts, n: number, kappa: number, pe: number): number {
  // Rows: rater A (1 = yes, 0 = no); columns: rater B.
  const p = [
    [table.neither / n, table.onlyB / n],
    [table.onlyA / n, table.both / n],
  ];
  const row = [p[0][0] + p[0][1], p[1][0] + p[1][1]];
  const col = [p[0][0] + p[1][0], p[0][1] + p[1][1]];
  let sum = 0;
  for (let i = 0; i < 2; i++) {
    for (let j = 0; j < 2; j++) {
      if (i === j) sum += p[i][i] * (1 - (row[i] + col[i]) * (1 - kappa)) ** 2;
      else sum += (1 - kappa) ** 2 * p[i][j] * (col[i] + row[j]) ** 2;
    }
  }
  sum -= (kappa - pe * (1 - kappa)) ** 2;
  return Math.sqrt(Math.max(0, sum) / (n * (1 - pe) ** 2));
}
