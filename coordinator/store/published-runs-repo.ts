/**
 * Whether a run is published: completed, submitted with `publish: "leaderboard"` by an account that is
 * opted in now, its recordings not purged, not a task pilot (the rule of leaderboards/published-results.ts).
 * Anyone may read such a run's figures; every other run is its own account's alone.
 */
import type { Db } from "./database.js";
import type { RunRow } from "./runs-repo.js";
import { jsonIsTrue, jsonText } from "./sql-dialect.js";

/** True when `runId` is a published run (see above); false for an unknown id. */
export async function isPublishedRun(db: Db, runId: string): Promise<boolean> {
  return await db.prepare(
    `SELECT 1 FROM runs r JOIN accounts a ON a.id = r.account_id
     WHERE r.id = ? AND r.status = 'completed' AND ${jsonText(db, "r.request", "publish")} = 'leaderboard' AND a.leaderboard_opt_in = 1
       AND NOT EXISTS (SELECT 1 FROM purges p WHERE p.run_id = r.id)
       AND NOT ${jsonIsTrue(db, "r.plan", "pilot")}`,
  ).get(runId) !== undefined;
}

/** Every published run (see above), most recently completed first, with its account's leaderboard name (null when it has none). */
export async function listPublishedRunRows(db: Db): Promise<Array<RunRow & { account_name: string | null }>> {
  return await db.prepare(
    `SELECT r.*, a.leaderboard_name AS account_name FROM runs r JOIN accounts a ON a.id = r.account_id
     WHERE r.status = 'completed' AND ${jsonText(db, "r.request", "publish")} = 'leaderboard' AND a.leaderboard_opt_in = 1
       AND NOT EXISTS (SELECT 1 FROM purges p WHERE p.run_id = r.id)
       AND NOT ${jsonIsTrue(db, "r.plan", "pilot")}
     ORDER BY r.completed DESC, r.id`,
  ).all() as Array<RunRow & { account_name: string | null }>;
}
