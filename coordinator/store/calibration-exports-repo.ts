/**
 * The `calibration_exports` table: calibration data for simulator vendors, one row per request,
 * moved through the same transitions as run exports (coordinator/domain/export-state.ts).
 */
import type { ExportStatus } from "../domain/export-state.js";
import type { Db } from "./database.js";
import { moveArchiveRow } from "./exports-repo.js";
import { jsonArrayElements, jsonElementText } from "./sql-dialect.js";

export interface CalibrationExportRow {
  id: string;
  account_id: string;
  created: string;
  status: ExportStatus;
  /** JSON: {runs, licensee, purpose, simulator}. */
  request: string;
  /** JSON: the license terms (coordinator/exports/calibration-license.ts). */
  license: string;
  attempts: number;
  episodes: number | null;
  file_name: string | null;
  bytes: number | null;
  sha256: string | null;
  signature: string | null;
  ready_at: string | null;
  expires_at: string | null;
  failure_reason: string | null;
  failure_message: string | null;
  /** Until when a coordinator making it holds it (archive-worker.ts); null when none does. */
  lease_until: string | null;
}

export async function insertCalibrationExport(db: Db, row: Pick<CalibrationExportRow, "id" | "account_id" | "created" | "request" | "license">): Promise<void> {
  await db.prepare(
    `INSERT INTO calibration_exports (id, account_id, created, status, request, license) VALUES (@id, @account_id, @created, 'preparing', @request, @license)`,
  ).run(row);
}

export async function getCalibrationExport(db: Db, id: string): Promise<CalibrationExportRow | undefined> {
  return await db.prepare("SELECT * FROM calibration_exports WHERE id = ?").get(id) as CalibrationExportRow | undefined;
}

/** The account's calibration exports, newest first. */
export async function listCalibrationExports(db: Db, accountId: string): Promise<CalibrationExportRow[]> {
  return await db.prepare("SELECT * FROM calibration_exports WHERE account_id = ? ORDER BY created DESC, id DESC").all(accountId) as CalibrationExportRow[];
}

/** The account's calibration exports still preparing, or ready and available at `now` (what a repeated request may reuse). */
export async function listReusableCalibrationExports(db: Db, accountId: string, now: string): Promise<CalibrationExportRow[]> {
  return await db
    .prepare("SELECT * FROM calibration_exports WHERE account_id = ? AND (status = 'preparing' OR (status = 'ready' AND expires_at > ?)) ORDER BY created DESC, id DESC")
    .all(accountId, now) as CalibrationExportRow[];
}

export async function listCalibrationExportsIn(db: Db, status: ExportStatus): Promise<CalibrationExportRow[]> {
  return await db.prepare("SELECT * FROM calibration_exports WHERE status = ? ORDER BY created, id").all(status) as CalibrationExportRow[];
}

/** Calibration exports that hold data of `runId` (their request names it). */
export async function listCalibrationExportsOfRun(db: Db, runId: string): Promise<CalibrationExportRow[]> {
  return await db
    .prepare(`SELECT c.* FROM calibration_exports c, ${jsonArrayElements(db, "c.request", "runs", "r")} WHERE ${jsonElementText(db, "r")} = ?`)
    .all(runId) as CalibrationExportRow[];
}

export async function moveCalibrationExport(db: Db, id: string, to: ExportStatus, fields: Partial<CalibrationExportRow> = {}, from?: ExportStatus): Promise<boolean> {
  return await moveArchiveRow(db, "calibration_exports", id, to, fields, from);
}
