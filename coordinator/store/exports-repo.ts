/**
 * The `exports` table: one row per requested run export, moved only through the transitions of
 * coordinator/exports/export-state.ts. Every move is a conditional UPDATE on the status it leaves,
 * so a purge and the worker racing over the same row cannot both win.
 */
import { exportStatusesBefore, type ExportStatus } from "../exports/export-state.js";
import type { Db } from "./database.js";

export const EXPORT_FORMATS = ["lerobot", "rlds", "mcap-bundle"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** What an export includes: episode counts decided when it was requested, settled when it is made. */
export interface ExportEpisodes {
  included: number;
  /** Reason -> episodes left out: `failure`, `intervened`, `recording_unavailable`. */
  excluded: Record<string, number>;
  train_on_failures: boolean;
}

export interface ExportRow {
  id: string;
  account_id: string;
  run_id: string;
  format: ExportFormat;
  status: ExportStatus;
  created: string;
  attempts: number;
  episodes_total: number;
  episodes_done: number;
  episodes: string;
  file_name: string | null;
  bytes: number | null;
  sha256: string | null;
  ready_at: string | null;
  expires_at: string | null;
  failure_reason: string | null;
  failure_message: string | null;
}

export function insertExport(db: Db, row: Pick<ExportRow, "id" | "account_id" | "run_id" | "format" | "created" | "episodes_total" | "episodes">): void {
  db.prepare(
    `INSERT INTO exports (id, account_id, run_id, format, status, created, episodes_total, episodes)
     VALUES (@id, @account_id, @run_id, @format, 'preparing', @created, @episodes_total, @episodes)`,
  ).run(row);
}

export function getExport(db: Db, id: string): ExportRow | undefined {
  return db.prepare("SELECT * FROM exports WHERE id = ?").get(id) as ExportRow | undefined;
}

/** A run's exports, newest first. */
export function listRunExports(db: Db, runId: string): ExportRow[] {
  return db.prepare("SELECT * FROM exports WHERE run_id = ? ORDER BY created DESC, id DESC").all(runId) as ExportRow[];
}

/** Every export in `status`, oldest first. */
export function listExportsIn(db: Db, status: ExportStatus): ExportRow[] {
  return db.prepare("SELECT * FROM exports WHERE status = ? ORDER BY created, id").all(status) as ExportRow[];
}

/**
 * Moves a row of an archive table (`exports`, `calibration_exports`) to `to` with `fields`, only
 * from a status that may precede it (and from `from` when given). Returns whether the row moved.
 * Column names come from the callers' code, never from a request.
 */
export function moveArchiveRow(db: Db, table: "exports" | "calibration_exports", id: string, to: ExportStatus, fields: Record<string, unknown> = {}, from?: ExportStatus): boolean {
  const allowed = exportStatusesBefore(to).filter((s) => from === undefined || s === from);
  if (allowed.length === 0) return false;
  const sets = Object.keys(fields).map((k) => `${k} = @${k}`);
  const result = db
    .prepare(`UPDATE ${table} SET ${["status = @to", ...sets].join(", ")} WHERE id = @id AND status IN (${allowed.map((s) => `'${s}'`).join(", ")})`)
    .run({ ...fields, id, to });
  return result.changes === 1;
}

export function moveExport(db: Db, id: string, to: ExportStatus, fields: Partial<ExportRow> = {}, from?: ExportStatus): boolean {
  return moveArchiveRow(db, "exports", id, to, fields, from);
}

/** Records the worker's progress on a preparing export. */
export function setExportProgress(db: Db, id: string, episodesDone: number): void {
  db.prepare("UPDATE exports SET episodes_done = ? WHERE id = ? AND status = 'preparing'").run(episodesDone, id);
}
