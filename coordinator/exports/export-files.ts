/**
 * Where prepared archives live, and expiring a run's exports when its recordings go (a purge on
 * request or by retention). A leaf: purge.ts calls it, so it imports nothing that imports purge.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../store/database.js";
import { listCalibrationExportsOfRun, moveCalibrationExport } from "../store/calibration-exports-repo.js";
import { listRunExports, moveExport } from "../store/exports-repo.js";
import type { ExpiryReason } from "./export-state.js";

/** `<artifactsDir>/.exports`: one folder per archive, named by its id. */
export function exportsRoot(artifactsDir: string): string {
  return join(artifactsDir, ".exports");
}

/** Deletes an archive's folder (its file and any work left from making it). */
export function removeArchiveFiles(artifactsDir: string, id: string): void {
  rmSync(join(exportsRoot(artifactsDir), id), { recursive: true, force: true });
}

/**
 * Expires every export of a run and every calibration export holding its data (the run's
 * recordings were purged) and deletes their files; returns how many moved.
 */
export function expireRunExports(db: Db, artifactsDir: string, runId: string, reason: Exclude<ExpiryReason, "availability">): number {
  const message = reason === "purged"
    ? "the run's recordings were purged, and its exports with them"
    : "the run's recordings passed their data.retention, and its exports with them";
  let expired = 0;
  for (const row of listRunExports(db, runId)) {
    if (row.status === "expired") continue;
    if (moveExport(db, row.id, "expired", { failure_reason: reason, failure_message: message })) expired++;
    removeArchiveFiles(artifactsDir, row.id);
  }
  for (const row of listCalibrationExportsOfRun(db, runId)) {
    if (row.status === "expired") continue;
    if (moveCalibrationExport(db, row.id, "expired", { failure_reason: reason, failure_message: `run ${runId}: ${message}` })) expired++;
    removeArchiveFiles(artifactsDir, row.id);
  }
  return expired;
}
