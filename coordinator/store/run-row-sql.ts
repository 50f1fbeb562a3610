/**
 * The statements that read one run's whole row: getRun and the reads that lock the run as they read
 * it (runs-repo.ts). A leaf of their own so that statement-metrics.ts can count them as run reads
 * without importing the repository (which imports the database, which takes the counter).
 */
export const RUN_ROW_SQL = "SELECT * FROM runs WHERE id = ?";
export const LOCKED_RUN_ROW_SQL = `${RUN_ROW_SQL} FOR UPDATE`;
export const EPISODE_RUN_ROW_SQL = "SELECT * FROM runs WHERE id = (SELECT run_id FROM episodes WHERE id = ?)";
export const LOCKED_EPISODE_RUN_ROW_SQL = `${EPISODE_RUN_ROW_SQL} FOR UPDATE`;

/** The texts statement-metrics.ts counts as run reads. */
export const RUN_ROW_READS: ReadonlySet<string> = new Set([RUN_ROW_SQL, LOCKED_RUN_ROW_SQL, EPISODE_RUN_ROW_SQL, LOCKED_EPISODE_RUN_ROW_SQL]);
