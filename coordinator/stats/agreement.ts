/**
 * Sim-to-real agreement for `verify` runs: each scenario ran in the simulator and on the real
 * cell; how often do the two outcomes agree, beyond chance, and is the simulator biased?
 */

import { mcnemarExact, type McNemarResult } from "./mcnemar.js";
import { pairedDifferenceInterval, tallyPairs, type PairedDifferenceInterval } from "./paired-difference.js";
import { wilsonInterval, zForConfidence } from "./wilson.js";

/** A rate with its count and interval, as every rate in Assay's results is reported. */
export interface RateWithInterval {
  k: number;
  n: number;
  rate: number | null;
  ci: [number, number];
  interval_method: "wilson";
}

/** Result of {@link agreement}; field names are the wire names. */
export interface AgreementResult {
  n: number;
  /** Share of scenarios where sim and real outcomes match. */
  agreement_rate: number | null;
  /** Wilson interval of agreement_rate at the requested confidence (0.95 unless asked otherwise). */
  ci95: [number, number];
  ci_level: number;
  interval_method: "wilson";
  /** Cohen's (1960) kappa: agreement beyond chance; null when chance agreement is 1 (all one outcome). */
  cohen_kappa: number | null;
  /** Large-sample interval of kappa (Fleiss, Cohen & Everitt 1969 variance); null with kappa. */
  kappa_ci: [number, number] | null;
  sim_success_rate: RateWithInterval;
  real_success_rate: RateWithInterval;
  /** sim rate - real rate with Newcombe's paired interval: the transfer gap on these scenarios. */
  sim_minus_real: PairedDifferenceInterval;
  /** Exact McNemar test of "the simulator is as optimistic as it is pessimistic" (b = sim-only). */
  mcnemar: McNemarResult;
}

function rate(k: number, n: number, ci: number): RateWithInterval {
  return { k, n, rate: n === 0 ? null : k / n, ci: wilsonInterval(k, n, ci), interval_method: "wilson" };
}

/** Agreement statistics of paired sim/real outcomes per scenario at confidence `ci`. */
export function agreement(pairs: ReadonlyArray<{ sim: boolean; real: boolean }>, ci = 0.95): AgreementResult {
  const z = zForConfidence(ci);
  const table = tallyPairs(pairs.map(({ sim, real }) => ({ a: sim, b: real })));
  const { both, onlyA: simOnly, onlyB: realOnly, neither } = table;
  const n = pairs.length;
  const agree = both + neither;
  let kappa: number | null = null;
  let kappaCi: [number, number] | null = null;
  if (n > 0) {
    const po = agree / n;
    const simRate = (both + simOnly) / n;
    const realRate = (both + realOnly) / n;
    const pe = simRate * realRate + (1 - simRate) * (1 - realRate);
    if (pe < 1) {
      kappa = (po - pe) / (1 - pe);
      const se = kappaStandardError(table, n, kappa, pe);
      kappaCi = [Math.max(-1, kappa - z * se), Math.min(1, kappa + z * se)];
    }
  }
  return {
    n,
    agreement_rate: n === 0 ? null : agree / n,
    ci95: wilsonInterval(agree, n, ci),
    ci_level: ci,
    interval_method: "wilson",
    cohen_kappa: kappa,
    kappa_ci: kappaCi,
    sim_success_rate: rate(both + simOnly, n, ci),
    real_success_rate: rate(both + realOnly, n, ci),
    sim_minus_real: pairedDifferenceInterval(table, ci),
    mcnemar: mcnemarExact(simOnly, realOnly),
  };
}

/**
 * Large-sample standard error of kappa for a 2×2 table (Fleiss, Cohen & Everitt 1969, eq. 13):
 * Var = [Σ_i p_ii (1 - (p_i. + p_.i)(1 - κ))² + (1 - κ)² Σ_{i≠j} p_ij (p_.i + p_j.)²
 *        - (κ - p_e(1 - κ))²] / (n (1 - p_e)²).
 */
function kappaStandardError(
  table: { both: number; onlyA: number; onlyB: number; neither: number },
  n: number,
  kappa: number,
  pe: number,
): number {
  // Rows: sim (1 = success, 0 = failure); columns: real.
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
