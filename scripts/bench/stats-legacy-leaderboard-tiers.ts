// The leaderboard tier rule before issue 25 item 4 (Fisher at effective counts), kept verbatim for the
// bench to report the new rule beside it (scripts/bench/stats-two-sample.ts). Not used by the service.
/**
 * A leaderboard's order and tiers, claiming no more than the counts support. Entries are policies
 * evaluated on the same pins; each has k successes of n episodes, possibly over several cells.
 *
 * Order: by the lower bound of the 95% interval the service reports for the rate (Wilson, or the
 * clustered `wilson-design-effect-t` interval when cells are given), then higher rate, larger n, id.
 *
 * Tiers (`tier_rule: "intersection-union-fisher-bonferroni"`): a tier boundary between ranks b and
 * b + 1 is declared when EVERY entry above it is shown better than EVERY entry below it, each by a
 * one-sided Fisher exact test at level c = alpha / (2 (m - 1)), m entries. Tiers are the runs of
 * ranks between declared boundaries. A boundary's p-value is the largest of its cross-pair p-values
 * (an intersection-union test: Berger 1982).
 *
 * Guarantee: P(some two entries placed in different tiers have, in truth, equal rates or the
 * lower-tier one's rate is higher) <= alpha, for every configuration of true rates and although
 * the order comes from the data. Proof: list the entries by true rate r(1) >= r(2) >= ... >= r(m).
 * If a declared boundary has a truly-not-better entry above a truly-not-worse one, then either the
 * set above it is not a top set of the true order, and walking down the true order some r(i+1) is
 * above the boundary while r(i) is below (a binary sequence that is not sorted has an adjacent
 * "0, 1"), so the test "r(i+1) better than r(i)" rejected; or it is the true top set with a tie
 * r(b) = r(b+1) across it, so "r(b) better than r(b+1)" rejected. Both are true nulls of fixed
 * pairs, at most 2 (m - 1) of them, each rejecting with probability <= c: the union is <= alpha.
 * Exact for entries without cells (Fisher's test is valid for the composite null p_u <= p_v);
 * approximate for clustered entries (below).
 *
 * Clustered entries: the test uses Rao & Scott's (1992) effective counts n / deff with Korn &
 * Graubard's (1998) degrees-of-freedom factor (z_{1-c} / t_{1-c, G-1})², the same adjustment that
 * makes the reported interval (Wilson at n_eff with a t critical value), taken at the test's level;
 * the effective counts are rounded against the claim (n down; the upper entry's k down, the lower
 * entry's k up) so that Fisher's test applies.
 */

import { clusteredRateInterval } from "../../coordinator/stats/clustered-rate.js";
import { fisherExactLessFast } from "../../coordinator/stats/hypergeometric.js";
import { studentTQuantile } from "../../coordinator/stats/student-t.js";
import { normalQuantile } from "../../coordinator/stats/wilson.js";

/** One published result on the board: k successes of n episodes, optionally per cell. */
export interface LeaderboardEntry {
  id: string;
  k: number;
  n: number;
  /** Successes and episodes per physical cell; they must add up to k and n. */
  clusters?: ReadonlyArray<{ k: number; n: number }>;
}

/** Options of {@link rankEntries}. */
export interface RankOptions {
  /** Family-wise error rate of the tier boundaries (see the module comment). Default 0.05. */
  alpha?: number;
}

/** An entry in board order; field names are the wire names. */
export interface RankedEntry {
  id: string;
  k: number;
  n: number;
  rate: number;
  /** The 95% interval the service reports for the rate; the board is ordered by its lower end. */
  ci95: [number, number];
  /** "wilson", or "wilson-design-effect-t" with two or more non-empty cells. */
  interval_method: string;
  design_effect: number;
  /** Episodes the tier tests count this entry as (n, or the adjusted effective n with cells). */
  test_n: number;
  /** 1-based position in the order. */
  rank: number;
  /** 1-based tier; entries in one tier are not claimed to differ. */
  tier: number;
}

/** The decision at the boundary between rank `after_rank` and the next. */
export interface TierBoundary {
  after_rank: number;
  /** Largest one-sided Fisher p-value of "above better than below" over the pairs it separates. */
  p_value: number;
  /** min(1, 2 (m - 1) p_value): the boundary is declared when this is <= alpha. */
  p_adjusted: number;
  separated: boolean;
  /** The pair whose test gave p_value: the hardest to tell apart across this boundary. */
  closest: { above: string; below: string };
}

/** The rule behind an order and its tiers, to be shown beside the board. */
export interface TierRule {
  order: "ci95-lower-bound";
  tie_break: "rate-desc,n-desc,id";
  tier_rule: "intersection-union-fisher-bonferroni";
  test_method: "fisher-exact-one-sided";
  alpha: number;
  /** One-sided level of each pairwise test, alpha / (2 (m - 1)). */
  per_test_level: number;
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
  "for any true rates (exact without cells; approximate with cells)";

const DESCRIPTION =
  "Ordered by the lower end of each entry's 95% interval (Wilson, or the cell-clustered interval), then higher rate, " +
  "larger n, id. A new tier starts below rank b only when every entry ranked b or better is better than every entry " +
  "ranked below b by a one-sided Fisher exact test at alpha / (2 (m - 1)); all other entries share a tier.";

interface Prepared {
  entry: LeaderboardEntry;
  rate: number;
  interval: ReturnType<typeof clusteredRateInterval>;
}

/** Counts an entry enters the pairwise tests with, rounded against the claim "above beats below". */
interface TestCounts {
  n: number;
  /** Successes when the entry is the upper one of a pair. */
  kAbove: number;
  /** Successes when the entry is the lower one. */
  kBelow: number;
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

/** Board order: ci95 lower bound, then rate, then n (both descending), then id (code-unit order). */
function compareEntries(x: Prepared, y: Prepared): number {
  return (
    y.interval.ci[0] - x.interval.ci[0] ||
    y.rate - x.rate ||
    y.entry.n - x.entry.n ||
    (x.entry.id < y.entry.id ? -1 : x.entry.id > y.entry.id ? 1 : 0)
  );
}

function testCounts(p: Prepared, level: number): TestCounts {
  const { k, n } = p.entry;
  if (p.interval.df === null) return { n, kAbove: k, kBelow: k };
  // Korn & Graubard's adjusted effective n at the test's level: Fisher at this n is to the
  // clustered count what Wilson at n_eff with a t critical value is to the interval.
  const ratio = normalQuantile(1 - level) / studentTQuantile(1 - level, p.interval.df);
  const effective = Math.floor(p.interval.effective_n * ratio * ratio);
  const successes = p.rate * effective;
  return { n: effective, kAbove: Math.floor(successes + 1e-9), kBelow: Math.ceil(successes - 1e-9) };
}

/**
 * Serfling's (1974) bound on the one-sided Fisher p-value of "above beats below", as a log. Given
 * the total successes K of N = n1 + n2 episodes, either sample's successes are a draw without
 * replacement, so P(shortfall >= d) <= exp(-2 d² N / (s (N - s + 1))) for the sample of size s
 * (either one); d is the lower sample's shortfall below its expectation n2 K / N. Cheap, and lets
 * the boundary scan skip pairs that cannot hold a boundary's largest p-value.
 */
function logFisherUpperBound(above: TestCounts, below: TestCounts): number {
  const n1 = above.n;
  const n2 = below.n;
  if (n1 === 0 || n2 === 0) return 0;
  const total = n1 + n2;
  const shortfall = (n2 * (above.kAbove + below.kBelow)) / total - below.kBelow;
  if (shortfall <= 0) return 0;
  return (-2 * shortfall * shortfall * total) / Math.min(n1 * (n2 + 1), n2 * (n1 + 1));
}

/**
 * Orders a leaderboard's entries and groups them into tiers that the counts can separate; see the
 * module comment for the rule and the error rate it controls. Deterministic: the result does not
 * depend on the order of `entries`. Ids must be unique; n >= 1.
 */
export function rankEntries(entries: ReadonlyArray<LeaderboardEntry>, options: RankOptions = {}): LeaderboardRanking {
  const { alpha = 0.05 } = options;
  if (!(alpha > 0 && alpha < 0.5)) throw new RangeError(`alpha must be in (0, 0.5); got ${alpha}`);
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    validate(entry, i);
    if (seen.has(entry.id)) throw new RangeError(`entry ${i}: id ${JSON.stringify(entry.id)} appears twice; each policy has one entry per board`);
    seen.add(entry.id);
  });

  const m = entries.length;
  const level = alpha / (2 * Math.max(1, m - 1));
  const ordered: Prepared[] = entries
    .map((entry) => ({
      entry,
      rate: entry.k / entry.n,
      interval: clusteredRateInterval(entry.clusters ?? [{ k: entry.k, n: entry.n }]),
    }))
    .sort(compareEntries);
  const counts = ordered.map((p) => testCounts(p, level));

  // p[u][v] for u ranked above v, computed on demand: most pairs are pruned by the bound.
  const cache = new Float64Array(m * m).fill(Number.NaN);
  const pValue = (u: number, v: number): number => {
    const at = u * m + v;
    if (Number.isNaN(cache[at])) cache[at] = fisherExactLessFast(counts[u].kAbove, counts[u].n, counts[v].kBelow, counts[v].n);
    return cache[at];
  };

  const boundaries: TierBoundary[] = [];
  for (let b = 1; b < m; b++) {
    // Boundary between positions b - 1 and b (0-based). Its p-value is the largest over the pairs
    // it separates; start from the adjacent pair, usually the largest, so the bound prunes the rest.
    let worst = pValue(b - 1, b);
    let logWorst = Math.log(worst);
    let pair: [number, number] = [b - 1, b];
    for (let u = 0; u < b; u++) {
      for (let v = b; v < m; v++) {
        if (logFisherUpperBound(counts[u], counts[v]) <= logWorst) continue;
        const p = pValue(u, v);
        if (p > worst) {
          worst = p;
          logWorst = Math.log(p);
          pair = [u, v];
        }
      }
    }
    const adjusted = Math.min(1, 2 * (m - 1) * worst);
    boundaries.push({
      after_rank: b,
      p_value: worst,
      p_adjusted: adjusted,
      separated: adjusted <= alpha,
      closest: { above: ordered[pair[0]].entry.id, below: ordered[pair[1]].entry.id },
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
      ci95: p.interval.ci,
      interval_method: p.interval.interval_method,
      design_effect: p.interval.design_effect,
      test_n: counts[i].n,
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
      tier_rule: "intersection-union-fisher-bonferroni",
      test_method: "fisher-exact-one-sided",
      alpha,
      per_test_level: level,
      error_rate: ERROR_RATE,
      description: DESCRIPTION,
    },
  };
}
