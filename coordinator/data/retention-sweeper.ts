/**
 * The retention sweeper: periodically purges stored artifacts older than their run's
 * `data.retention` (counted from when each file was stored), one receipt per run and sweep, ends
 * policy models past their own retention (coordinator/models/model-retention.ts), and aborts the
 * uploads this coordinator holds for artifacts that will never complete here (stored meanwhile,
 * e.g. by another coordinator after a failover, or purged). The artifact route applies the same
 * rule on read, so an expired file answers 410 even before a sweep removes it.
 */
import { sweepModels } from "../models/model-retention.js";
import type { ObjectStore } from "../storage/object-store.js";
import { findArtifactFile, listStoredArtifactsWithRetention } from "../store/artifacts-repo.js";
import type { Db } from "../store/database.js";
import { isPastRetention, purgeRunArtifacts, retentionOfRequest } from "./purge.js";

export const DEFAULT_RETENTION_SWEEP_MS = 3_600_000;

/** Purges what is past retention now; returns the number of artifacts purged. */
export async function sweepRetention(db: Db, objects: ObjectStore, now: Date): Promise<number> {
  const rows = await listStoredArtifactsWithRetention(db);
  const expiredByRun = new Map<string, { account_id: string; files: Array<{ episode_id: string; kind: string }> }>();
  for (const row of rows) {
    if (!isPastRetention(row.stored_at, retentionOfRequest({ data: { retention: row.retention ?? undefined } }), now)) continue;
    const entry = expiredByRun.get(row.run_id) ?? { account_id: row.account_id, files: [] };
    entry.files.push({ episode_id: row.episode_id, kind: row.kind });
    expiredByRun.set(row.run_id, entry);
  }
  let purged = 0;
  for (const [runId, entry] of expiredByRun) {
    await purgeRunArtifacts(db, objects, { id: runId, account_id: entry.account_id }, "retention", now, entry.files);
    purged += entry.files.length;
  }
  return purged;
}

/**
 * Aborts the open uploads of this coordinator's spool whose artifact is no longer pending (or no
 * longer exists); returns how many. Keys are `<run_id>/<episode_id>/<file_name>`.
 */
export async function sweepUploads(db: Db, objects: ObjectStore): Promise<number> {
  let aborted = 0;
  for (const upload of await objects.listUploads("")) {
    const segments = upload.key.split("/");
    if (segments.length !== 3) continue; // not an episode's artifact
    const [runId, episodeId, fileName] = segments;
    const row = await findArtifactFile(db, runId, episodeId, fileName);
    if (row?.status === "pending") continue;
    await objects.abortUpload(upload.key, upload.uploadId);
    aborted++;
  }
  return aborted;
}

export function startRetentionSweeper(options: { db: Db; objects: ObjectStore; intervalMs?: number; now?: () => Date; logger?: { error(m: string): void } }): () => Promise<void> {
  const now = options.now ?? (() => new Date());
  let running: Promise<void> | undefined;
  const run = () => {
    // A sweep still deleting (a slow bucket) is not overlapped by the next one.
    running ??= (async () => {
      try {
        await sweepRetention(options.db, options.objects, now());
        await sweepModels(options.db, options.objects, now());
        await sweepUploads(options.db, options.objects);
      } catch (error) {
        (options.logger ?? console).error(`retention sweeper failed: ${(error as Error).stack ?? error}`);
      }
    })().finally(() => (running = undefined));
  };
  const timer = setInterval(run, options.intervalMs ?? DEFAULT_RETENTION_SWEEP_MS);
  timer.unref();
  // The first sweep runs right after start-up; a stop before it happens must cancel it too.
  const first = setImmediate(run);
  return async () => {
    clearImmediate(first);
    clearInterval(timer);
    await running;
  };
}
