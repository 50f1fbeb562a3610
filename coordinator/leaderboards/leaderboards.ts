/**
 * Leaderboards as the API shows them (docs/api.md, "Leaderboards"), built on read from the published
 * results (published-results.ts), so opting out, a purge or a new run shows at once:
 * - entries ordered by the lower end of their 95% interval and grouped into tiers that are only
 *   separated when a test controlling the family-wise error says so (coordinator/stats/leaderboard-tiers.ts);
 * - where paired compares of published policies exist on the board, a Bradley-Terry fit of their
 *   pairwise outcomes with 95% intervals (coordinator/stats/bradley-terry.ts).
 */
import { fitBradleyTerry, type BradleyTerryFit, type PairwiseComparison } from "../stats/bradley-terry.js";
import { rankEntries, type LeaderboardRanking } from "../stats/leaderboard-tiers.js";
import type { RankingCache } from "./ranking-cache.js";
import { wilsonInterval } from "../stats/wilson.js";
import type { Db } from "../store/database.js";
import { collectPublished, type BoardPins, type PublishedPairs, type PublishedResult } from "./published-results.js";

export interface LeaderboardEntryView {
  rank: number;
  tier: number;
  policy_name: string;
  account: string;
  run_id: string;
  run_kind: string;
  n: number;
  successes: number;
  success_rate: number;
  ci95: [number, number];
  interval_method: string;
  /** Suite boards: per task revision. */
  tasks?: Array<{ task: string; environment: string; n: number; success_rate: number; ci95: [number, number] }>;
  completed: string;
  report_url: string;
}

export interface LeaderboardView {
  id: string;
  object: "leaderboard";
  kind: "suite" | "task";
  title: string;
  pins: BoardPins;
  updated: string;
  entries: LeaderboardEntryView[];
  ranking: { tiers: number; rule: LeaderboardRanking["rule"]; boundaries: LeaderboardRanking["boundaries"] };
  bradley_terry: (BradleyTerryFit & { note: string }) | null;
}

function titleOf(pins: BoardPins): string {
  const where = pins.environment ? ` in ${pins.environment}` : "";
  return `${pins.subject} on ${pins.robot}${where}${pins.instructions === "held_out" ? " (held-out instructions)" : ""}`;
}

/** Each policy in a pairwise fit is named by its account, so two accounts' same-named policies stay apart. */
const contestant = (account: string, policy: string) => `${account} / ${policy}`;

function bradleyTerryOf(pairs: readonly PublishedPairs[], accountOf: Map<string, string>): LeaderboardView["bradley_terry"] {
  if (pairs.length === 0) return null;
  const comparisons: PairwiseComparison[] = pairs.map((p) => {
    const account = accountOf.get(p.runId)!;
    let winsA = 0, winsB = 0, ties = 0;
    for (const [a, b] of p.pairs) {
      if (a && !b) winsA++;
      else if (b && !a) winsB++;
      else ties++;
    }
    return { a: contestant(account, p.policies[0]), b: contestant(account, p.policies[1]), winsA, winsB, ties };
  });
  return {
    ...fitBradleyTerry(comparisons),
    note: "strengths from the paired compare runs published on this board: each pair of episodes from the same seed is a game; ties (both succeed or both fail) carry no information about who is stronger",
  };
}

function boardOf(id: string, results: readonly PublishedResult[], pairs: readonly PublishedPairs[], baseUrl: string, cache?: RankingCache): LeaderboardView {
  const byEntry = new Map(results.map((r) => [`${r.runId}:${r.policyName}`, r]));
  // Each entry under the prior its own run recorded, so an entry's interval matches its run's headline.
  const input = [...byEntry].map(([key, r]) => ({ id: key, k: r.counts.k, n: r.counts.n, clusters: r.counts.clusters.map(({ k, n }) => ({ k, n })), prior: r.prior }));
  const ranking = cache ? cache.rank(id, input) : rankEntries(input);
  const entries = ranking.entries.map((ranked): LeaderboardEntryView => {
    const r = byEntry.get(ranked.id)!;
    return {
      rank: ranked.rank,
      tier: ranked.tier,
      policy_name: r.policyName,
      account: r.accountName,
      run_id: r.runId,
      run_kind: r.kind,
      n: ranked.n,
      successes: ranked.k,
      success_rate: ranked.rate,
      ci95: ranked.ci95,
      interval_method: ranked.interval_method,
      ...(r.tasks.length > 0 ? {
        tasks: r.tasks.map((t) => ({ task: t.task, environment: t.environment, n: t.n, success_rate: t.n > 0 ? t.k / t.n : 0, ci95: wilsonInterval(t.k, t.n) })),
      } : {}),
      completed: r.completed,
      report_url: `${baseUrl}/v1/leaderboards/${id}/entries/${r.runId}/report`,
    };
  });
  const accountOf = new Map(results.map((r) => [r.runId, r.accountName]));
  return {
    id,
    object: "leaderboard",
    kind: results[0]!.board.kind,
    title: titleOf(results[0]!.board),
    pins: results[0]!.board,
    updated: results.map((r) => r.completed).sort().at(-1)!,
    entries,
    ranking: { tiers: ranking.tiers, rule: ranking.rule, boundaries: ranking.boundaries },
    bradley_terry: bradleyTerryOf(pairs, accountOf),
  };
}

/**
 * Every board with at least one published result, most recently updated first. With `cache`, a board's
 * tier ranking is recomputed only when the board changed (ranking-cache.ts).
 */
export async function buildLeaderboards(db: Db, baseUrl: string, cache?: RankingCache): Promise<LeaderboardView[]> {
  const { results, pairs } = await collectPublished(db);
  const ids = [...new Set(results.map((r) => r.boardId))];
  return ids
    .map((id) => boardOf(id, results.filter((r) => r.boardId === id), pairs.filter((p) => p.boardId === id), baseUrl, cache))
    .sort((a, b) => b.updated.localeCompare(a.updated) || a.id.localeCompare(b.id));
}

export async function findLeaderboard(db: Db, baseUrl: string, id: string, cache?: RankingCache): Promise<LeaderboardView | undefined> {
  return (await buildLeaderboards(db, baseUrl, cache)).find((board) => board.id === id);
}
