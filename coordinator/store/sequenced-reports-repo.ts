/**
 * A cell's sequenced EpisodeStarted and EpisodeFinished applied together with their seq in as few round trips as
 * possible (issue 29: one coordinator on PostgreSQL serving 512 cells). On PostgreSQL each is ONE statement, a
 * data-modifying CTE that is atomic by itself, so it needs no BEGIN or COMMIT: a start was four round trips (BEGIN,
 * the seq, the episode, COMMIT), a finish seven (BEGIN, the seq, the run, the episode read, its update, COMMIT, then
 * the account's budget). On SQLite the same moves run as several statements in one transaction (its transactions are
 * serial and cost no round trip).
 *
 * Each applies only in the usual case and otherwise changes nothing and says so (`undefined` / false), and the caller
 * then applies the message on its transactional path (fleet/episode-messages.ts), which handles every case: a resend
 * or a gap in seq, an unknown episode, a run's first start, a kind that decides as episodes finish, a run that ended,
 * an episode that moved. So a crash at any point loses nothing: the statement commits the seq with the message's body
 * or commits nothing, and the agent resends what was not acked.
 */
import { transitionEpisode } from "../domain/episode-state.js";
import type { Db } from "./database.js";
import { markEpisodeDoneIfUnmoved, markEpisodeRunningOfStartedRun, getEpisodeSharingRunLock, type EpisodeOutcome, type EpisodeRow } from "./episodes-repo.js";
import { advanceLastSeqApplied } from "./cells-repo.js";
import { insertPendingArtifact } from "./artifacts-repo.js";
import { insertPendingDelivery, insertWebhookEvent, listEndpointSubscriptions } from "./webhooks-repo.js";
import { FINISH_IN_SEQUENCE_SQL } from "./run-row-sql.js";
import { getRun, pinnedImagesWith, runRecordOf, type RunRecord, type RunRow } from "./runs-repo.js";
import { findBudget } from "./budgets-repo.js";

/**
 * PostgreSQL: the cell's seq moves from seq - 1 to seq (the cell's row locked first, as advanceLastSeqApplied does)
 * and the episode from assigned to running on that cell, in one statement, when its run is past `scheduling`
 * (markEpisodeRunningOfStartedRun's move, which takes no run lock): both or neither.
 */
const START_IN_SEQUENCE_SQL = `
WITH cell AS (
  SELECT id FROM cells WHERE id = @cellId AND last_seq_applied = @seq::bigint - 1 FOR UPDATE
), started AS (
  UPDATE episodes SET status = 'running', started_at = @at WHERE id = @episodeId AND status = 'assigned' AND cell_id = @cellId
    AND (SELECT status FROM runs WHERE runs.id = episodes.run_id) NOT IN ('queued', 'scheduling') AND EXISTS (SELECT 1 FROM cell)
  RETURNING id
), seq AS (
  UPDATE cells SET last_seq_applied = @seq::bigint WHERE id = @cellId AND EXISTS (SELECT 1 FROM started) RETURNING id
)
SELECT COUNT(*) AS applied FROM seq`;

/** Thrown inside the SQLite transaction of a move that does not apply, to roll its seq back. */
class NotApplied extends Error {}

/**
 * EpisodeStarted with seq `seq` of an episode assigned to `cellId` whose run is already running (or has ended): the
 * seq and the move, together. False, changing nothing, in any other case (seq is not the next, the episode is not
 * assigned to the cell, its run is queued or scheduling, it is unknown): apply the message in a transaction.
 */
export async function startEpisodeInSequence(db: Db, cellId: string, seq: number, episodeId: string, at: string): Promise<boolean> {
  transitionEpisode("assigned", "running");
  if (db.dialect === "postgres") {
    const row = await db.prepare(START_IN_SEQUENCE_SQL).get({ cellId, seq, episodeId, at }) as { applied: number } | undefined;
    return (row?.applied ?? 0) > 0;
  }
  try {
    return await db.transaction(async (tx) => {
      if (!await advanceLastSeqApplied(tx, cellId, seq)) return false;
      if (!await markEpisodeRunningOfStartedRun(tx, episodeId, cellId, at)) throw new NotApplied();
      return true;
    });
  } catch (error) {
    if (error instanceof NotApplied) return false;
    throw error;
  }
}

/** What a finish applied in sequence records besides the episode's outcome. */
export interface SequencedFinish {
  cellId: string;
  seq: number;
  /** The episode, and its run and index as its id names them (runs-repo episodeId); the run's row must agree. */
  episodeId: string;
  runId: string;
  idx: number;
  /** Kinds whose finishes may go without the run's lock (no `progress` hook); a run of another kind does not apply. */
  lockFreeKinds: readonly string[];
  /** The container image the episode ran; applies only when the run's resolved_pins hold it already. */
  pin?: { image: string; id: string; repo_digests: readonly string[] };
  outcome: EpisodeOutcome;
  /** Artifacts announced with the finish (file names already checked). */
  artifacts: ReadonlyArray<{ kind: string; fileName: string; bytes: number; sha256: string }>;
  /** A webhook event recorded with the finish, for the run's account, queued to each live endpoint subscribed to its type. */
  event?: { id: string; type: string; created: string; data: string };
}

/** A finish applied in sequence: the run as read under its `FOR KEY SHARE`, the episode as it was before. */
export interface AppliedFinish {
  run: RunRecord;
  episode: Pick<EpisodeRow, "status" | "attempt" | "cell_id">;
  /** Whether the run's account had a hard monthly budget when the finish was applied. */
  hardBudget: boolean;
}

/**
 * EpisodeFinished (success or failure) with seq `f.seq` of an episode held by a cell, of a running run of a kind
 * without a `progress` hook: the seq, the outcome, the artifacts and the webhook event, all or nothing. Undefined,
 * changing nothing, in any other case: apply the message in a transaction (fleet/episode-messages.ts).
 *
 * On PostgreSQL, ONE statement (FINISH_IN_SEQUENCE_SQL), atomic by itself, in the order the transactional finish
 * without the run's lock takes its locks (docs/store.md, "Finishing without the run's lock"): the cell's row FOR UPDATE
 * with its seq at seq - 1; the run's row FOR KEY SHARE, which the run's other finishes share and which an ending's
 * FOR UPDATE waits for (so the ending's result counts this episode, or this finish reads the run ended and does not
 * apply); the episode's guarded UPDATE (still in the status, attempt and cell read: of two finishes of one episode
 * one writes it); the seq's UPDATE only when the episode's did. A row locked by another transaction is waited for and
 * read again as that one committed it (READ COMMITTED). Not applied: an episode with a link_lost interruption on a
 * named attempt (its estimate is superseded on the transactional path), a pin the run lacks.
 *
 * It also returns whether the account has a hard monthly budget, read in the same statement: the budget check after
 * the episode (scheduler/budget-guard.ts) reads it otherwise, a round trip after the commit.
 */
export async function finishEpisodeInSequence(db: Db, f: SequencedFinish): Promise<AppliedFinish | undefined> {
  const o = f.outcome;
  if (db.dialect === "postgres") {
    const row = await db.prepare(FINISH_IN_SEQUENCE_SQL).get({
      cellId: f.cellId, seq: f.seq, runId: f.runId, episodeId: f.episodeId, idx: f.idx, attempt: o.attempt ?? 0,
      lockFreeKinds: JSON.stringify(f.lockFreeKinds),
      pinImage: f.pin?.image ?? null, pinId: f.pin?.id ?? null, pinDigests: JSON.stringify(f.pin?.repo_digests ?? []),
      outcome: o.outcome, failureCluster: o.failureCluster, durationS: o.durationS, resetS: o.resetS, operatorResetS: o.operatorResetS ?? null,
      replaySpec: o.replaySpecJson, meta: o.metaJson, evaluation: o.evaluationJson, finishedAt: o.finishedAt,
      judgedBy: o.label ? o.label.judgedBy ?? "human" : null, progress: o.label?.progress ?? null, labelNote: o.label?.note ?? null, operatorLabelS: o.label?.waitedS ?? null,
      artifacts: JSON.stringify(f.artifacts.map((a) => ({ kind: a.kind, file_name: a.fileName, bytes: a.bytes, sha256: a.sha256.toLowerCase() }))),
      eventId: f.event?.id ?? null, eventType: f.event?.type ?? null, eventCreated: f.event?.created ?? null, eventData: f.event?.data ?? null,
    }) as (RunRow & { held_status: EpisodeRow["status"]; held_attempt: number; held_cell_id: string | null; budget_hard: number | null }) | undefined;
    if (!row) return undefined;
    const { held_status: status, held_attempt: attempt, held_cell_id: cellId, budget_hard: hard, ...run } = row;
    return { run: runRecordOf(run), episode: { status, attempt, cell_id: cellId }, hardBudget: hard === 1 };
  }
  // SQLite: the same moves, one transaction.
  try {
    return await db.transaction(async (tx) => {
      if (!await advanceLastSeqApplied(tx, f.cellId, f.seq)) return undefined;
      const read = await getEpisodeSharingRunLock(tx, f.episodeId);
      const episode = read?.episode;
      const run = episode ? await getRun(tx, episode.run_id) : undefined;
      if (!episode || !run || run.id !== f.runId || episode.idx !== f.idx || run.status !== "running" || !f.lockFreeKinds.includes(run.kind) ||
        (episode.status !== "assigned" && episode.status !== "running") || (o.attempt && episode.interruptions.includes("link_lost")) ||
        (f.pin && pinnedImagesWith(run.resolvedPins, f.pin))) throw new NotApplied();
      if (!await markEpisodeDoneIfUnmoved(tx, episode, o)) throw new NotApplied();
      for (const a of f.artifacts) await insertPendingArtifact(tx, { episodeId: f.episodeId, runId: f.runId, kind: a.kind, fileName: a.fileName, bytes: a.bytes, sha256: a.sha256 });
      if (f.event) {
        const event = f.event;
        await insertWebhookEvent(tx, { id: event.id, account_id: run.accountId, type: event.type, created: event.created, data: event.data });
        for (const endpoint of await listEndpointSubscriptions(tx, run.accountId)) {
          if ((JSON.parse(endpoint.events) as string[]).includes(event.type)) await insertPendingDelivery(tx, event.id, endpoint.id, event.created);
        }
      }
      const budget = await findBudget(tx, run.accountId);
      return { run, episode: { status: episode.status, attempt: episode.attempt, cell_id: episode.cell_id }, hardBudget: budget?.hard === 1 };
    });
  } catch (error) {
    if (error instanceof NotApplied) return undefined;
    throw error;
  }
}
