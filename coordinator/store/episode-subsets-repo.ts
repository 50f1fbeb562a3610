/**
 * Reads of a part of a run's episodes, for the paths that run once per episode (a finish, an
 * assignment): what they decide from is a phase, a month, the episodes in flight or the next pending
 * one, never the whole run, so their cost does not grow with the run's size. Whole-run reads
 * (`listEpisodeRecords`, episodes-repo.ts) are for results, reports and exports, once per run or per
 * request.
 */
import type { Db } from "./database.js";
import { episodeRecordOf, type EpisodeRecord, type EpisodeRow } from "./episodes-repo.js";
import { inIntegersOfJsonParam, jsonText } from "./sql-dialect.js";

/**
 * The `done` episodes of one unit of the run whose `assign.phase` is `phase`, from index `fromIndex`
 * on, by index: the evidence of a threshold run's current test (kinds/threshold.ts).
 */
export async function listDoneEpisodesOfPhase(db: Db, runId: string, unit: number, phase: string, fromIndex: number): Promise<EpisodeRecord[]> {
  const rows = await db.prepare(
    `SELECT * FROM episodes WHERE run_id = ? AND unit = ? AND status = 'done' AND idx >= ? AND ${jsonText(db, "assign", "phase")} = ? ORDER BY idx`,
  ).all(runId, unit, fromIndex, phase) as EpisodeRow[];
  return rows.map(episodeRecordOf);
}

/**
 * The episodes of the run finished in the UTC month `month` (`YYYY-MM`), or, not finished, assigned
 * in it, by index: exactly those whose `(finished_at ?? assigned_at)` starts with `month`.
 */
export async function listEpisodeRecordsOfMonth(db: Db, runId: string, month: string): Promise<EpisodeRecord[]> {
  const rows = await db.prepare(
    "SELECT * FROM episodes WHERE run_id = ? AND substr(COALESCE(finished_at, assigned_at), 1, 7) = ? ORDER BY idx",
  ).all(runId, month) as EpisodeRow[];
  return rows.map(episodeRecordOf);
}

/** The units of the run's episodes a cell holds (assigned or running), by index: as many as the cells working on it. */
export async function listUnitsInFlight(db: Db, runId: string): Promise<number[]> {
  const rows = await db.prepare(
    "SELECT unit FROM episodes WHERE run_id = ? AND status IN ('assigned', 'running') ORDER BY idx",
  ).all(runId) as Array<{ unit: number | null }>;
  return rows.map((r) => r.unit ?? 0);
}

/** The unit of the run's pending episode of the lowest index; undefined when none is pending. */
export async function firstPendingUnit(db: Db, runId: string): Promise<number | undefined> {
  const row = await db.prepare("SELECT unit FROM episodes WHERE run_id = ? AND status = 'pending' ORDER BY idx LIMIT 1").get(runId) as { unit: number | null } | undefined;
  return row ? row.unit ?? 0 : undefined;
}

/**
 * What the budget guard decides a capped run's room from, in one statement (so one snapshot on both
 * engines): per unit, the engine's sum of duration_s + reset_s over the finished episodes (`done` or
 * `unlabelled`), with the sum of their absolute values and the count, which bound the sum's rounding
 * error; the units in flight (assigned or running) and the episodes with interruptions, with their
 * index; and the pending episode of the lowest index. Rows in no particular order.
 */
export interface RunMoneyPart {
  part: "finished" | "flight" | "interrupted" | "pending";
  unit: number;
  idx: number | null;
  seconds: number | null;
  abs_seconds: number | null;
  terms: number | null;
  interruptions: string | null;
}

export async function readRunMoneyParts(db: Db, runId: string): Promise<RunMoneyPart[]> {
  const columns = (part: string, rest: string) => `'${part}' AS part, COALESCE(unit, 0) AS unit, ${rest}`;
  const none = "CAST(NULL AS DOUBLE PRECISION)";
  return await db.prepare(`
    SELECT ${columns("finished", "CAST(NULL AS BIGINT) AS idx")},
           SUM(COALESCE(duration_s, 0) + COALESCE(reset_s, 0)) AS seconds,
           SUM(ABS(COALESCE(duration_s, 0)) + ABS(COALESCE(reset_s, 0))) AS abs_seconds,
           COUNT(*) AS terms, CAST(NULL AS TEXT) AS interruptions
      FROM episodes WHERE run_id = @runId AND status IN ('done', 'unlabelled') GROUP BY COALESCE(unit, 0)
    UNION ALL
    SELECT ${columns("flight", "idx")}, ${none}, ${none}, CAST(NULL AS BIGINT), CAST(NULL AS TEXT)
      FROM episodes WHERE run_id = @runId AND status IN ('assigned', 'running')
    UNION ALL
    SELECT ${columns("interrupted", "idx")}, ${none}, ${none}, CAST(NULL AS BIGINT), interruptions
      FROM episodes WHERE run_id = @runId AND interruptions NOT IN ('[]', '')
    UNION ALL
    SELECT * FROM (
      SELECT ${columns("pending", "idx")}, ${none}, ${none}, CAST(NULL AS BIGINT), CAST(NULL AS TEXT)
        FROM episodes WHERE run_id = @runId AND status = 'pending' ORDER BY idx LIMIT 1
    ) AS first_pending`).all({ runId }) as RunMoneyPart[];
}

/** An episode as the meters and the budget guard read it. */
export interface MoneyRow {
  unit: number;
  status: EpisodeRow["status"];
  duration_s: number | null;
  reset_s: number | null;
  interruptions: string;
}

/**
 * Every episode of the run that metered something or may still (not cancelled, or interrupted), by
 * index, with only the columns money is computed from: the budget guard's exact reading when the
 * engine's sums of `readRunMoneyParts` fall too near a rounding boundary to round as the meters'
 * own sums would.
 */
export async function listMoneyRows(db: Db, runId: string): Promise<MoneyRow[]> {
  const rows = await db.prepare(
    "SELECT unit, status, duration_s, reset_s, interruptions FROM episodes WHERE run_id = ? AND (status <> 'cancelled' OR interruptions NOT IN ('[]', '')) ORDER BY idx",
  ).all(runId) as Array<MoneyRow & { unit: number | null }>;
  return rows.map((r) => ({ ...r, unit: r.unit ?? 0 }));
}

/** Up to `limit` of the run's pending episodes from index `fromIdx` on, lowest index first: their index and unit. */
export async function listPendingUnitsFrom(db: Db, runId: string, fromIdx: number, limit: number): Promise<Array<{ idx: number; unit: number }>> {
  const rows = await db.prepare(
    "SELECT idx, unit FROM episodes WHERE run_id = ? AND status = 'pending' AND idx >= ? ORDER BY idx LIMIT ?",
  ).all(runId, fromIdx, limit) as Array<{ idx: number; unit: number | null }>;
  return rows.map((r) => ({ idx: r.idx, unit: r.unit ?? 0 }));
}

/**
 * What the hard monthly budget's check after a metered episode decides from (billing/month-spend.ts), in
 * one statement: per run of the account created before `before` and unit, the engine's sum of
 * duration_s + reset_s over the episodes finished (`done` or `unlabelled`) in [`from`, `before`), with
 * the sum of absolute values and the count; every interrupted episode of those runs with its
 * interruptions (their months are read from each entry); and how many finished episodes of those runs
 * have a `finished_at` that is not a UTC timestamp of the form the coordinator writes
 * (`YYYY-MM-DDTHH:MM:SS.sssZ`), for which a comparison of text would not be one of instants.
 */
export interface AccountMonthPart {
  part: "finished" | "interrupted" | "unusual";
  run_id: string | null;
  created: string | null;
  unit: number | null;
  seconds: number | null;
  abs_seconds: number | null;
  terms: number | null;
  interruptions: string | null;
}

export async function readAccountMonthParts(db: Db, accountId: string, from: string, before: string): Promise<AccountMonthPart[]> {
  const runs = "runs r JOIN episodes e ON e.run_id = r.id WHERE r.account_id = @accountId AND r.created < @before";
  const none = "CAST(NULL AS DOUBLE PRECISION)";
  return await db.prepare(`
    SELECT 'finished' AS part, e.run_id AS run_id, r.created AS created, COALESCE(e.unit, 0) AS unit,
           SUM(COALESCE(e.duration_s, 0) + COALESCE(e.reset_s, 0)) AS seconds,
           SUM(ABS(COALESCE(e.duration_s, 0)) + ABS(COALESCE(e.reset_s, 0))) AS abs_seconds,
           COUNT(*) AS terms, CAST(NULL AS TEXT) AS interruptions
      FROM ${runs} AND e.status IN ('done', 'unlabelled') AND e.finished_at >= @from AND e.finished_at < @before
     GROUP BY e.run_id, r.created, COALESCE(e.unit, 0)
    UNION ALL
    SELECT 'interrupted', e.run_id, r.created, COALESCE(e.unit, 0), ${none}, ${none}, CAST(NULL AS BIGINT), e.interruptions
      FROM ${runs} AND e.interruptions NOT IN ('[]', '')
    UNION ALL
    SELECT 'unusual', CAST(NULL AS TEXT), CAST(NULL AS TEXT), CAST(NULL AS BIGINT), ${none}, ${none}, COUNT(*), CAST(NULL AS TEXT)
      FROM ${runs} AND e.status IN ('done', 'unlabelled') AND e.finished_at IS NOT NULL
       AND (length(e.finished_at) <> 24 OR substr(e.finished_at, 11, 1) <> 'T' OR substr(e.finished_at, 24, 1) <> 'Z')`,
  ).all({ accountId, from, before }) as AccountMonthPart[];
}

/**
 * Pair index -> the cell that holds or ran an episode of that pair (any status but pending), for the
 * `pairs` of a run whose pairs are blocked by cell (EpisodeAssign.block), the first such episode by index:
 * the scheduler asks for the pairs of the pending episodes it offers, at every pass (it read every pair of
 * the run there before). A pair's
 * episodes are indexes 2 × pair and 2 × pair + 1 (kinds/compare.ts plans them so), read by the run's index
 * on (run_id, idx); each row's own `assign.pair` is checked, so a run planned otherwise finds no cell
 * rather than a wrong one.
 */
export async function listCellsOfPairs(db: Db, runId: string, pairs: readonly number[]): Promise<Map<number, string>> {
  const cells = new Map<number, string>();
  if (pairs.length === 0) return cells;
  const wanted = new Set(pairs);
  const rows = await db.prepare(
    `SELECT ${jsonText(db, "assign", "pair")} AS pair, cell_id FROM episodes
      WHERE run_id = ? AND ${inIntegersOfJsonParam(db, "idx")} AND status <> 'pending' AND cell_id IS NOT NULL ORDER BY idx`,
  ).all(runId, JSON.stringify([...wanted].flatMap((pair) => [2 * pair, 2 * pair + 1]))) as Array<{ pair: string | number | null; cell_id: string }>;
  for (const row of rows) {
    const pair = row.pair === null ? undefined : Number(row.pair);
    if (pair !== undefined && wanted.has(pair) && !cells.has(pair)) cells.set(pair, row.cell_id);
  }
  return cells;
}
