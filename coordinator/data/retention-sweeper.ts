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
import { nextTurn } from "../async/next-turn.js";
import { findArtifactFile } from "../store/artifacts-repo.js";
import type { Db } from "../store/database.js";
import { listRunRetentionsPage } from "../store/runs-repo.js";
import { purgeArtifactsStoredBy, retentionOfRequest } from "./purge.js";

export const DEFAULT_RETENTION_SWEEP_MS = 3_600_000;

/** Runs the retention sweep reads at once; it asks for each one's expired files in turn, a turn of the event loop between runs. */
export const SWEEP_RUNS_PER_PAGE = 200;

/**
 * Purges what is past retention now; returns the number of artifacts purged. Run by run (a page of runs at a time;
 * a run's files past its own cutoff counted, then purged a page of PURGE_PAGE_EPISODES episodes at a time: purge.ts),
 * never the whole store in one read: on SQLite a statement runs on the event loop, and reading every stored artifact
 * at once held it 0.16-0.18 s for one 10,000-episode run and 1.0-1.1 s for five, every sweep.
 */
export async function sweepRetention(db: Db, objects: ObjectStore, now: Date, runsPerPage = SWEEP_RUNS_PER_PAGE): Promise<number> {
  let purged = 0;
  for (let after = ""; ;) {
    const runs = await listRunRetentionsPage(db, after, runsPerPage);
    for (const run of runs) {
      const cutoffMs = now.getTime() - retentionOfRequest({ data: { retention: run.retention ?? undefined } }) * 3_600_000;
      // isPastRetention's rule as a cutoff: a file stored at or before it has expired. Nothing is stored before 1970.
      if (cutoffMs >= 0) purged += await purgeArtifactsStoredBy(db, objects, run, new Date(cutoffMs).toISOString(), now);
      await nextTurn();
    }
    if (runs.length < runsPerPage) return purged;
    after = runs[runs.length - 1]!.id;
  }
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
