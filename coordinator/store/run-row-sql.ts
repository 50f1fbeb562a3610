/**
 * The statements that read one run's row: getRun, the reads that lock the run as they read it, and
 * getRunView's read of the columns a run's view shows (runs-repo.ts). A leaf of their own so that statement-metrics.ts can count them as run reads
 * without importing the repository (which imports the database, which takes the counter).
 */
export const RUN_ROW_SQL = "SELECT * FROM runs WHERE id = ?";
export const LOCKED_RUN_ROW_SQL = `${RUN_ROW_SQL} FOR UPDATE`;
export const EPISODE_RUN_ROW_SQL = "SELECT * FROM runs WHERE id = (SELECT run_id FROM episodes WHERE id = ?)";
export const LOCKED_EPISODE_RUN_ROW_SQL = `${EPISODE_RUN_ROW_SQL} FOR UPDATE`;
/** The columns GET /v1/runs/{run_id} shows (lifecycle/run-view.ts) and the owner it is checked against. */
export const RUN_VIEW_ROW_SQL =
  "SELECT id, account_id, kind, status, created, completed, request, resolved_pins, plan, result, status_code, status_message, priority, units, name, metadata FROM runs WHERE id = ?";

/** The texts statement-metrics.ts counts as run reads. */
export const RUN_ROW_READS: ReadonlySet<string> = new Set([RUN_ROW_SQL, LOCKED_RUN_ROW_SQL, EPISODE_RUN_ROW_SQL, LOCKED_EPISODE_RUN_ROW_SQL, RUN_VIEW_ROW_SQL]);
