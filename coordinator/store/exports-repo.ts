/**
 * The `exports` table: one row per requested run export, moved only through the transitions of
 * coordinator/domain/export-state.ts. Every move is a conditional UPDATE on the status it leaves,
 * so a purge and the worker racing over the same row cannot both win.
 */
import { exportStatusesBefore, type ExportStatus } from "../domain/export-state.js";
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
  /** Until when a coordinator making it holds it (archive-worker.ts); null when none does. */
  lease_until: string | null;
}

export async function insertExport(db: Db, row: Pick<ExportRow, "id" | "account_id" | "run_id" | "format" | "created" | "episodes_total" | "episodes">): Promise<void> {
  await db.prepare(
    `INSERT INTO exports (id, account_id, run_id, format, status, created, episodes_total, episodes)
     VALUES (@id, @account_id, @run_id, @format, 'preparing', @created, @episodes_total, @episodes)`,
  ).run(row);
}

export async function getExport(db: Db, id: string): Promise<ExportRow | undefined> {
  return await db.prepare("SELECT * FROM exports WHERE id = ?").get(id) as ExportRow | undefined;
}

/** A run's exports, newest first. */
export async function listRunExports(db: Db, runId: string): Promise<ExportRow[]> {
  return await db.prepare("SELECT * FROM exports WHERE run_id = ? ORDER BY created DESC, id DESC").all(runId) as ExportRow[];
}

/** Every export in `status`, oldest first. */
export async function listExportsIn(db: Db, status: ExportStatus): Promise<ExportRow[]> {
  return await db.prepare("SELECT * FROM exports WHERE status = ? ORDER BY created, id").all(status) as ExportRow[];
}

/**
 * The account's export of `runId` in `format` that a new request for the same would duplicate: one
 * still preparing, or ready and available at `now`; the newest if several. Undefined when none.
 */
export async function findReusableExport(db: Db, accountId: string, runId: string, format: ExportFormat, now: string): Promise<ExportRow | undefined> {
  return await db
    .prepare(
      `SELECT * FROM exports WHERE account_id = @accountId AND run_id = @runId AND format = @format
       AND (status = 'preparing' OR (status = 'ready' AND expires_at > @now)) ORDER BY created DESC, id DESC LIMIT 1`,
    )
    .get({ accountId, runId, format, now }) as ExportRow | undefined;
}

/** Archives of the account queued or being made: run exports and calibration exports in `preparing`. */
export async function countPreparingArchives(db: Db, accountId: string): Promise<number> {
  const count = async (table: "exports" | "calibration_exports") =>
    Number((await db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE account_id = ? AND status = 'preparing'`).get(accountId) as { n: number | string }).n);
  return await count("exports") + await count("calibration_exports");
}

/**
 * Claims a preparing row of an archive table for making: counts a start (attempts + 1) and leases it
 * until `lease.until`, unless another coordinator's lease on it has not run out at `lease.now`.
 * A run export starts its progress again. Returns whether this caller has it.
 */
export async function claimArchiveRow(db: Db, table: "exports" | "calibration_exports", id: string, lease: { until: string; now: string }): Promise<boolean> {
  const progress = table === "exports" ? ", episodes_done = 0" : "";
  return (await db
    .prepare(`UPDATE ${table} SET attempts = attempts + 1${progress}, lease_until = @until WHERE id = @id AND status = 'preparing' AND (lease_until IS NULL OR lease_until < @now)`)
    .run({ id, ...lease })).changes === 1;
}

/** Extends (or with `null` gives up) the lease on a preparing row of an archive table. */
export async function renewArchiveLease(db: Db, table: "exports" | "calibration_exports", id: string, until: string | null): Promise<void> {
  await db.prepare(`UPDATE ${table} SET lease_until = ? WHERE id = ? AND status = 'preparing'`).run(until, id);
}

/** Records what a preparing export holds once its uploads settled (episodes_total and the counts). */
export async function setExportSelection(db: Db, id: string, episodesTotal: number, episodes: string): Promise<void> {
  await db.prepare("UPDATE exports SET episodes_total = ?, episodes = ? WHERE id = ? AND status = 'preparing'").run(episodesTotal, episodes, id);
}

/**
 * Moves a row of an archive table (`exports`, `calibration_exports`) to `to` with `fields`, only
 * from a status that may precede it (and from `from` when given). Returns whether the row moved.
 * Column names come from the callers' code, never from a request.
 */
export async function moveArchiveRow(db: Db, table: "exports" | "calibration_exports", id: string, to: ExportStatus, fields: Record<string, unknown> = {}, from?: ExportStatus): Promise<boolean> {
  const allowed = exportStatusesBefore(to).filter((s) => from === undefined || s === from);
  if (allowed.length === 0) return false;
  const sets = Object.keys(fields).map((k) => `${k} = @${k}`);
  const result = await db
    .prepare(`UPDATE ${table} SET ${["status = @to", ...sets].join(", ")} WHERE id = @id AND status IN (${allowed.map((s) => `'${s}'`).join(", ")})`)
    .run({ ...fields, id, to });
  return result.changes === 1;
}

export async function moveExport(db: Db, id: string, to: ExportStatus, fields: Partial<ExportRow> = {}, from?: ExportStatus): Promise<boolean> {
  return await moveArchiveRow(db, "exports", id, to, fields, from);
}

/** Records the worker's progress on a preparing export. */
export async function setExportProgress(db: Db, id: string, episodesDone: number): Promise<void> {
  await db.prepare("UPDATE exports SET episodes_done = ? WHERE id = ? AND status = 'preparing'").run(episodesDone, id);
}
