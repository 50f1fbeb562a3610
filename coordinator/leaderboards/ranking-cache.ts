/**
 * The tier rankings of leaderboards, kept per board revision: ranking a board computes a beta-binomial
 * posterior per entry (a few ms each) and a posterior difference per pair, and anonymous readers GET
 * boards far more often than they change. A board's revision is a hash of exactly what its ranking
 * reads (each entry's id, counts per cell and recorded prior, and the options), so a new result, an
 * opt-out or a purge changes it and the next read ranks afresh. Bounded: the least recently used
 * board is dropped beyond `boardsKept`.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../json/canonical-json.js";
import { rankEntries, type LeaderboardEntry, type LeaderboardRanking } from "../stats/leaderboard-tiers.js";

export interface RankingCache {
  /** The board's ranking of `entries`, from the cache when the board's revision has not changed. */
  rank(boardId: string, entries: ReadonlyArray<LeaderboardEntry>): LeaderboardRanking;
  /** Rankings computed (not served from the cache) so far: for tests and metrics. */
  readonly computed: number;
}

/** A cache of at most `boardsKept` boards' rankings. */
export function createRankingCache(boardsKept: number): RankingCache {
  if (!(Number.isInteger(boardsKept) && boardsKept > 0)) throw new RangeError(`boardsKept must be a positive integer; got ${boardsKept}`);
  const kept = new Map<string, { revision: string; ranking: LeaderboardRanking }>();
  let computed = 0;
  return {
    rank(boardId, entries) {
      const revision = createHash("sha256").update(canonicalJson(entries as unknown as object)).digest("hex");
      const hit = kept.get(boardId);
      if (hit && hit.revision === revision) {
        kept.delete(boardId);
        kept.set(boardId, hit);
        return hit.ranking;
      }
      const ranking = rankEntries(entries);
      computed += 1;
      kept.delete(boardId);
      kept.set(boardId, { revision, ranking });
      while (kept.size > boardsKept) kept.delete(kept.keys().next().value as string);
      return ranking;
    },
    get computed() {
      return computed;
    },
  };
}
