/**
 * Named reads across an account's runs that billing, the kinds and the scheduler make (the runs list
 * of GET /v1/runs is run-list-repo.ts). JSON fields are read through sql-dialect.ts, so each query
 * runs on SQLite and PostgreSQL alike.
 */
import type { Db } from "./database.js";
import { runRecordOf, type RunRecord, type RunRow } from "./runs-repo.js";
import { jsonText } from "./sql-dialect.js";

/** Ids of the account's runs that may still get episodes (queued, scheduling, running), oldest first. */
export async function listOpenRunIdsOfAccount(db: Db, accountId: string): Promise<string[]> {
  return (await db
    .prepare("SELECT id FROM runs WHERE account_id = ? AND status IN ('queued', 'scheduling', 'running') ORDER BY created, id")
    .all(accountId) as Array<{ id: string }>).map((r) => r.id);
}

/** The account's runs created before `before`, oldest first, as records. */
export async function listRunsOfAccountCreatedBefore(db: Db, accountId: string, before: string): Promise<RunRecord[]> {
  return (await db
    .prepare("SELECT * FROM runs WHERE account_id = ? AND created < ? ORDER BY created, id")
    .all(accountId, before) as RunRow[]).map(runRecordOf);
}

/** The id of the account's most recently completed matrix (with a result) on `task`, created before `createdBefore`, other than `exceptRunId`. */
export async function findPriorCompletedMatrixId(db: Db, q: { accountId: string; exceptRunId: string; createdBefore: string; task: string }): Promise<string | undefined> {
  const row = await db
    .prepare(
      `SELECT id FROM runs
       WHERE account_id = ? AND kind = 'matrix' AND status = 'completed' AND id != ? AND created < ?
         AND ${jsonText(db, "resolved_pins", "task")} = ? AND result IS NOT NULL
       ORDER BY completed DESC, id DESC LIMIT 1`,
    )
    .get(q.accountId, q.exceptRunId, q.createdBefore, q.task) as { id: string } | undefined;
  return row?.id;
}

/** Ids of the account's completed single runs (kind `run`, with a result) on these pins, most recently completed first, at most `limit`. */
export async function listCompletedRunIdsOnPins(db: Db, q: { accountId: string; robot: string; environment: string; task: string; limit: number }): Promise<string[]> {
  return (await db
    .prepare(
      `SELECT id FROM runs
       WHERE account_id = ? AND kind = 'run' AND status = 'completed' AND result IS NOT NULL
         AND ${jsonText(db, "resolved_pins", "robot")} = ? AND ${jsonText(db, "resolved_pins", "environment")} = ?
         AND ${jsonText(db, "resolved_pins", "task")} = ?
       ORDER BY completed DESC, id DESC LIMIT ?`,
    )
    .all(q.accountId, q.robot, q.environment, q.task, q.limit) as Array<{ id: string }>).map((r) => r.id);
}

/** Queued or scheduling runs none of whose episodes has been assigned yet (attempt 0 everywhere). */
export async function listRunsAwaitingFirstEpisode(db: Db): Promise<Array<{ id: string; priority: string; created: string }>> {
  return await db
    .prepare(
      `SELECT id, priority, created FROM runs r WHERE status IN ('queued', 'scheduling')
       AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.run_id = r.id AND e.attempt > 0)`,
    )
    .all() as Array<{ id: string; priority: string; created: string }>;
}
