/** Purge receipts: one row of `purges` per deletion of a run's recordings (coordinator/data/purge.ts). */
import type { Db } from "./database.js";

export interface PurgeRow {
  id: string;
  account_id: string;
  run_id: string;
  status: "completed";
  purged_at: string;
  reason: "request" | "retention";
}

export async function insertPurge(db: Db, row: PurgeRow): Promise<void> {
  await db.prepare("INSERT INTO purges (id, account_id, run_id, status, purged_at, reason) VALUES (@id, @account_id, @run_id, @status, @purged_at, @reason)").run(row);
}
