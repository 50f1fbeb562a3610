/**
 * Leaderboard rankings are kept per board revision (issue 25 item 4): a GET of an unchanged board does
 * not recompute every entry's posterior; a new count or another recorded prior does.
 */
import assert from "node:assert/strict";
import { createRankingCache } from "../../coordinator/leaderboards/ranking-cache.js";
import { DEFAULT_HEADLINE_PRIOR } from "../../coordinator/stats/beta-binomial-rate.js";
import { rankEntries } from "../../coordinator/stats/leaderboard-tiers.js";

const entries = [
  { id: "a", k: 20, n: 20, clusters: [{ k: 7, n: 7 }, { k: 6, n: 6 }, { k: 7, n: 7 }], prior: DEFAULT_HEADLINE_PRIOR },
  { id: "b", k: 11, n: 20, clusters: [{ k: 4, n: 7 }, { k: 3, n: 6 }, { k: 4, n: 7 }], prior: DEFAULT_HEADLINE_PRIOR },
];
const fitted = { ...DEFAULT_HEADLINE_PRIOR, icc: { family: "beta" as const, parameters: { a: 1, b: 49 } }, source: "fleet:so101/tabletop", fitted_on_runs: 40, fitted_at: "2026-11-01T00:00:00Z" };

describe("leaderboards: rankings kept per board revision", () => {
  it("serves an unchanged board from the cache and ranks it as rankEntries does", () => {
    const cache = createRankingCache(8);
    const first = cache.rank("lb_1", entries);
    const again = cache.rank("lb_1", entries.map((e) => ({ ...e })));
    assert.equal(again, first);
    assert.equal(cache.computed, 1);
    assert.deepEqual(first, rankEntries(entries));
  });

  it("ranks afresh when a count or an entry's recorded prior changes", () => {
    const cache = createRankingCache(8);
    cache.rank("lb_1", entries);
    cache.rank("lb_1", [entries[0], { ...entries[1], k: 12, clusters: [{ k: 5, n: 7 }, { k: 3, n: 6 }, { k: 4, n: 7 }] }]);
    const withPrior = cache.rank("lb_1", entries.map((e) => ({ ...e, prior: fitted })));
    assert.equal(cache.computed, 3);
    // The recorded prior is the one the entry's interval uses: a fleet prior of small ICC narrows it.
    const byDefault = rankEntries(entries).entries[0].ci95;
    assert.ok(withPrior.entries[0].ci95[0] > byDefault[0], `${withPrior.entries[0].ci95} vs ${byDefault}`);
  });

  it("keeps at most the boards it was sized for, dropping the least recently read", () => {
    const cache = createRankingCache(2);
    cache.rank("lb_1", entries);
    cache.rank("lb_2", entries);
    cache.rank("lb_1", entries);
    cache.rank("lb_3", entries);
    cache.rank("lb_1", entries);
    assert.equal(cache.computed, 3);
    cache.rank("lb_2", entries);
    assert.equal(cache.computed, 4);
    assert.throws(() => createRankingCache(0), /boardsKept must be a positive integer; got 0/);
  });
});
