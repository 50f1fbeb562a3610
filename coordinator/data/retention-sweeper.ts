/**
 * The retention sweeper: periodically purges stored artifacts older than their run's
 * `data.retention` (counted from when each file was stored), one receipt per run and sweep, and
 * ends policy models past their own retention (coordinator/models/model-retention.ts). The
 * artifact route applies the same rule on read, so an expired file answers 410 even before a
 * sweep removes it.
 */
import type { Db } from "../store/database.js";
import { sweepModels } from "../models/model-retention.js";
import { isPastRetention, purgeRunArtifacts, retentionOfRequest } from "./purge.js";
import { jsonText } from "../store/sql-dialect.js";

export const DEFAULT_RETENTION_SWEEP_MS = 3_600_000;

/** Purges what is past retention now; returns the number of artifacts purged. */
export function sweepRetention(db: Db, artifactsDir: string, now: Date): number {
  const rows = db
    .prepare(
      `SELECT a.episode_id, a.kind, a.stored_at, r.id AS run_id, r.account_id, ${jsonText(db, "r.request", "data", "retention")} AS retention FROM artifacts a
       JOIN runs r ON r.id = a.run_id WHERE a.status = 'stored'`,
    )
    .all() as Array<{ episode_id: string; kind: string; stored_at: string | null; run_id: string; account_id: string; retention: string | null }>;
  const expiredByRun = new Map<string, { account_id: string; files: Array<{ episode_id: string; kind: string }> }>();
  for (const row of rows) {
    if (!isPastRetention(row.stored_at, retentionOfRequest({ data: { retention: row.retention ?? undefined } }), now)) continue;
    const entry = expiredByRun.get(row.run_id) ?? { account_id: row.account_id, files: [] };
    entry.files.push({ episode_id: row.episode_id, kind: row.kind });
    expiredByRun.set(row.run_id, entry);
  }
  let purged = 0;
  for (const [runId, entry] of expiredByRun) {
    purgeRunArtifacts(db, artifactsDir, { id: runId, account_id: entry.account_id }, "retention", now, entry.files);
    purged += entry.files.length;
  }
  return purged;
}

export function startRetentionSweeper(options: { db: Db; artifactsDir: string; intervalMs?: number; now?: () => Date; logger?: { error(m: string): void } }): () => void {
  const now = options.now ?? (() => new Date());
  const run = () => {
    try {
      sweepRetention(options.db, options.artifactsDir, now());
      sweepModels(options.db, options.artifactsDir, now());
    } catch (error) {
      (options.logger ?? console).error(`retention sweeper failed: ${(error as Error).stack ?? error}`);
    }
  };
  const timer = setInterval(run, options.intervalMs ?? DEFAULT_RETENTION_SWEEP_MS);
  timer.unref();
  // The first sweep runs right after start-up; a stop before it happens must cancel it too.
  const first = setImmediate(run);
  return () => {
    clearImmediate(first);
    clearInterval(timer);
  };
}
