/**
 * Deleting a run's recordings: on request (DELETE /v1/data/{run_id}) or when they pass the run's
 * `data.retention` (the retention sweeper). The rows are marked `purged` first, so from that moment
 * every artifact URL answers 410 retention_expired; then the objects are deleted from the artifact
 * store (on request: everything under `<run_id>/`, and the run's unfinished uploads are aborted),
 * and the run's exports are expired and deleted with them.
 *
 * On request the rows are marked a page of PURGE_PAGE_EPISODES episodes at a time, each page in a
 * transaction of its own under the run's lock, with a turn of the event loop between pages (on SQLite
 * a statement runs synchronously: a 10,000-episode run's 40,000 rows marked in one piece held the loop
 * about half a second), and the receipt is recorded after the last page. Not one transaction: from the
 * first page on, the run's marked files answer 410 while the rest still serve, as they would have until
 * the purge began; a purge cut short (a restart) leaves no receipt, and repeating it marks the rest.
 *
 * NOTE: deleting runs after the receipt is recorded. If the store fails half way (a bucket that
 * cannot be reached), the error reaches the caller and a purge on request can simply be repeated:
 * it deletes the run's prefix again.
 */
import { artifactKey } from "../artifacts/artifact-store.js";
import { randomBase62 } from "../auth/api-keys.js";
import { retentionHours } from "../runs/run-request.js";
import type { ObjectStore } from "../storage/object-store.js";
import type { Db } from "../store/database.js";
import { expireRunExports } from "./export-files.js";
import { lockRun } from "../store/runs-repo.js";
import { listUnpurgedArtifactsOfRun, markArtifactPurged } from "../store/artifacts-repo.js";
import { listEpisodeIdsPage, markArtifactsOfEpisodesPurged } from "../store/done-episodes-repo.js";
import { nextTurn } from "../async/next-turn.js";
import { insertPurge, type PurgeRow } from "../store/purges-repo.js";
import { transact } from "../store/tx.js";

export type { PurgeRow } from "../store/purges-repo.js";

/** Episodes whose artifact rows a purge on request marks in one transaction (4 rows each, typically). */
export const PURGE_PAGE_EPISODES = 100;

/** Hours of a run's `data.retention` (default 30 d when absent or unreadable). */
export function retentionOfRequest(request: Record<string, unknown>): number {
  const retention = (request as { data?: { retention?: unknown } }).data?.retention;
  return (typeof retention === "string" ? retentionHours(retention) : undefined) ?? 30 * 24;
}

/** True when an artifact stored at `storedAt` is past a retention of `hours` at `now`. */
export function isPastRetention(storedAt: string | null, hours: number, now: Date): boolean {
  return storedAt !== null && now.getTime() >= Date.parse(storedAt) + hours * 3_600_000;
}

/**
 * Purges every artifact of the run (all of them, or only `episodeFiles` when given), records a
 * receipt and deletes the objects. Returns the receipt.
 */
export async function purgeRunArtifacts(
  db: Db, objects: ObjectStore, run: { id: string; account_id: string }, reason: PurgeRow["reason"], now: Date,
  only?: Array<{ episode_id: string; kind: string }>,
): Promise<PurgeRow> {
  const receipt: PurgeRow = { id: `purge_${randomBase62(20)}`, account_id: run.account_id, run_id: run.id, status: "completed", purged_at: now.toISOString(), reason };
  if (only) {
    // The retention sweeper's: the files it found past retention (a background pass, not a request).
    const files = await transact(db, async (tx) => {
      await lockRun(tx, run.id);
      const rows = await listUnpurgedArtifactsOfRun(tx, run.id);
      // A set, not a search of `only` per row: a run whose files all expire together (40,000 of a 10,000-episode
      // run) would otherwise compare every row with every file.
      const wanted = new Set(only.map((o) => `${o.episode_id}\n${o.kind}`));
      const chosen = rows.filter((r) => wanted.has(`${r.episode_id}\n${r.kind}`));
      for (const row of chosen) await markArtifactPurged(tx, row.episode_id, row.kind);
      await insertPurge(tx, receipt);
      return chosen;
    });
    for (const f of files) await objects.delete(artifactKey({ runId: run.id, episodeId: f.episode_id, fileName: f.file_name }));
  } else {
    for (let afterIdx = -1; ;) {
      const page = await listEpisodeIdsPage(db, run.id, afterIdx, PURGE_PAGE_EPISODES);
      await transact(db, async (tx) => {
        await lockRun(tx, run.id);
        await markArtifactsOfEpisodesPurged(tx, page.map((e) => e.id));
      });
      if (page.length < PURGE_PAGE_EPISODES) break;
      afterIdx = page[page.length - 1]!.idx;
      await nextTurn();
    }
    await insertPurge(db, receipt);
    const prefix = `${run.id}/`;
    for (const upload of await objects.listUploads(prefix)) await objects.abortUpload(upload.key, upload.uploadId);
    await objects.deletePrefix(prefix);
  }
  // An export holds the recordings: it goes with them.
  await expireRunExports(db, objects, run.id, reason === "request" ? "purged" : "retention");
  return receipt;
}

/** The API's Purge receipt. */
export function purgeReceiptView(row: PurgeRow): Record<string, unknown> {
  return { object: "purge_receipt", id: row.id, run_id: row.run_id, status: row.status, purged_at: row.purged_at };
}
