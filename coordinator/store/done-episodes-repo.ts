/**
 * A run's finished episodes, and their artifact rows, a page at a time for listings that must not read a
 * whole run in one statement (GET /v1/runs/{run_id}/episodes: on SQLite a statement runs synchronously, so
 * reading a 10,000-episode run's 50,000 rows held the event loop for every other request meanwhile).
 * Pages are keyset pages by episode index over the `UNIQUE (run_id, idx)` index; an episode's artifact rows
 * are read by the `artifacts` primary key `(episode_id, kind)`.
 */
import { canonicalFailureCluster, storedNamesOf } from "../../protocol/failure-clusters.js";
import type { ArtifactRow } from "./artifacts-repo.js";
import type { Db } from "./database.js";
import { episodeRecordOf, type EpisodeRecord, type EpisodeRow } from "./episodes-repo.js";

/** Which finished episodes a listing shows (the SQL side of GET /v1/runs/{run_id}/episodes' query). */
export interface DoneEpisodeFilter {
  outcome?: string;
  /** A failure cluster; a current name also finds the episodes recorded under its legacy names. */
  cluster?: string;
}

/** The WHERE clauses (joined with AND) and their parameters for a run's finished episodes under `filter`. */
function doneEpisodesWhere(runId: string, filter: DoneEpisodeFilter): { clauses: string[]; params: unknown[] } {
  const clauses = ["run_id = ?", "status = 'done'"];
  const params: unknown[] = [runId];
  if (filter.outcome !== undefined) {
    clauses.push("outcome = ?");
    params.push(filter.outcome);
  }
  if (filter.cluster !== undefined) {
    const names = storedNamesOf(canonicalFailureCluster(filter.cluster));
    clauses.push(`failure_cluster IN (${names.map(() => "?").join(", ")})`);
    params.push(...names);
  }
  return { clauses, params };
}

/**
 * Every finished episode (status `done`) of a run, by index, under `filter`. Whole-run: for a request's
 * listing read pages (listDoneEpisodesPage).
 */
export async function listEpisodes(db: Db, runId: string, filter: DoneEpisodeFilter = {}): Promise<EpisodeRecord[]> {
  const { clauses, params } = doneEpisodesWhere(runId, filter);
  return (await db.prepare(`SELECT * FROM episodes WHERE ${clauses.join(" AND ")} ORDER BY idx`).all(...params) as EpisodeRow[]).map(episodeRecordOf);
}

/**
 * Up to `limit` finished episodes of the run that have an outcome, matching `filter`, with an index above
 * `afterIdx` (-1 for the first page), by index. Fewer than `limit` means there are no more.
 */
export async function listDoneEpisodesPage(db: Db, runId: string, filter: DoneEpisodeFilter, afterIdx: number, limit: number): Promise<EpisodeRecord[]> {
  const { clauses, params } = doneEpisodesWhere(runId, filter);
  const rows = await db.prepare(`SELECT * FROM episodes WHERE ${clauses.join(" AND ")} AND outcome IS NOT NULL AND idx > ? ORDER BY idx LIMIT ?`)
    .all(...params, afterIdx, limit) as EpisodeRow[];
  return rows.map(episodeRecordOf);
}

/**
 * The artifact rows of episodes `episodeIds` (of `kind` only, when given), by episode id then kind: one
 * statement, each episode's rows found by the primary key. No read for no episodes.
 */
export async function listArtifactsOfEpisodes(db: Db, episodeIds: readonly string[], kind?: string): Promise<ArtifactRow[]> {
  if (episodeIds.length === 0) return [];
  // PostgreSQL: `= ANY (ARRAY(...))`, an array the index is searched with; as `IN (SELECT ...)` it hashed the ids and
  // read the whole artifacts table (every run's) for each page: 11.9 ms against 1.3 ms with 12,000 rows.
  const among = db.dialect === "postgres" ? "= ANY (ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))" : "IN (SELECT value FROM json_each(?))";
  // NOTE: no `run_id = ?` (an episode's rows are its run's): with it SQLite reads the whole run's rows by the
  // artifacts_run index and keeps those of the page (35-100 ms a page of 250 in a 10,000-episode run).
  return await db.prepare(
    `SELECT * FROM artifacts WHERE episode_id ${among}${kind !== undefined ? " AND kind = ?" : ""} ORDER BY episode_id, kind`,
  ).all(JSON.stringify(episodeIds), ...(kind !== undefined ? [kind] : [])) as ArtifactRow[];
}

/** Up to `limit` episodes of the run (any status) with an index above `afterIdx` (-1 for the first page), by index: id and index. */
export async function listEpisodeIdsPage(db: Db, runId: string, afterIdx: number, limit: number): Promise<Array<{ id: string; idx: number }>> {
  return await db.prepare("SELECT id, idx FROM episodes WHERE run_id = ? AND idx > ? ORDER BY idx LIMIT ?").all(runId, afterIdx, limit) as Array<{ id: string; idx: number }>;
}

/** Marks every artifact of episodes `episodeIds` not purged yet `purged`, by the artifacts primary key; returns how many. */
export async function markArtifactsOfEpisodesPurged(db: Db, episodeIds: readonly string[]): Promise<number> {
  if (episodeIds.length === 0) return 0;
  const among = db.dialect === "postgres" ? "= ANY (ARRAY(SELECT jsonb_array_elements_text(?::jsonb)))" : "IN (SELECT value FROM json_each(?))";
  return (await db.prepare(`UPDATE artifacts SET status = 'purged' WHERE episode_id ${among} AND status != 'purged'`).run(JSON.stringify(episodeIds))).changes;
}
