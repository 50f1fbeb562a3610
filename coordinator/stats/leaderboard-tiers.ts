/**
 * A leaderboard's order and tiers, claiming no more than the counts support. Entries are policies
 * evaluated on the same pins; each has k successes of n episodes, over one or more cells.
 *
 * Each entry's rate is the headline's model-level rate μ (beta-binomial-rate.ts): its posterior from
 * the entry's per-cell counts under the prior its run's headline used (DEFAULT_HEADLINE_PRIOR unless
 * given), so an entry's ci95 is the run's own headline. An entry given without cells is one cell, as
 * the headline counts episodes whose cell is unknown (result-summary.ts).
 *
 * Order: by the lower end of that 95% interval, then higher rate, larger n, id.
 *
 * Tiers (`tier_rule: "intersection-union-posterior-difference"`): a tier boundary between ranks b and
 * b + 1 is declared when for EVERY entry u above it and EVERY entry v below it the posterior
 * probability that u is not better, P(μ_u ≤ μ_v | data), is at most c = κ · alpha / (2 (m − 1)), m
 * entries, κ = TIER_CALIBRATION = 0.6 (the two posteriors independent: beta-binomial-difference.ts). Tiers are the runs of ranks between
 * declared boundaries. A boundary reports the largest such probability over the pairs it separates.
 *
 * Error rate: P(some two entries placed in different tiers have, in truth, equal rates or the
 * lower-tier one's rate is higher) <= alpha. The intersection-union argument (Berger 1982) of the
 * earlier Fisher rule carries over unchanged: a false split needs one of at most 2 (m − 1) fixed
 * true-null pairs to pass its test, so the union is bounded by 2 (m − 1) times the chance that one
 * true-null pair passes. A posterior probability is not a p-value: when cells differ more than the
 * ICC prior expects, P(μ_u ≤ μ_v) falls below t more often than t. At ICC 0.1 on 3–4 cells a
 * threshold of alpha / (2 (m − 1)) gave a family-wise false split of 0.04–0.07 for two equal entries;
 * κ = 0.6 brings it to 0.02–0.04 (seeded simulation, docs/leaderboards.md; `npm run bench -- stats`).
 */

import { betaBinomialRateAndPosterior, DEFAULT_HEADLINE_PRIOR, type HeadlinePrior } from "./beta-binomial-rate.js";
import { massOnRateSteps } from "./beta-binomial-difference.js";

/** The share of alpha / (2 (m − 1)) a pair's posterior probability of not being better may reach. */
export const TIER_CALIBRATION = 0.6;

/** One published result on the board: k successes of n episodes, optionally per cell. */
export interface LeaderboardEntry {
  id: string;
  k: number;
  n: number;
  /** Successes and episodes per physical cell; they must add up to k and n. */
  clusters?: ReadonlyArray<{ k: number; n: number }>;
  /** The prior the entry's run headline used; DEFAULT_HEADLINE_PRIOR unless given. */
  prior?: HeadlinePrior;
}

/** Options of {@link rankEntries}. */
export interface RankOptions {
  /** Family-wise error rate of the tier boundaries (see the module comment). Default 0.05. */
  alpha?: number;
  /**
   * Posteriors already computed, by an entry's counts and prior: a caller that ranks many boards of
   * the same few counts (the tier simulation) passes one map to all its calls. The posterior is a pure
   * function of the counts and the prior, so a board ranks the same with or without it.
   */
  posteriors?: PosteriorCache;
}

/** What {@link rankEntries} keeps of an entry's posterior, by counts and prior (see RankOptions.posteriors). */
export type PosteriorCache = Map<string, Omit<Prepared, "entry" | "rate">>;

/** An entry in board order; field names are the wire names. */
export interface RankedEntry {
  id: string;
  k: number;
  n: number;
  rate: number;
  /** The 95% interval the service reports for the rate (the run's headline); the board is ordered by its lower end. */
  ci95: [number, number];
  /** "beta-binomial-posterior", the headline's. */
  interval_method: string;
  /** Cells with at least one episode (1 for an entry given without cells). */
  clusters: number;
  /** 1-based position in the order. */
  rank: number;
  /** 1-based tier; entries in one tier are not claimed to differ. */
  tier: number;
}

/** The decision at the boundary between rank `after_rank` and the next. */
export interface TierBoundary {
  after_rank: number;
  /** Largest posterior probability P(μ_above ≤ μ_below) over the pairs it separates. */
  posterior_not_better: number;
  /** The boundary is declared when posterior_not_better <= the rule's per_pair_level. */
  separated: boolean;
  /** The pair that gave posterior_not_better: the hardest to tell apart across this boundary. */
  closest: { above: string; below: string };
}

/** The rule behind an order and its tiers, to be shown beside the board. */
export interface TierRule {
  order: "ci95-lower-bound";
  tie_break: "rate-desc,n-desc,id";
  tier_rule: "intersection-union-posterior-difference";
  test_method: "beta-binomial-posterior-difference";
  alpha: number;
  /** Largest P(μ_above ≤ μ_below) a pair across a declared boundary may have, 0.6 alpha / (2 (m - 1)). */
  per_pair_level: number;
  error_rate: string;
  description: string;
}

/** A ranked board: entries in order with ranks and tiers, the m - 1 boundary decisions and the rule. */
export interface LeaderboardRanking {
  entries: RankedEntry[];
  boundaries: TierBoundary[];
  tiers: number;
  rule: TierRule;
}

const ERROR_RATE =
  "P(some two entries in different tiers have equal true rates, or the lower tier's is higher) <= alpha, " +
  "for any true rates (checked by simulation with cells differing, ICC up to 0.1 on 3 and 4 cells)";

const DESCRIPTION =
  "Ordered by the lower end of each entry's 95% interval (its run's model-level headline: beta-binomial posterior over its cells), " +
  "then higher rate, larger n, id. A new tier starts below rank b only when, for every entry ranked b or better and every entry " +
  "ranked below b, the posterior probability that the upper one is not better is at most 0.6 alpha / (2 (m - 1)) " +
  "(0.6 calibrated by simulation so that cells differing more than the prior expects do not raise the error rate); all other entries share a tier.";

interface Prepared {
  entry: LeaderboardEntry;
  rate: number;
  ci: [number, number];
  method: string;
  clusters: number;
  /** Posterior mass of μ on DIFFERENCE_STEPS equal steps. */
  mass: Float64Array;
  /** Index range holding all but a negligible share of `mass`. */
  lo: number;
  hi: number;
  /** suffix[i] = Σ_{j >= i} mass[j]. */
  suffix: Float64Array;
}

function validate(entry: LeaderboardEntry, index: number): void {
  const where = `entry ${index} (${JSON.stringify(entry.id)})`;
  if (typeof entry.id !== "string" || entry.id === "") throw new RangeError(`entry ${index}: id must be a non-empty string; got ${JSON.stringify(entry.id)}`);
  if (!Number.isInteger(entry.n) || entry.n < 1) throw new RangeError(`${where}: n must be a positive integer; got ${entry.n}`);
  if (!Number.isInteger(entry.k) || entry.k < 0 || entry.k > entry.n) throw new RangeError(`${where}: k must be an integer in 0..${entry.n}; got ${entry.k}`);
  if (entry.clusters) {
    const k = entry.clusters.reduce((sum, c) => sum + c.k, 0);
    const n = entry.clusters.reduce((sum, c) => sum + c.n, 0);
    if (k !== entry.k || n !== entry.n) throw new RangeError(`${where}: clusters add up to ${k}/${n}, not k/n = ${entry.k}/${entry.n}`);
  }
}

function prepare(entry: LeaderboardEntry, cache: PosteriorCache | undefined): Prepared {
  const used = (entry.clusters ?? [{ k: entry.k, n: entry.n }]).filter((c) => c.n > 0);
  const prior = entry.prior ?? DEFAULT_HEADLINE_PRIOR;
  if (!cache) return { entry, rate: entry.k / entry.n, ...posteriorOf(used, prior) };
  const key = JSON.stringify([used.map((c) => [c.k, c.n]), prior]);
  let posterior = cache.get(key);
  if (!posterior) cache.set(key, (posterior = posteriorOf(used, prior)));
  return { entry, rate: entry.k / entry.n, ...posterior };
}

/** The headline interval and the posterior of μ on rate steps, normalised, for the cells' counts under `prior`. */
function posteriorOf(used: ReadonlyArray<{ k: number; n: number }>, prior: HeadlinePrior): Omit<Prepared, "entry" | "rate"> {
  const { rate: headline, posterior } = betaBinomialRateAndPosterior(used, { prior });
  const mass = massOnRateSteps(posterior);
  const suffix = new Float64Array(mass.length + 1);
  for (let i = mass.length - 1; i >= 0; i--) suffix[i] = suffix[i + 1] + mass[i];
  const total = suffix[0];
  for (let i = 0; i < suffix.length; i++) suffix[i] /= total;
  for (let i = 0; i < mass.length; i++) mass[i] /= total;
  let lo = 0;
  while (lo < mass.length - 1 && 1 - suffix[lo + 1] < 1e-15) lo++;
  let hi = mass.length - 1;
  while (hi > lo && suffix[hi] < 1e-15) hi--;
  return { ci: headline.ci, method: headline.interval_method, clusters: used.length, mass, lo, hi, suffix };
}

/**
 * P(μ_u ≤ μ_v) for independent step distributions (mass spread evenly within a step, so two values
 * in one step are each other's equal chance): Σ_i a_i (P(Y in a later step) + b_i / 2).
 */
export function probabilityNotGreater(u: Pick<Prepared, "mass" | "lo" | "hi">, v: Pick<Prepared, "mass" | "suffix">): number {
  let sum = 0;
  for (let i = u.lo; i <= u.hi; i++) sum += u.mass[i] * (v.suffix[i + 1] + v.mass[i] / 2);
  return Math.min(1, Math.max(0, sum));
}

/** Board order: ci95 lower bound, then rate, then n (both descending), then id (code-unit order). */
function compareEntries(x: Prepared, y: Prepared): number {
  return (
    y.ci[0] - x.ci[0] ||
    y.rate - x.rate ||
    y.entry.n - x.entry.n ||
    (x.entry.id < y.entry.id ? -1 : x.entry.id > y.entry.id ? 1 : 0)
  );
}

/**
 * Orders a leaderboard's entries and groups them into tiers that the counts can separate; see the
 * module comment for the rule and the error rate it controls. Deterministic: the result does not
 * depend on the order of `entries`. Ids must be unique; n >= 1.
 */
export function rankEntries(entries: ReadonlyArray<LeaderboardEntry>, options: RankOptions = {}): LeaderboardRanking {
  const { alpha = 0.05, posteriors } = options;
  if (!(alpha > 0 && alpha < 0.5)) throw new RangeError(`alpha must be in (0, 0.5); got ${alpha}`);
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    validate(entry, i);
    if (seen.has(entry.id)) throw new RangeError(`entry ${i}: id ${JSON.stringify(entry.id)} appears twice; each policy has one entry per board`);
    seen.add(entry.id);
  });

  const m = entries.length;
  const level = (TIER_CALIBRATION * alpha) / (2 * Math.max(1, m - 1));
  const ordered = entries.map((entry) => prepare(entry, posteriors)).sort(compareEntries);

  // worstBelow[u][b]: the largest P(μ_u ≤ μ_v) over v >= b, for u < b (a suffix maximum per row).
  const boundaries: TierBoundary[] = [];
  const best = new Float64Array(m).fill(-1);
  const bestPair: Array<[number, number]> = new Array(m);
  for (let u = 0; u < m - 1; u++) {
    let rowMax = -1;
    let rowArg = m - 1;
    for (let v = m - 1; v > u; v--) {
      const q = probabilityNotGreater(ordered[u], ordered[v]);
      if (q > rowMax) { rowMax = q; rowArg = v; }
      // Boundary b = v (between positions v − 1 and v) separates u from every v' >= v.
      if (rowMax > best[v] || (rowMax === best[v] && u < bestPair[v][0])) {
        best[v] = rowMax;
        bestPair[v] = [u, rowArg];
      }
    }
  }
  for (let b = 1; b < m; b++) {
    const [u, v] = bestPair[b];
    boundaries.push({
      after_rank: b,
      posterior_not_better: best[b],
      separated: best[b] <= level,
      closest: { above: ordered[u].entry.id, below: ordered[v].entry.id },
    });
  }

  let tier = 1;
  const ranked = ordered.map((p, i): RankedEntry => {
    if (i > 0 && boundaries[i - 1].separated) tier++;
    return {
      id: p.entry.id,
      k: p.entry.k,
      n: p.entry.n,
      rate: p.rate,
      ci95: p.ci,
      interval_method: p.method,
      clusters: p.clusters,
      rank: i + 1,
      tier,
    };
  });

  return {
    entries: ranked,
    boundaries,
    tiers: m === 0 ? 0 : tier,
    rule: {
      order: "ci95-lower-bound",
      tie_break: "rate-desc,n-desc,id",
      tier_rule: "intersection-union-posterior-difference",
      test_method: "beta-binomial-posterior-difference",
      alpha,
      per_pair_level: level,
      error_rate: ERROR_RATE,
      description: DESCRIPTION,
    },
  };
}
