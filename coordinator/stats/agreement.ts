/**
 * Sim-to-real agreement for `verify` runs: each scenario ran in the simulator and on the real
 * cell; how often do the two outcomes agree, beyond chance, and is the simulator biased?
 *
 * Several robots may replay the same scenario, so their agreement outcomes are correlated (a
 * scenario the simulator models badly disagrees for every robot). Pairs that carry a `cluster`
 * (the scenario) get a cluster-aware agreement interval: {@link clusteredRateInterval} over the
 * clusters, and a kappa interval widened by the same design effect. The latter is an approximation:
 * it assumes kappa's variance is inflated by clustering as much as the agreement rate's, which holds
 * to first order when the marginal rates vary less between clusters than agreement does.
 */

import { clusteredRateInterval } from "./clustered-rate.js";
import { cohenKappa } from "./cohen-kappa.js";
import { mcnemarExact, type McNemarResult } from "./mcnemar.js";
import { pairedDifferenceInterval, tallyPairs, type PairedDifferenceInterval } from "./paired-difference.js";
import { tForConfidence } from "./student-t.js";
import { wilsonInterval } from "./wilson.js";

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
  /**
   * Interval of agreement_rate at the requested confidence (0.95 unless asked otherwise): Wilson,
   * or with two or more clusters the cluster-aware "wilson-design-effect-t".
   */
  ci95: [number, number];
  ci_level: number;
  interval_method: string;
  /** Cohen's (1960) kappa: agreement beyond chance; null when chance agreement is 1 (all one outcome). */
  cohen_kappa: number | null;
  /**
   * Large-sample interval of kappa (Fleiss, Cohen & Everitt 1969 variance); null with kappa. With
   * two or more clusters its half-width is t_{G-1} · se · sqrt(design_effect) (an approximation).
   */
  kappa_ci: [number, number] | null;
  /** Distinct clusters (scenarios) among the pairs; null when no pair carries one. */
  clusters: number | null;
  /** Design effect of agreement_rate over the clusters (1 without clusters). */
  design_effect: number;
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

/** One scenario's paired outcome; `cluster` names what correlates outcomes (the scenario). */
export interface AgreementPair {
  sim: boolean;
  real: boolean;
  cluster?: string | number;
}

/**
 * Agreement statistics of paired sim/real outcomes at confidence `ci`. When any pair carries a
 * `cluster`, pairs are grouped by it (a pair without one is a cluster of its own) and, with two or
 * more clusters, ci95 and kappa_ci account for the correlation within clusters (module comment).
 * Without clusters the output is the independent-pairs analysis.
 */
export function agreement(pairs: ReadonlyArray<AgreementPair>, ci = 0.95): AgreementResult {
  const clustered = clusterAgreement(pairs, ci);
  const table = tallyPairs(pairs.map(({ sim, real }) => ({ a: sim, b: real })));
  const { both, onlyA: simOnly, onlyB: realOnly, neither } = table;
  const n = pairs.length;
  const agree = both + neither;
  const kappa = cohenKappa(table, ci, clustered ? { critical: clustered.critical, designEffect: clustered.interval.design_effect } : {});
  return {
    n,
    agreement_rate: n === 0 ? null : agree / n,
    ci95: clustered ? clustered.interval.ci : wilsonInterval(agree, n, ci),
    ci_level: ci,
    interval_method: clustered ? clustered.interval.interval_method : "wilson",
    cohen_kappa: kappa.kappa,
    kappa_ci: kappa.ci,
    clusters: clustered ? clustered.interval.clusters : clusterCount(pairs),
    design_effect: clustered ? clustered.interval.design_effect : 1,
    sim_success_rate: rate(both + simOnly, n, ci),
    real_success_rate: rate(both + realOnly, n, ci),
    sim_minus_real: pairedDifferenceInterval(table, ci),
    mcnemar: mcnemarExact(simOnly, realOnly),
  };
}

/** Number of distinct clusters when any pair carries one (unlabelled pairs count one each), else null. */
function clusterCount(pairs: ReadonlyArray<AgreementPair>): number | null {
  return pairs.some((p) => p.cluster !== undefined) ? groupByCluster(pairs).length : null;
}

/** Agreements (k) of pairs (n) per cluster; a pair without a cluster is its own. */
function groupByCluster(pairs: ReadonlyArray<AgreementPair>): Array<{ k: number; n: number }> {
  const groups = new Map<string, { k: number; n: number }>();
  pairs.forEach((pair, i) => {
    const { cluster } = pair;
    if (cluster !== undefined && typeof cluster !== "string" && !(typeof cluster === "number" && Number.isFinite(cluster))) {
      throw new RangeError(`pair ${i}: cluster must be a string or a finite number; got ${String(cluster)}`);
    }
    // Typed keys, so cluster 1 and cluster "1" stay apart; unlabelled pairs get unique keys.
    const key = pair.cluster === undefined ? `#${i}` : `${typeof pair.cluster}:${pair.cluster}`;
    const group = groups.get(key) ?? { k: 0, n: 0 };
    group.n++;
    if (pair.sim === pair.real) group.k++;
    groups.set(key, group);
  });
  return [...groups.values()];
}

/** The cluster-aware agreement interval, or null when the pairs carry no clusters or only one. */
function clusterAgreement(pairs: ReadonlyArray<AgreementPair>, ci: number) {
  if (!pairs.some((p) => p.cluster !== undefined)) return null;
  const interval = clusteredRateInterval(groupByCluster(pairs), ci);
  if (interval.df === null) return null;
  return { interval, critical: tForConfidence(ci, interval.df) };
}
