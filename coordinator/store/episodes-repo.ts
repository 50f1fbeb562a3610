/**
 * The `episodes` table and its lifecycle writes (coordinator/domain/episode-state.ts has the moves).
 * Each write first decides from the current status whether a late or repeated message still
 * applies (when not it changes nothing and says so), then moves through `transitionEpisode`.
 */
import { canonicalFailureCluster } from "../../protocol/failure-clusters.js";
import type { EpisodeAssign } from "../domain/units.js";
import { episodeMoveAllowed, transitionEpisode, type EpisodeStatus } from "../domain/episode-state.js";
import { INVALID_REASON_WORDS, type InvalidReason } from "../domain/invalid-reasons.js";
import type { RunStatus } from "../domain/run-state.js";
import type { Db } from "./database.js";
import { jsonText } from "./sql-dialect.js";

export type { EpisodeStatus };

/** An `episodes` row, columns as stored (JSON columns as text). */
export interface EpisodeRow {
  id: string;
  run_id: string;
  idx: number;
  status: EpisodeStatus;
  attempt: number;
  seed: number;
  cell_id: string | null;
  outcome: "success" | "failure" | null;
  failure_cluster: string | null;
  duration_s: number | null;
  reset_s: number | null;
  /** Seconds a person spent on the finished attempt's reset (null: not said). */
  operator_reset_s?: number | null;
  /** "human" when a person's label decided the outcome, "judge" when a judge endpoint's verdict did, else null (the instruments did). */
  judged_by?: string | null;
  progress?: number | null;
  label_note?: string | null;
  operator_label_s?: number | null;
  replay_spec: string | null;
  meta: string | null;
  evaluation: string | null;
  /** JSON array of Interruption. */
  interruptions: string;
  assigned_at: string | null;
  started_at: string | null;
  finished_at: string | null;
}

/** An episode as the coordinator reads it: JSON columns parsed, camelCase, its unit always a number. */
export interface EpisodeRecord {
  id: string;
  runId: string;
  idx: number;
  status: EpisodeStatus;
  attempt: number;
  seed: number;
  cellId: string | null;
  outcome: "success" | "failure" | null;
  failureCluster: string | null;
  durationS: number | null;
  resetS: number | null;
  /** Seconds a person spent setting the scene before the finished attempt; null when none was needed or said. */
  operatorResetS: number | null;
  /** The person's label, when a person judged the episode (status done) or was asked to and never answered (unlabelled: label null, waitedS set). */
  label: EpisodeLabel | null;
  replaySpec: Record<string, unknown> | null;
  /** The episode's end /meta as the agent sent it. */
  meta: Record<string, unknown> | null;
  /** `{stages: {name: reached}}` from the cell's predicate monitor. */
  evaluation: Record<string, unknown> | null;
  interruptions: Interruption[];
  assignedAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** Index into the run's units (kind `run` stores none: 0). */
  unit: number;
  /** What the assignment carries besides the seed (coordinator/domain/units.ts). */
  assign: EpisodeAssign;
}

const parsed = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

/** What a cell sent as JSON (replay spec, /meta, evaluation): an object, or null when absent or unreadable. */
export function fromCell(text: string | null): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    // A cell's malformed JSON must not make the run's results unreadable; it reads as absent.
    return null;
  }
}

/** Parses an `episodes` row once, at the store's edge. */
export function episodeRecordOf(row: EpisodeRow & { unit?: number | null; assign?: string | null }): EpisodeRecord {
  return {
    id: row.id,
    runId: row.run_id,
    idx: row.idx,
    status: row.status,
    attempt: row.attempt,
    seed: row.seed,
    cellId: row.cell_id,
    outcome: row.outcome,
    // Names older cells sent (drop) read as their current name (protocol/failure-clusters.ts).
    failureCluster: canonicalFailureCluster(row.failure_cluster),
    durationS: row.duration_s,
    resetS: row.reset_s,
    operatorResetS: row.operator_reset_s ?? null,
    label: row.judged_by === "human" || row.judged_by === "judge" || row.operator_label_s != null
      ? { judgedBy: row.judged_by === "human" || row.judged_by === "judge" ? row.judged_by : null, progress: row.progress ?? null, note: row.label_note ?? null, waitedS: row.operator_label_s ?? null }
      : null,
    replaySpec: fromCell(row.replay_spec),
    meta: fromCell(row.meta),
    evaluation: fromCell(row.evaluation),
    interruptions: JSON.parse(row.interruptions || "[]") as Interruption[],
    assignedAt: row.assigned_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    unit: row.unit ?? 0,
    assign: parsed<EpisodeAssign>(row.assign ?? null) ?? {},
  };
}

/** Every episode of a run in any status, by index, as records. */
export async function listEpisodeRecords(db: Db, runId: string): Promise<EpisodeRecord[]> {
  return (await db.prepare("SELECT * FROM episodes WHERE run_id = ? ORDER BY idx").all(runId) as EpisodeRow[]).map(episodeRecordOf);
}

/** Up to `limit` of the run's episodes (any status) with an index above `afterIdx` (-1 for the first page), by index, as records. */
export async function listEpisodeRecordsPage(db: Db, runId: string, afterIdx: number, limit: number): Promise<EpisodeRecord[]> {
  return (await db.prepare("SELECT * FROM episodes WHERE run_id = ? AND idx > ? ORDER BY idx LIMIT ?").all(runId, afterIdx, limit) as EpisodeRow[]).map(episodeRecordOf);
}

/** Pending episodes of one unit of a run, lowest index first, as records. */
export async function listPendingOfUnit(db: Db, runId: string, unit: number, limit: number): Promise<EpisodeRecord[]> {
  return (await db
    .prepare("SELECT * FROM episodes WHERE run_id = ? AND COALESCE(unit, 0) = ? AND status = 'pending' ORDER BY idx LIMIT ?")
    .all(runId, unit, limit) as EpisodeRow[]).map(episodeRecordOf);
}

/** One episode as a record, or undefined. */
export async function getEpisodeRecord(db: Db, episodeId: string): Promise<EpisodeRecord | undefined> {
  const row = await getEpisode(db, episodeId);
  return row ? episodeRecordOf(row) : undefined;
}

/** A person's success label as stored with its episode. */
export interface EpisodeLabel {
  /**
   * "human" once a person labelled it; "judge" when the run's judge endpoint decided it alone (docs/judges.md);
   * null for an unlabelled episode (asked, never answered).
   */
  judgedBy: "human" | "judge" | null;
  /** The person's progress score, 0-100 (null: not given). */
  progress: number | null;
  note: string | null;
  /** Seconds the cell waited for the label (the person's labelling time). */
  waitedS: number | null;
}

/** One attempt that did not reach an outcome, as appended to `episodes.interruptions`. */
export interface Interruption {
  attempt: number;
  cell: string | null;
  /**
   * "estop", "link_lost", "agent_restart", "policy_error", "hardware_fault", "cancelled", "operator_abort";
   * "invalidated" for a finished attempt a person marked invalid (see `invalidated`).
   */
  reason: string;
  detail: string;
  at: string;
  /** Time the robot was occupied by this attempt, when known (counts towards robot-hours). */
  duration_s: number;
  /** Seconds a person spent on this attempt's reset, when the cell said. */
  operator_reset_s?: number;
  /** Reason "invalidated": why, the person's note, and the outcome the attempt had. */
  invalidated?: { reason: InvalidReason; note: string | null; outcome: "success" | "failure" | null };
}

/** Every episode of a run in any status, ordered by index. */
export async function listAllEpisodes(db: Db, runId: string): Promise<EpisodeRow[]> {
  return await db.prepare("SELECT * FROM episodes WHERE run_id = ? ORDER BY idx").all(runId) as EpisodeRow[];
}

export async function getEpisode(db: Db, episodeId: string): Promise<EpisodeRow | undefined> {
  return await db.prepare("SELECT * FROM episodes WHERE id = ?").get(episodeId) as EpisodeRow | undefined;
}

/** Pending episodes of a run, lowest index first. */
export async function listPendingEpisodes(db: Db, runId: string, limit: number): Promise<EpisodeRow[]> {
  return await db.prepare("SELECT * FROM episodes WHERE run_id = ? AND status = 'pending' ORDER BY idx LIMIT ?").all(runId, limit) as EpisodeRow[];
}

/** Episodes some cell holds (assigned or running), with the cell. */
export async function listHeldEpisodes(db: Db): Promise<EpisodeRow[]> {
  return await db.prepare("SELECT * FROM episodes WHERE status IN ('assigned', 'running')").all() as EpisodeRow[];
}

/**
 * Which of `cellIds` hold an episode (assigned or running) in the store: one read that returns at most
 * those cells, however many episodes the fleet holds. No read for no cells.
 */
export async function listCellsHoldingEpisodes(db: Db, cellIds: readonly string[]): Promise<Set<string>> {
  if (cellIds.length === 0) return new Set();
  const among = db.dialect === "postgres" ? "SELECT jsonb_array_elements_text(?::jsonb)" : "SELECT value FROM json_each(?)";
  const rows = await db.prepare(`SELECT DISTINCT cell_id FROM episodes WHERE status IN ('assigned', 'running') AND cell_id IN (${among})`)
    .all(JSON.stringify(cellIds)) as Array<{ cell_id: string }>;
  return new Set(rows.map((r) => r.cell_id));
}

/** pending -> assigned with attempt + 1; returns the new attempt, or null if it was not pending. */
export async function assignEpisode(db: Db, episodeId: string, cellId: string, at: string): Promise<number | null> {
  return (await claimPendingEpisode(db, episodeId, cellId, at))?.attempt ?? null;
}

/**
 * pending -> assigned with attempt + 1, in one guarded statement (another coordinator may have
 * assigned it); returns what the assignment message needs, or undefined if it was not pending.
 */
export async function claimPendingEpisode(db: Db, episodeId: string, cellId: string, at: string): Promise<{ attempt: number; idx: number; seed: number } | undefined> {
  transitionEpisode("pending", "assigned");
  return await db.prepare(
    `UPDATE episodes SET status = 'assigned', attempt = attempt + 1, cell_id = ?, assigned_at = ?, started_at = NULL WHERE id = ? AND status = 'pending'
     RETURNING attempt, idx, seed`,
  ).get(cellId, at, episodeId) as { attempt: number; idx: number; seed: number } | undefined;
}

/**
 * claimPendingEpisode as a statement of its own, outside any transaction, for a run past queued: the
 * claim is one guarded update, atomic by itself, that moves no run. It takes no lock on the run: a
 * claim leaves a run's open episodes (pending, assigned, running) as many as they were, so neither
 * the completion check of a finish nor a kind's decision can differ with it, and the run's end is met
 * at the episode's row (a pending episode it cancelled is not claimed; one claimed first is held, and
 * the end tells its cell to cancel). Undefined when the episode was not pending or its run is queued
 * (the move to scheduling goes with the claim, under the run's lock: claimPendingEpisode in a transaction).
 */
export async function claimPendingEpisodeOfStartedRun(db: Db, episodeId: string, cellId: string, at: string): Promise<{ attempt: number; idx: number; seed: number } | undefined> {
  transitionEpisode("pending", "assigned");
  return await db.prepare(
    `UPDATE episodes SET status = 'assigned', attempt = attempt + 1, cell_id = ?, assigned_at = ?, started_at = NULL
     WHERE id = ? AND status = 'pending' AND (SELECT status FROM runs WHERE runs.id = episodes.run_id) <> 'queued'
     RETURNING attempt, idx, seed`,
  ).get(cellId, at, episodeId) as { attempt: number; idx: number; seed: number } | undefined;
}

/**
 * assigned -> running on the cell that holds it, when its run is already running (or has ended): the
 * move that needs no run lock (see EpisodeStarted, coordinator/fleet/episode-messages.ts). False when
 * nothing changed: the episode was not assigned to the cell, or its run is queued or scheduling, or
 * unknown; then the caller takes the run's lock and tries markEpisodeRunning.
 */
export async function markEpisodeRunningOfStartedRun(db: Db, episodeId: string, cellId: string, at: string): Promise<boolean> {
  transitionEpisode("assigned", "running");
  return (await db.prepare(
    `UPDATE episodes SET status = 'running', started_at = ? WHERE id = ? AND status = 'assigned' AND cell_id = ?
     AND (SELECT status FROM runs WHERE runs.id = episodes.run_id) NOT IN ('queued', 'scheduling')`,
  ).run(at, episodeId, cellId)).changes > 0;
}

/** assigned -> running on the cell that holds it; returns false when nothing changed. */
export async function markEpisodeRunning(db: Db, episodeId: string, cellId: string, at: string): Promise<boolean> {
  transitionEpisode("assigned", "running");
  return (await db.prepare("UPDATE episodes SET status = 'running', started_at = ? WHERE id = ? AND status = 'assigned' AND cell_id = ?").run(at, episodeId, cellId)).changes > 0;
}

/**
 * pending -> cancelled for every pending episode of a run (the run ended, or its kind decided
 * early); returns how many. The one place pending episodes are cancelled.
 */
export async function cancelPendingEpisodes(db: Db, runId: string): Promise<number> {
  transitionEpisode("pending", "cancelled");
  return (await db.prepare("UPDATE episodes SET status = 'cancelled' WHERE run_id = ? AND status = 'pending'").run(runId)).changes;
}

/** pending -> cancelled for one episode (just requeued, of a run that has ended); false when it was not pending. */
export async function cancelPendingEpisode(db: Db, episodeId: string): Promise<boolean> {
  transitionEpisode("pending", "cancelled");
  return (await db.prepare("UPDATE episodes SET status = 'cancelled' WHERE id = ? AND status = 'pending'").run(episodeId)).changes > 0;
}

/** The run of the episode, or undefined for an unknown episode. */
export async function findRunIdOfEpisode(db: Db, episodeId: string): Promise<string | undefined> {
  return (await db.prepare("SELECT run_id FROM episodes WHERE id = ?").get(episodeId) as { run_id: string } | undefined)?.run_id;
}

/** The cell holding the run's most recently assigned episode (assigned or running), if any. */
export async function findCellHoldingRun(db: Db, runId: string): Promise<string | undefined> {
  const row = await db
    .prepare("SELECT cell_id FROM episodes WHERE run_id = ? AND status IN ('assigned', 'running') AND cell_id IS NOT NULL ORDER BY assigned_at DESC LIMIT 1")
    .get(runId) as { cell_id: string } | undefined;
  return row?.cell_id;
}

/** The run of the episode the cell was most recently assigned and still holds, if any. */
export async function findRunHeldByCell(db: Db, cellId: string): Promise<string | undefined> {
  const row = await db
    .prepare("SELECT run_id FROM episodes WHERE cell_id = ? AND status IN ('assigned', 'running') ORDER BY assigned_at DESC LIMIT 1")
    .get(cellId) as { run_id: string } | undefined;
  return row?.run_id;
}

/** The runs whose episodes the cell holds (assigned or running), in id order (the order their locks are taken). */
export async function listRunIdsHeldByCell(db: Db, cellId: string): Promise<string[]> {
  return (await db.prepare("SELECT DISTINCT run_id FROM episodes WHERE cell_id = ? AND status IN ('assigned', 'running') ORDER BY run_id").all(cellId) as Array<{ run_id: string }>)
    .map((r) => r.run_id);
}

/** The episodes the cell holds (assigned or running). */
export async function listEpisodesHeldByCell(db: Db, cellId: string): Promise<EpisodeRow[]> {
  return await db.prepare("SELECT * FROM episodes WHERE cell_id = ? AND status IN ('assigned', 'running')").all(cellId) as EpisodeRow[];
}

/** Ids of the episodes the cell holds that were assigned before `before` (or have no assignment time). */
export async function listEpisodeIdsHeldByCellSince(db: Db, cellId: string, before: string): Promise<string[]> {
  return (await db
    .prepare("SELECT id FROM episodes WHERE cell_id = ? AND status IN ('assigned', 'running') AND COALESCE(assigned_at, '') < ?")
    .all(cellId, before) as Array<{ id: string }>).map((r) => r.id);
}

/** Episodes of a run some cell holds (assigned or running), by index. */
export async function listHeldEpisodesOfRun(db: Db, runId: string): Promise<Array<{ id: string; cell_id: string }>> {
  return await db
    .prepare("SELECT id, cell_id FROM episodes WHERE run_id = ? AND status IN ('assigned', 'running') AND cell_id IS NOT NULL ORDER BY idx")
    .all(runId) as Array<{ id: string; cell_id: string }>;
}

export interface EpisodeOutcome {
  cellId: string;
  outcome: "success" | "failure";
  failureCluster: string | null;
  durationS: number;
  resetS: number;
  /** Seconds a person spent on the reset (EpisodeFinished.operator_reset_s), when the cell said. */
  operatorResetS?: number | null;
  replaySpecJson: string | null;
  metaJson: string | null;
  evaluationJson: string | null;
  finishedAt: string;
  /** The attempt the cell reports finished, when it says (0 or absent: not said). */
  attempt?: number;
  /** A person's label, or a judge endpoint's verdict (`judgedBy` "judge"), that decided the outcome (task with operator.success). */
  label?: { judgedBy?: "human" | "judge"; progress: number | null; note: string | null; waitedS: number | null } | null;
}

/**
 * Records the outcome unless the episode is already done (or cancelled); returns false when it
 * changed nothing. A finish from the cell that lost the episode to a link drop is still accepted
 * while the episode has no outcome: the attempt really ran. So is a finish of an episode cancelled
 * because its run was stopped or failed after it had been assigned (its link dropped, then the
 * halt cancelled it): the robot time was spent and is billed; the run's status is not touched.
 * When the cell names the attempt, the coordinator's own estimate of that attempt's time (its
 * "link_lost" interruption on that cell) is zeroed, so the attempt is metered once, as finished.
 * `current`: the episode's row as the caller just read it in this transaction, under its run's
 * lock (it is not read again).
 */
export async function markEpisodeDone(db: Db, episodeId: string, o: EpisodeOutcome, current?: EpisodeRow): Promise<boolean> {
  const row = current ?? await getEpisode(db, episodeId);
  if (!row || row.status === "done") return false;
  if (row.status === "cancelled") {
    // Only an attempt that really ran, of a run that was halted or failed meanwhile.
    const run = await db.prepare("SELECT status FROM runs WHERE id = ?").get(row.run_id) as { status: string } | undefined;
    if (row.attempt === 0 || (run?.status !== "stopped" && run?.status !== "failed")) return false;
  }
  transitionEpisode(row.status, "done");
  await db.prepare(`${MARK_DONE_SQL} WHERE id = ?`).run(...markDoneParams(o), episodeId);
  // The UPDATE above leaves `interruptions` as read.
  if (o.attempt) await supersedeLinkLostEstimate(db, row, o.cellId, o.attempt);
  return true;
}

const MARK_DONE_SQL =
  `UPDATE episodes SET status = 'done', cell_id = ?, outcome = ?, failure_cluster = ?, duration_s = ?, reset_s = ?, operator_reset_s = ?,
     replay_spec = ?, meta = ?, evaluation = ?, finished_at = ?, judged_by = ?, progress = ?, label_note = ?, operator_label_s = ?`;

function markDoneParams(o: EpisodeOutcome): unknown[] {
  return [
    o.cellId, o.outcome, o.failureCluster, o.durationS, o.resetS, o.operatorResetS ?? null, o.replaySpecJson, o.metaJson, o.evaluationJson, o.finishedAt,
    o.label ? o.label.judgedBy ?? "human" : null, o.label?.progress ?? null, o.label?.note ?? null, o.label?.waitedS ?? null,
  ];
}

/**
 * markEpisodeDone for a finish that does not hold its run's lock (fleet/episode-messages.ts): records the outcome
 * only if the episode is still as `current` (assigned or running, so held by a cell; read in this transaction) shows it, in one guarded
 * UPDATE; false, changing nothing, when another transaction moved it since (a requeue, a start, another attempt's
 * finish). On PostgreSQL the UPDATE waits for a transaction that holds the row and then tests the row it committed.
 */
export async function markEpisodeDoneIfUnmoved(db: Db, current: EpisodeRow, o: EpisodeOutcome): Promise<boolean> {
  transitionEpisode(current.status, "done");
  const moved = (await db.prepare(`${MARK_DONE_SQL} WHERE id = ? AND status = ? AND attempt = ? AND cell_id = ?`)
    .run(...markDoneParams(o), current.id, current.status, current.attempt, current.cell_id)).changes === 0;
  if (moved) return false;
  if (o.attempt) await supersedeLinkLostEstimate(db, current, o.cellId, o.attempt);
  return true;
}

/**
 * The episode, and its run's status, for a finish that takes no lock on the run's row that would keep other finishes
 * out: on PostgreSQL the read takes the run's row `FOR KEY SHARE`, which any number of transactions hold at once and
 * which a `FOR UPDATE` (lockRun: an ending, a requeue, a kind's decision) waits for and makes wait. So until this
 * transaction commits, the run cannot end, and it read the status as the last ending committed it. On SQLite, the
 * read alone. Undefined for an unknown episode.
 */
export async function getEpisodeSharingRunLock(db: Db, episodeId: string): Promise<{ episode: EpisodeRow; runStatus: RunStatus } | undefined> {
  const row = await db.prepare(
    `SELECT e.*, r.status AS run_status FROM episodes e JOIN runs r ON r.id = e.run_id WHERE e.id = ?${db.dialect === "postgres" ? " FOR KEY SHARE OF r" : ""}`,
  ).get(episodeId) as (EpisodeRow & { run_status: RunStatus }) | undefined;
  if (!row) return undefined;
  const { run_status: runStatus, ...episode } = row;
  return { episode, runStatus };
}

/**
 * A finished attempt whose success a person was to judge and no label came before the cell's label
 * timeout: the episode ends `unlabelled` (listed in the result, never counted in n, not run again),
 * keeping its robot time and the seconds it waited. Returns false, changing nothing, when the
 * episode is already done, unlabelled or cancelled.
 */
export async function markEpisodeUnlabelled(db: Db, episodeId: string, o: Omit<EpisodeOutcome, "outcome" | "failureCluster" | "label"> & { waitedS: number }): Promise<boolean> {
  const row = await getEpisode(db, episodeId);
  if (!row || !episodeMoveAllowed(row.status, "unlabelled")) return false;
  transitionEpisode(row.status, "unlabelled");
  await db.prepare(
    `UPDATE episodes SET status = 'unlabelled', cell_id = ?, outcome = NULL, failure_cluster = NULL, duration_s = ?, reset_s = ?, operator_reset_s = ?,
       replay_spec = ?, meta = ?, evaluation = ?, finished_at = ?, judged_by = NULL, progress = NULL, label_note = NULL, operator_label_s = ? WHERE id = ?`,
  ).run(o.cellId, o.durationS, o.resetS, o.operatorResetS ?? null, o.replaySpecJson, o.metaJson, o.evaluationJson, o.finishedAt, o.waitedS, episodeId);
  // The UPDATE above leaves `interruptions` as read.
  if (o.attempt) await supersedeLinkLostEstimate(db, row, o.cellId, o.attempt);
  return true;
}

/** Zeroes the estimated time of the "link_lost" interruption of `attempt` on `cellId` (now reported finished). */
async function supersedeLinkLostEstimate(db: Db, row: EpisodeRow, cellId: string, attempt: number): Promise<void> {
  const episodeId = row.id;
  const list = JSON.parse(row.interruptions) as Interruption[];
  const entry = list.find((i) => i.attempt === attempt && i.cell === cellId && i.reason === "link_lost" && i.duration_s > 0);
  if (!entry) return;
  entry.detail = `${entry.detail}; the cell then reported the attempt finished, so it is metered as finished (estimated ${entry.duration_s} s dropped)`;
  entry.duration_s = 0;
  await db.prepare("UPDATE episodes SET interruptions = ? WHERE id = ?").run(JSON.stringify(list), episodeId);
}

/**
 * assigned/running on `cellId` -> pending, appending the interruption. Returns false (and writes
 * nothing) when the episode is not held by that cell any more.
 */
export async function requeueEpisode(db: Db, episodeId: string, cellId: string, interruption: Omit<Interruption, "attempt" | "cell">): Promise<boolean> {
  const row = await getEpisode(db, episodeId);
  if (!row || (row.status !== "assigned" && row.status !== "running") || row.cell_id !== cellId) return false;
  transitionEpisode(row.status, "pending");
  const list = JSON.parse(row.interruptions) as Interruption[];
  list.push({ attempt: row.attempt, cell: cellId, ...interruption });
  await db.prepare("UPDATE episodes SET status = 'pending', cell_id = NULL, interruptions = ? WHERE id = ?").run(JSON.stringify(list), episodeId);
  return true;
}

/**
 * Completes an interruption the coordinator recorded as "link_lost" (it saw the cell's stream end
 * first) with the cell's own account, which arrives after the cell comes back (e.g. "agent_restart"
 * from a crashed agent): the entry for `attempt` on `cellId` takes the cell's reason, and its
 * detail keeps both. The entry is amended, not added, so the attempt still counts once. Returns
 * false when there is no such entry.
 */
export async function amendLinkLostInterruption(db: Db, episodeId: string, cellId: string, attempt: number, reason: string, detail: string): Promise<boolean> {
  const row = await getEpisode(db, episodeId);
  if (!row) return false;
  const list = JSON.parse(row.interruptions) as Interruption[];
  const entry = list.find((i) => i.attempt === attempt && i.cell === cellId && i.reason === "link_lost");
  if (!entry || reason === "link_lost") return false;
  entry.detail = `${entry.detail}; the cell then reported ${reason}: ${detail}`;
  entry.reason = reason;
  await db.prepare("UPDATE episodes SET interruptions = ? WHERE id = ?").run(JSON.stringify(list), episodeId);
  return true;
}

/** The episode `cellId` finished most recently (status done), or undefined: the station's "previous episode". */
export async function lastFinishedEpisodeOfCell(db: Db, cellId: string): Promise<EpisodeRecord | undefined> {
  const row = await db
    .prepare("SELECT * FROM episodes WHERE cell_id = ? AND status = 'done' ORDER BY finished_at DESC, id DESC LIMIT 1")
    .get(cellId) as EpisodeRow | undefined;
  return row ? episodeRecordOf(row) : undefined;
}

/**
 * done -> pending: a person marked the finished attempt invalid. Its outcome is cleared (it never
 * counts in n) and kept in an "invalidated" interruption entry with the reason, the note and the
 * attempt's robot time (duration + reset, still metered) and operator time. Returns false, writing
 * nothing, when the episode is not done. The caller sets aside the attempt's artifacts.
 */
export async function invalidateEpisode(db: Db, episodeId: string, entry: { reason: InvalidReason; note: string | null; at: string }): Promise<boolean> {
  const row = await getEpisode(db, episodeId);
  if (!row || row.status !== "done") return false;
  transitionEpisode(row.status, "pending");
  const list = JSON.parse(row.interruptions) as Interruption[];
  list.push({
    attempt: row.attempt, cell: row.cell_id, reason: "invalidated",
    detail: `marked invalid at the operator station: ${INVALID_REASON_WORDS[entry.reason]}${entry.note ? ` (${entry.note})` : ""}`,
    at: entry.at, duration_s: (row.duration_s ?? 0) + (row.reset_s ?? 0),
    ...(row.operator_reset_s ? { operator_reset_s: row.operator_reset_s } : {}),
    invalidated: { reason: entry.reason, note: entry.note, outcome: row.outcome },
  });
  await db.prepare(
    `UPDATE episodes SET status = 'pending', cell_id = NULL, outcome = NULL, failure_cluster = NULL, duration_s = NULL, reset_s = NULL,
       operator_reset_s = NULL, replay_spec = NULL, meta = NULL, evaluation = NULL, finished_at = NULL, judged_by = NULL, progress = NULL,
       label_note = NULL, operator_label_s = NULL, interruptions = ? WHERE id = ?`,
  ).run(JSON.stringify(list), episodeId);
  return true;
}

/** How many episodes the run has, of any status. */
export async function countEpisodesOfRun(db: Db, runId: string): Promise<number> {
  return (await db.prepare("SELECT COUNT(*) AS n FROM episodes WHERE run_id = ?").get(runId) as { n: number }).n;
}

/**
 * Whether the run has an episode still to run or running (pending, assigned or running): the check of
 * every finish, which stops at the first such row instead of counting the run's episodes.
 */
export async function hasOpenEpisodes(db: Db, runId: string): Promise<boolean> {
  return await db.prepare("SELECT 1 AS open FROM episodes WHERE run_id = ? AND status IN ('pending', 'assigned', 'running') LIMIT 1").get(runId) !== undefined;
}

/** Counts of a run's episodes by status. */
export async function countEpisodesByStatus(db: Db, runId: string): Promise<Record<EpisodeStatus, number>> {
  const counts: Record<EpisodeStatus, number> = { pending: 0, assigned: 0, running: 0, done: 0, cancelled: 0, unlabelled: 0 };
  const rows = await db.prepare("SELECT status, COUNT(*) AS n FROM episodes WHERE run_id = ? GROUP BY status").all(runId) as Array<{ status: EpisodeStatus; n: number }>;
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}
