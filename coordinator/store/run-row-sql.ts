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

/**
 * PostgreSQL only: a cell's EpisodeFinished of a running run applied as ONE statement, atomic by itself, with no
 * BEGIN or COMMIT (sequenced-reports-repo.ts finishEpisodeInSequence says what each part does and why it is safe). It
 * reads the run's whole row (`FOR KEY SHARE`), so it is counted as a run read. Named parameters: cellId, seq, runId,
 * episodeId, idx, attempt, lockFreeKinds (JSON array), pinImage, pinId, pinDigests (JSON array), the outcome's columns,
 * artifacts (JSON array), eventId, eventType, eventCreated, eventData.
 */
export const FINISH_IN_SEQUENCE_SQL = `
WITH cell AS (
  SELECT id FROM cells WHERE id = @cellId AND last_seq_applied = @seq::bigint - 1 FOR UPDATE
), run AS (
  SELECT r.* FROM runs r WHERE r.id = @runId AND EXISTS (SELECT 1 FROM cell) FOR KEY SHARE
), held AS (
  SELECT e.id, e.status, e.attempt, e.cell_id FROM episodes e, run
  WHERE e.id = @episodeId AND e.run_id = run.id AND e.idx = @idx::bigint AND e.status IN ('assigned', 'running')
    AND run.status = 'running' AND run.kind IN (SELECT json_array_elements_text(@lockFreeKinds::json))
    AND (@attempt::bigint = 0 OR e.interruptions NOT LIKE '%link_lost%')
    AND (@pinImage::text IS NULL OR (
      (run.resolved_pins::jsonb -> 'images' -> @pinImage::text -> 'ids') @> jsonb_build_array(@pinId::text)
      AND (run.resolved_pins::jsonb -> 'images' -> @pinImage::text -> 'repo_digests') @> @pinDigests::jsonb))
), done AS (
  UPDATE episodes e SET status = 'done', cell_id = @cellId, outcome = @outcome, failure_cluster = @failureCluster, duration_s = @durationS,
    reset_s = @resetS, operator_reset_s = @operatorResetS, replay_spec = @replaySpec, meta = @meta, evaluation = @evaluation,
    finished_at = @finishedAt, judged_by = @judgedBy, progress = @progress, label_note = @labelNote, operator_label_s = @operatorLabelS
  FROM held WHERE e.id = held.id AND e.status = held.status AND e.attempt = held.attempt AND e.cell_id = held.cell_id
  RETURNING e.id
), seq AS (
  UPDATE cells SET last_seq_applied = @seq::bigint WHERE id = @cellId AND EXISTS (SELECT 1 FROM done) RETURNING id
), artifact AS (
  INSERT INTO artifacts (episode_id, run_id, kind, file_name, bytes, sha256, status)
  SELECT @episodeId, @runId, a.kind, a.file_name, a.bytes, a.sha256, 'pending'
  FROM json_to_recordset(@artifacts::json) AS a(kind text, file_name text, bytes bigint, sha256 text)
  WHERE EXISTS (SELECT 1 FROM done)
  ON CONFLICT DO NOTHING
), event AS (
  INSERT INTO webhook_events (id, account_id, type, created, data)
  SELECT @eventId::text, run.account_id, @eventType::text, @eventCreated::text, @eventData::text FROM run
  WHERE @eventId::text IS NOT NULL AND EXISTS (SELECT 1 FROM done)
  RETURNING id, account_id
), delivery AS (
  INSERT INTO webhook_deliveries (event_id, endpoint_id, status, attempts, next_attempt_at)
  SELECT event.id, w.id, 'pending', 0, @eventCreated::text FROM event JOIN webhook_endpoints w ON w.account_id = event.account_id AND w.deleted IS NULL
  WHERE EXISTS (SELECT 1 FROM json_array_elements_text(w.events::json) AS t(type) WHERE t.type = @eventType::text)
)
SELECT run.*, held.status AS held_status, held.attempt AS held_attempt, held.cell_id AS held_cell_id,
  (SELECT b.hard FROM budgets b WHERE b.account_id = run.account_id) AS budget_hard
FROM run JOIN held ON true WHERE EXISTS (SELECT 1 FROM seq)`;

/** The texts statement-metrics.ts counts as run reads. */
export const RUN_ROW_READS: ReadonlySet<string> = new Set([RUN_ROW_SQL, LOCKED_RUN_ROW_SQL, EPISODE_RUN_ROW_SQL, LOCKED_EPISODE_RUN_ROW_SQL, RUN_VIEW_ROW_SQL, FINISH_IN_SEQUENCE_SQL]);
