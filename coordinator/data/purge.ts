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
 * By retention the files past the cutoff are marked by the same pages of episodes, each page's objects deleted
 * once its transaction has committed; the receipt goes in with the first page that marks any (a sweep cut short
 * has recorded what it purged, and the next sweep purges the rest under a receipt of its own).
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
import { anyArtifactStoredBy, markArtifactsPurgedIfStoredBy } from "../store/artifacts-repo.js";
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

/** Objects a purge by retention deletes at once: each delete waits on the store (the disk's thread pool, a bucket's round trip). */
const DELETES_AT_ONCE = 8;

async function deleteObjects(objects: ObjectStore, keys: readonly string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += DELETES_AT_ONCE) await Promise.all(keys.slice(i, i + DELETES_AT_ONCE).map((key) => objects.delete(key)));
}

/**
 * `mark` on each page of the run's episodes (PURGE_PAGE_EPISODES of them, by index, pending ones too) in a
 * transaction of its own under the run's lock; `committed` with its result once that transaction has committed;
 * a turn of the event loop between pages.
 */
async function byEpisodePages<T>(db: Db, runId: string, mark: (tx: Db, episodeIds: string[]) => Promise<T>, committed?: (result: T) => Promise<void>): Promise<void> {
  for (let afterIdx = -1; ;) {
    const page = await listEpisodeIdsPage(db, runId, afterIdx, PURGE_PAGE_EPISODES);
    const result = await transact(db, async (tx) => {
      await lockRun(tx, runId);
      return await mark(tx, page.map((e) => e.id));
    });
    await committed?.(result);
    if (page.length < PURGE_PAGE_EPISODES) return;
    afterIdx = page[page.length - 1]!.idx;
    await nextTurn();
  }
}

function newReceipt(run: { id: string; account_id: string }, reason: PurgeRow["reason"], now: Date): PurgeRow {
  return { id: `purge_${randomBase62(20)}`, account_id: run.account_id, run_id: run.id, status: "completed", purged_at: now.toISOString(), reason };
}

/** Purges every artifact of the run on request (DELETE /v1/data/{run_id}): records a receipt, deletes the objects. Returns the receipt. */
export async function purgeRunArtifacts(db: Db, objects: ObjectStore, run: { id: string; account_id: string }, now: Date): Promise<PurgeRow> {
  const receipt = newReceipt(run, "request", now);
  await byEpisodePages(db, run.id, (tx, episodeIds) => markArtifactsOfEpisodesPurged(tx, episodeIds));
  await insertPurge(db, receipt);
  const prefix = `${run.id}/`;
  for (const upload of await objects.listUploads(prefix)) await objects.abortUpload(upload.key, upload.uploadId);
  await objects.deletePrefix(prefix);
  // An export holds the recordings: it goes with them.
  await expireRunExports(db, objects, run.id, "purged");
  return receipt;
}

/**
 * Purges the run's files stored at or before `cutoff` (an ISO 8601 instant: now less the run's retention), the
 * retention sweeper's part; returns how many. With any purged, the run's exports expire with them. A run with none
 * costs one index lookup (the count over a 10,000-episode run's 40,000 rows it replaced read 8-12 ms on SQLite).
 */
export async function purgeArtifactsStoredBy(db: Db, objects: ObjectStore, run: { id: string; account_id: string }, cutoff: string, now: Date): Promise<number> {
  if (!await anyArtifactStoredBy(db, run.id, cutoff)) return 0;
  let receipt: PurgeRow | undefined;
  let purged = 0;
  await byEpisodePages(db, run.id, async (tx, episodeIds) => {
    // A file changed since the count (purged on request, stored again) no longer matches and is left.
    const marked = await markArtifactsPurgedIfStoredBy(tx, episodeIds, cutoff);
    const first = marked.length > 0 && !receipt ? newReceipt(run, "retention", now) : undefined;
    if (first) await insertPurge(tx, first);
    return { marked, first };
  }, async ({ marked, first }) => {
    receipt ??= first;
    await deleteObjects(objects, marked.map((f) => artifactKey({ runId: run.id, episodeId: f.episode_id, fileName: f.file_name })));
    purged += marked.length;
  });
  if (purged > 0) await expireRunExports(db, objects, run.id, "retention");
  return purged;
}

/** The API's Purge receipt. */
export function purgeReceiptView(row: PurgeRow): Record<string, unknown> {
  return { object: "purge_receipt", id: row.id, run_id: row.run_id, status: row.status, purged_at: row.purged_at };
}
