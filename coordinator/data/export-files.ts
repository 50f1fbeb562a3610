/**
 * Where prepared archives live, and expiring a run's exports when its recordings go (a purge on
 * request or by retention). A leaf: purge.ts calls it, so it imports nothing that imports purge.
 */
import type { ObjectStore } from "../storage/object-store.js";
import type { Db } from "../store/database.js";
import { listCalibrationExportsOfRun, moveCalibrationExport } from "../store/calibration-exports-repo.js";
import { listRunExports, moveExport } from "../store/exports-repo.js";
import type { ExpiryReason } from "../domain/export-state.js";

/** An archive's object in the artifact store: `.exports/<id>/<file_name>`, one folder per archive (run and calibration exports alike). */
export function archiveKey(id: string, fileName: string): string {
  return `.exports/${id}/${fileName}`;
}

/** Deletes an archive's objects (its file and anything an interrupted attempt left). */
export async function removeArchiveFiles(objects: ObjectStore, id: string): Promise<void> {
  await objects.deletePrefix(`.exports/${id}/`);
}

/**
 * Expires every export of a run and every calibration export holding its data (the run's
 * recordings were purged) and deletes their files; returns how many moved.
 */
export async function expireRunExports(db: Db, objects: ObjectStore, runId: string, reason: Exclude<ExpiryReason, "availability">): Promise<number> {
  const message = reason === "purged"
    ? "the run's recordings were purged, and its exports with them"
    : "the run's recordings passed their data.retention, and its exports with them";
  let expired = 0;
  const gone: string[] = [];
  for (const row of await listRunExports(db, runId)) {
    if (row.status === "expired") continue;
    if (await moveExport(db, row.id, "expired", { failure_reason: reason, failure_message: message })) expired++;
    gone.push(row.id);
  }
  for (const row of await listCalibrationExportsOfRun(db, runId)) {
    if (row.status === "expired") continue;
    if (await moveCalibrationExport(db, row.id, "expired", { failure_reason: reason, failure_message: `run ${runId}: ${message}` })) expired++;
    gone.push(row.id);
  }
  // Every row is expired (downloads answer 410) before the first object is deleted.
  for (const id of gone) await removeArchiveFiles(objects, id);
  return expired;
}
