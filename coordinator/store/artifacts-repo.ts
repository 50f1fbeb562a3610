/**
 * The `artifacts` table: one row per recording an agent announced in EpisodeFinished
 * (`pending`), verified and moved into the artifact store (`stored`), or deleted (`purged`), and
 * one per file the coordinator derived from a stored recording (verify ground truth, `stored`).
 * A pending row whose run completed without it (the bounded wait, runs/recording-wait.ts) carries
 * `missing_since`; it stays pending, so a late upload is still taken.
 */
import type { Db } from "./database.js";
import { jsonText } from "./sql-dialect.js";

/** An `artifacts` row, columns as stored. */
export interface ArtifactRow {
  episode_id: string;
  run_id: string;
  /** "mcap", "video" or "video:<camera>" (uploaded by the agent; protocol/episode-video.ts), or "ground_truth" (derived by the coordinator). */
  kind: string;
  file_name: string;
  bytes: number;
  sha256: string;
  status: "pending" | "stored" | "purged";
  stored_at: string | null;
  /** When the run completed without this pending artifact (its cell had not uploaded it within recordingWaitMs); null otherwise. */
  missing_since: string | null;
}

/** Every artifact row of a run, ordered by episode index then kind. */
export async function listArtifacts(db: Db, runId: string): Promise<ArtifactRow[]> {
  return await db
    .prepare(
      `SELECT a.* FROM artifacts a JOIN episodes e ON e.id = a.episode_id
       WHERE a.run_id = ? ORDER BY e.idx, a.kind`,
    )
    .all(runId) as ArtifactRow[];
}

/**
 * The artifact of the run's episode stored under `fileName` (a download's or an upload's path names it so), read by
 * its episode's rows alone: a request for one file reads one episode's rows, not its run's (40,000 of a 10,000-episode
 * run).
 */
export async function findArtifactFile(db: Db, runId: string, episodeId: string, fileName: string): Promise<ArtifactRow | undefined> {
  return await db.prepare(
    `SELECT a.* FROM artifacts a JOIN episodes e ON e.id = a.episode_id
     WHERE a.episode_id = ? AND a.run_id = ? AND a.file_name = ? ORDER BY a.kind LIMIT 1`,
  ).get(episodeId, runId, fileName) as ArtifactRow | undefined;
}

export async function getArtifact(db: Db, episodeId: string, kind: string): Promise<ArtifactRow | undefined> {
  return await db.prepare("SELECT * FROM artifacts WHERE episode_id = ? AND kind = ?").get(episodeId, kind) as ArtifactRow | undefined;
}

/** Records an announced artifact as `pending`; a repeated announcement keeps the first row. */
export async function insertPendingArtifact(
  db: Db,
  row: { episodeId: string; runId: string; kind: string; fileName: string; bytes: number; sha256: string },
): Promise<void> {
  await db.prepare(
    `INSERT INTO artifacts (episode_id, run_id, kind, file_name, bytes, sha256, status)
     VALUES (?, ?, ?, ?, ?, ?, 'pending') ON CONFLICT DO NOTHING`,
  ).run(row.episodeId, row.runId, row.kind, row.fileName, row.bytes, row.sha256.toLowerCase());
}

/**
 * Records an artifact the coordinator derived and already stored (kind `ground_truth`); a repeated
 * derivation (the MCAP uploaded again after a crash) replaces the row.
 */
export async function upsertStoredArtifact(
  db: Db,
  row: { episodeId: string; runId: string; kind: string; fileName: string; bytes: number; sha256: string; storedAt: string },
): Promise<void> {
  await db.prepare(
    `INSERT INTO artifacts (episode_id, run_id, kind, file_name, bytes, sha256, status, stored_at)
     VALUES (?, ?, ?, ?, ?, ?, 'stored', ?)
     ON CONFLICT (episode_id, kind) DO UPDATE SET run_id = excluded.run_id, file_name = excluded.file_name, bytes = excluded.bytes,
       sha256 = excluded.sha256, status = excluded.status, stored_at = excluded.stored_at`,
  ).run(row.episodeId, row.runId, row.kind, row.fileName, row.bytes, row.sha256.toLowerCase(), row.storedAt);
}

/**
 * Moves a pending artifact to `stored` (one recorded missing too: a late upload is taken); false when it is not
 * pending (already stored, or purged meanwhile).
 */
export async function markArtifactStored(db: Db, episodeId: string, kind: string, at: string): Promise<boolean> {
  return (await db.prepare(
    "UPDATE artifacts SET status = 'stored', stored_at = ?, missing_since = NULL WHERE episode_id = ? AND kind = ? AND status = 'pending'",
  ).run(at, episodeId, kind)).changes > 0;
}

/** A run's pending artifacts held by one cell (the cell that finished their episodes). */
export interface PendingArtifactsOfCell {
  /** null when the episode has no cell (it should not happen for an announced artifact). */
  cellId: string | null;
  artifacts: number;
  /** `finished_at` of the earliest and the latest of their episodes. */
  oldestFinishedAt: string | null;
  newestFinishedAt: string | null;
}

/** The run's pending artifacts, counted per cell that holds them, ordered by cell. */
export async function listPendingArtifactsByCell(db: Db, runId: string): Promise<PendingArtifactsOfCell[]> {
  const rows = await db.prepare(
    `SELECT e.cell_id AS cell_id, COUNT(*) AS n, MIN(e.finished_at) AS oldest, MAX(e.finished_at) AS newest
     FROM artifacts a JOIN episodes e ON e.id = a.episode_id
     WHERE a.run_id = ? AND a.status = 'pending' GROUP BY e.cell_id ORDER BY e.cell_id`,
  ).all(runId) as Array<{ cell_id: string | null; n: number | string; oldest: string | null; newest: string | null }>;
  return rows.map((row) => ({ cellId: row.cell_id, artifacts: Number(row.n), oldestFinishedAt: row.oldest, newestFinishedAt: row.newest }));
}

/** Records the run's pending artifacts as missing since `at` (the run completes without them); returns how many. */
export async function markPendingArtifactsMissing(db: Db, runId: string, at: string): Promise<number> {
  return (await db.prepare("UPDATE artifacts SET missing_since = ? WHERE run_id = ? AND status = 'pending' AND missing_since IS NULL").run(at, runId)).changes;
}

/**
 * Pending artifacts of every run, per cell: `overdue`, not recorded missing and their episode finished before
 * `finishedBefore`; `missing`, recorded missing (their run completed without them) and still not uploaded.
 */
export async function countOverdueArtifactsByCell(db: Db, finishedBefore: string): Promise<Array<{ cellId: string | null; overdue: number; missing: number }>> {
  const rows = await db.prepare(
    `SELECT e.cell_id AS cell_id,
       SUM(CASE WHEN a.missing_since IS NULL AND e.finished_at < ? THEN 1 ELSE 0 END) AS overdue,
       SUM(CASE WHEN a.missing_since IS NOT NULL THEN 1 ELSE 0 END) AS missing
     FROM artifacts a JOIN episodes e ON e.id = a.episode_id WHERE a.status = 'pending' GROUP BY e.cell_id`,
  ).all(finishedBefore) as Array<{ cell_id: string | null; overdue: number | string; missing: number | string }>;
  return rows.map((row) => ({ cellId: row.cell_id, overdue: Number(row.overdue), missing: Number(row.missing) }));
}

/** Artifacts of the run that are not yet stored (pending uploads). */
export async function countUnstoredArtifacts(db: Db, runId: string): Promise<number> {
  const row = await db.prepare("SELECT COUNT(*) AS n FROM artifacts WHERE run_id = ? AND status = 'pending'").get(runId) as { n: number };
  return row.n;
}

/**
 * Forgets the artifacts of an episode whose finished attempt was marked invalid: its re-run
 * announces (and uploads) its own under the same kinds. Returns the rows removed.
 */
export async function forgetArtifactsOfEpisode(db: Db, episodeId: string): Promise<ArtifactRow[]> {
  const rows = await db.prepare("SELECT * FROM artifacts WHERE episode_id = ?").all(episodeId) as ArtifactRow[];
  await db.prepare("DELETE FROM artifacts WHERE episode_id = ?").run(episodeId);
  return rows;
}

/**
 * Marks purged the files of these episodes that are `stored` at or before `at` (an ISO 8601 instant as toISOString
 * writes it, as every `stored_at` is written, so the text order is the time order: countArtifactsStoredBy's rule), in
 * one statement; returns the files it marked.
 */
export async function markArtifactsPurgedIfStoredBy(db: Db, episodeIds: readonly string[], at: string): Promise<Array<Pick<ArtifactRow, "episode_id" | "kind" | "file_name">>> {
  if (episodeIds.length === 0) return [];
  const among = db.dialect === "postgres" ? "= ANY (ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))" : "IN (SELECT value FROM json_each(?))";
  return await db.prepare(
    // By episode alone (the primary key's first column): with `run_id = ?` as well SQLite takes the run's index and
    // scans all the run's rows for every page (40,000 for a 10,000-episode run, 60 ms a page).
    `UPDATE artifacts SET status = 'purged' WHERE episode_id ${among} AND status = 'stored' AND stored_at <= ? RETURNING episode_id, kind, file_name`,
  ).all(JSON.stringify(episodeIds), at) as Array<Pick<ArtifactRow, "episode_id" | "kind" | "file_name">>;
}

/**
 * Artifacts their cells have not uploaded (pending, recorded missing or not), per cell that holds them: how many, and
 * the finish of the oldest one's episode. Cells holding none are absent.
 */
export async function countNotUploadedArtifactsByCell(db: Db): Promise<Map<string, { artifacts: number; oldestFinishedAt: string | null }>> {
  const rows = await db.prepare(
    `SELECT e.cell_id AS cell_id, COUNT(*) AS n, MIN(e.finished_at) AS oldest
     FROM artifacts a JOIN episodes e ON e.id = a.episode_id WHERE a.status = 'pending' AND e.cell_id IS NOT NULL GROUP BY e.cell_id`,
  ).all() as Array<{ cell_id: string; n: number | string; oldest: string | null }>;
  return new Map(rows.map((row) => [row.cell_id, { artifacts: Number(row.n), oldestFinishedAt: row.oldest }]));
}

/** What an export decides from about a run's artifact rows (index lookups, none of the rows sent back). */
export interface RunArtifactsSummary {
  /** Whether any of the run's rows is purged. */
  anyPurged: boolean;
  /** The earliest `stored_at` of the run's rows (any status), and of its `stored` rows alone: null when none. */
  firstStoredAt: string | null;
  firstKeptAt: string | null;
}

/**
 * Whether any of the run's files is purged and when the first was stored: what an export decides from (is anything
 * gone, when does a download expire). One statement of index lookups (artifacts_run_status, artifacts_run_stored):
 * the aggregate over a 10,000-episode run's 40,000 rows read them all, 10-15 ms on SQLite, where a statement holds
 * the event loop for its whole length.
 */
export async function summarizeRunArtifacts(db: Db, runId: string): Promise<RunArtifactsSummary> {
  const row = await db.prepare(
    `SELECT EXISTS (SELECT 1 FROM artifacts WHERE run_id = ? AND status = 'purged') AS any_purged,
     (SELECT MIN(stored_at) FROM artifacts WHERE run_id = ?) AS first_stored_at,
     (SELECT MIN(stored_at) FROM artifacts WHERE run_id = ? AND status = 'stored') AS first_kept_at`,
  ).get(runId, runId, runId) as { any_purged: number | boolean; first_stored_at: string | null; first_kept_at: string | null };
  return { anyPurged: Boolean(Number(row.any_purged)), firstStoredAt: row.first_stored_at, firstKeptAt: row.first_kept_at };
}

/**
 * How many of the run's files there are and how many are gone: purged, or `stored` at or before `at` (an ISO 8601
 * instant as toISOString writes it, as every `stored_at` is written, so the text order is the time order). Reads
 * every row of the run: for the message of an export refused, not for deciding.
 */
export async function countRunArtifactsGone(db: Db, runId: string, at: string): Promise<{ total: number; gone: number }> {
  const row = await db.prepare(
    `SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN status = 'purged' OR (status = 'stored' AND stored_at <= ?) THEN 1 ELSE 0 END), 0) AS gone
     FROM artifacts WHERE run_id = ?`,
  ).get(at, runId) as { total: number | string; gone: number | string };
  return { total: Number(row.total), gone: Number(row.gone) };
}

/** Whether any of the run's `stored` files was stored at or before `at` (as countRunArtifactsGone reads it): an index lookup. */
export async function anyArtifactStoredBy(db: Db, runId: string, at: string): Promise<boolean> {
  const row = await db.prepare("SELECT EXISTS (SELECT 1 FROM artifacts WHERE run_id = ? AND status = 'stored' AND stored_at <= ?) AS found").get(runId, at) as { found: number | boolean };
  return Boolean(Number(row.found));
}
