/**
 * Applying an agent's sequenced messages. Each one is applied in one SQLite transaction together
 * with `cells.last_seq_applied = seq`, so a message is applied exactly once however often the
 * agent resends it; notifications (run events, scheduler kicks, run completion) are queued on the
 * transaction's handle (`tx.afterCommit`, coordinator/store/tx.ts) and run only after it commits.
 */
import { canonicalFailureCluster } from "../../protocol/failure-clusters.js";
import type { AgentMessage, EpisodeFinished, EpisodeInterrupted, EpisodeStarted } from "../../protocol/gen/cell.js";
import { insertPendingArtifact } from "../store/artifacts-repo.js";
import { advanceLastSeqApplied, lockAndGetCell, setLastSeqApplied } from "../store/cells-repo.js";
import { finishEpisodeInSequence, startEpisodeInSequence } from "../store/sequenced-reports-repo.js";
import {
  addPinnedImage, episodeIdParts, getRun, getRunOfEpisode, lockAndGetRun, lockRun, lockRunOfEpisode, lockRunStatusOfEpisode, pinnedImagesWith, type RunRecord,
} from "../store/runs-repo.js";
import type { RunStatus } from "../domain/run-state.js";
import {
  amendLinkLostInterruption, getEpisode, getEpisodeRecord, getEpisodeSharingRunLock, listEpisodesHeldByCell, listRunIdsHeldByCell, markEpisodeDone,
  markEpisodeDoneIfUnmoved, markEpisodeUnlabelled, markEpisodeRunning, markEpisodeRunningOfStartedRun, requeueEpisode, type EpisodeOutcome, type EpisodeRow,
  type Interruption,
} from "../store/episodes-repo.js";
import { isSafeFileName } from "../artifacts/artifact-store.js";
import { transact, type Tx } from "../store/tx.js";
import { enqueueEvent, outboxEvent } from "../webhooks/outbox.js";
import { allKinds, kindModule } from "../kinds/registry.js";
import type { AccountBudgetRead } from "../scheduler/scheduler.js";
import type { LinkContext } from "./link-context.js";
import { applySafetyEvent } from "./safety-messages.js";

/**
 * Applies one message with seq > 0 unless already applied; returns whether it was applied. The
 * caller acks `seq` either way.
 *
 * On PostgreSQL, an EpisodeFinished of a running run whose kind has no `progress` hook is applied without the run's
 * lock (`finishWithoutRunLock` below); its run's completion is decided after the commit. When that finish meets a case
 * the locked path decides (the run ended meanwhile, the episode moved), its transaction rolls back and the message
 * is applied again under the run's lock.
 */
export async function applySequenced(ctx: LinkContext, cellId: string, message: AgentMessage): Promise<boolean> {
  // On SQLite, whose transactions run one at a time, the locked path costs nothing more, and deciding the run's
  // completion in the finish's own transaction saves a commit (an fsync) per run.
  // A finish of a run known to take its lock (a kind with a progress hook) goes straight to the locked path.
  const named = message.episodeFinished ? episodeIdParts(message.episodeFinished.episodeId) : undefined;
  const lockFree: LockFreeFinish = { allowed: message.episodeFinished !== undefined && ctx.db.dialect === "postgres" && !(named && ctx.finishes.takesLock(named.runId)) };
  let applied: boolean;
  try {
    // The usual start and finish: one statement with the seq (store/sequenced-reports-repo.ts); any other case, or
    // one these do not apply, in a transaction below.
    if (message.episodeStarted && await startEpisodeInSequence(ctx.db, cellId, message.seq, message.episodeStarted.episodeId, isoAt(message.episodeStarted.startedAtMs, ctx.now()))) {
      applied = true;
    } else if (lockFree.allowed && message.episodeFinished && await finishInSequence(ctx, cellId, message.seq, message.episodeFinished, lockFree)) {
      applied = true;
    } else {
      try {
        applied = await applyInTransaction(ctx, cellId, message, lockFree);
      } catch (error) {
        if (!(error instanceof RunLockNeeded)) throw error;
        lockFree.allowed = false;
        lockFree.committed = undefined;
        applied = await applyInTransaction(ctx, cellId, message, lockFree);
      }
    }
  } finally {
    // Whatever happened to this finish, the run's completion is asked by the finish of the run that leaves last here
    // (run-completion.ts), after its episode event; a finish that failed asks too, for those that left before it.
    // The finish itself stands: a completion that fails is logged, and the sweep (run-completion.ts) completes the run.
    const runId = lockFree.entered;
    if (runId !== undefined && ctx.finishes.leave(runId)) {
      await ctx.lifecycle.completeIfFinished(ctx.db, runId).catch((error: unknown) => {
        ctx.logger.error(`run ${runId}: deciding its completion after a finish failed (the sweep completes it): ${(error as Error).stack ?? String(error)}`);
      });
    }
  }
  const run = lockFree.committed;
  if (run) {
    try {
      // The run's account and caps never change: the record read at the finish serves the budget checks.
      await ctx.scheduler.episodeMetered(run.id, run, lockFree.account);
    } finally {
      // Kicked once the run's completion is settled (see onFinished): the cell is free.
      ctx.scheduler.kickLocal();
    }
  }
  if (!applied) ctx.metrics.seqDedupes.inc();
  return applied;
}

/** The kinds without a `progress` hook: their finishes of a running run go without the run's lock. */
function lockFreeKinds(): string[] {
  return allKinds().filter((kind) => !kind.progress).map((kind) => kind.name);
}

/**
 * EpisodeFinished (success or failure) applied as one statement with its seq (finishEpisodeInSequence: on PostgreSQL
 * no BEGIN or COMMIT): the usual finish without the run's lock (finishWithoutRunLock below, whose reasoning holds
 * here unchanged). True when applied; its effects have then run, in the order the transactional path queues them.
 * False, having changed nothing, in any other case (seq not the next, a kind with a hook, a run not running, a moved
 * episode, a new image pin, a link_lost estimate to supersede): the caller applies the message in a transaction.
 */
async function finishInSequence(ctx: LinkContext, cellId: string, seq: number, finished: EpisodeFinished, lockFree: LockFreeFinish): Promise<boolean> {
  if (finished.outcome !== "success" && finished.outcome !== "failure") return false;
  const outcome = finished.outcome;
  // The run as the episode's id names it (checked against the episode's row by the statement): entered before the
  // statement commits, as finishWithoutRunLock enters before its commit.
  const named = episodeIdParts(finished.episodeId);
  if (!named) return false;
  const episodeId = finished.episodeId;
  const unsafe = finished.artifacts.filter((ref) => !isSafeFileName(ref.fileName));
  const now = ctx.now();
  ctx.finishes.enter(named.runId);
  let result: Awaited<ReturnType<typeof finishEpisodeInSequence>>;
  try {
    result = await finishEpisodeInSequence(ctx.db, {
      cellId, seq, episodeId, runId: named.runId, idx: named.idx, lockFreeKinds: lockFreeKinds(), pin: policyImageOf(finished.metaJson),
      outcome: doneOutcome(ctx, cellId, finished, outcome),
      artifacts: finished.artifacts.filter((ref) => isSafeFileName(ref.fileName)),
      event: outcome === "failure"
        ? outboxEvent("episode.failed", {
          run_id: named.runId, episode_id: episodeId, index: named.idx, cluster: canonicalFailureCluster(finished.failureCluster || "unclassified"), duration_s: finished.durationS,
        }, now)
        : undefined,
    });
  } finally {
    // Not applied (or failed: nothing committed): this finish leaves at once; the run's completion is asked only when
    // another finish that committed left meanwhile (FinishesInFlight.leave).
    if (!result! && ctx.finishes.leave(named.runId, false)) await ctx.lifecycle.completeIfFinished(ctx.db, named.runId).catch((error: unknown) => {
      ctx.logger.error(`run ${named.runId}: deciding its completion after a finish failed (the sweep completes it): ${(error as Error).stack ?? String(error)}`);
    });
  }
  if (!result) return false;
  lockFree.entered = named.runId;
  const { run, episode } = result;
  const row = { ...episode, id: episodeId, run_id: run.id, idx: named.idx };
  // Its effects, as the transactional path queues them after its commit (tx.afterCommit): each runs, an error is logged.
  const holder = holderOf(row, cellId, finished);
  if (holder !== cellId && ctx.registry.assignedEpisodeOf(cellId) === episodeId) ctx.registry.setAssigned(cellId, undefined);
  if (holder) {
    await cancelNewerAttempt(ctx, cellId, finished, row, holder).catch((error: unknown) => {
      ctx.logger.error(`cell ${cellId}: telling cell ${holder} to cancel episode ${episodeId} failed: ${(error as Error).stack ?? String(error)}`);
    });
  }
  for (const ref of unsafe) logUnsafeArtifact(ctx, cellId, episodeId, ref.kind, ref.fileName);
  ctx.metrics.episodesFinished.inc({ outcome });
  ctx.runEvents.publish({ runId: run.id, type: "episode", data: { episode: named.idx + 1, of: run.episodesTotal, outcome, duration_s: finished.durationS } });
  lockFree.committed = run;
  lockFree.account = { hardBudget: result.hardBudget };
  return true;
}

/** Thrown in a finish without the run's lock that the locked path must decide: the transaction rolls back and is applied again. */
class RunLockNeeded extends Error {}

/** What applySequenced and a finish without the run's lock tell each other. */
interface LockFreeFinish {
  /** Whether the finish may go without the run's lock (false on the second try). */
  allowed: boolean;
  /** The run whose FinishesInFlight this finish entered. */
  entered?: string;
  /** The run, as the finish read it, once a finish without the run's lock has committed. */
  committed?: RunRecord;
  /** The run's account's budget as the finish read it (finishInSequence), for the budget check after it. */
  account?: AccountBudgetRead;
}

async function applyInTransaction(ctx: LinkContext, cellId: string, message: AgentMessage, lockFree: LockFreeFinish): Promise<boolean> {
  return await transact(ctx.db, async (tx) => {
    // After a failover, a message may be retried on another coordinator: the seq check must see its commit.
    // The usual case, the message after the last applied, is one guarded update that takes the cell's lock;
    // a resend or a gap reads the cell under its lock first. Either way seq is written before the body: a body
    // that takes its run's lock then holds it one round trip less (the transaction commits both or neither).
    if (!await advanceLastSeqApplied(tx, cellId, message.seq)) {
      const cell = await lockAndGetCell(tx, cellId);
      if (!cell || message.seq <= cell.last_seq_applied) return false;
      ctx.logger.warn(`cell ${cellId}: seq jumped from ${cell.last_seq_applied} to ${message.seq}; messages in between never arrived`);
      await setLastSeqApplied(tx, cellId, message.seq);
    }
    await applyBody(ctx, tx, cellId, message, lockFree);
    return true;
  }, { logger: ctx.logger });
}

async function applyBody(ctx: LinkContext, tx: Tx, cellId: string, message: AgentMessage, lockFree: LockFreeFinish): Promise<void> {
  if (message.episodeStarted) await onStarted(ctx, tx, cellId, message.episodeStarted);
  else if (message.episodeFinished) await onFinished(ctx, tx, cellId, message.episodeFinished, lockFree);
  else if (message.episodeInterrupted) await onInterrupted(ctx, tx, cellId, message.episodeInterrupted);
  else if (message.safetyEvent) await applySafetyEvent(ctx, tx, cellId, message.safetyEvent);
  else if (message.heartbeat) {
    const heartbeat = message.heartbeat;
    tx.afterCommit(() => ctx.registry.recordHeartbeat(cellId, heartbeat));
  } else {
    ctx.logger.warn(`cell ${cellId}: sequenced message ${message.seq} has no body this coordinator knows; acked and skipped`);
  }
}

/**
 * The episode a message names, read under its run's lock, with the run as read with the lock: its
 * status only (`lock` "status") or the whole record ("record").
 */
async function knownEpisode(ctx: LinkContext, tx: Tx, cellId: string, episodeId: string, what: string, lock: "status"): Promise<{ episode: EpisodeRow; status: RunStatus } | undefined>;
async function knownEpisode(ctx: LinkContext, tx: Tx, cellId: string, episodeId: string, what: string, lock: "record"): Promise<{ episode: EpisodeRow; run: RunRecord } | undefined>;
async function knownEpisode(ctx: LinkContext, tx: Tx, cellId: string, episodeId: string, what: string, lock: "status" | "record"): Promise<{ episode: EpisodeRow; status?: RunStatus; run?: RunRecord } | undefined> {
  // The run first: its lock orders this message's moves with other coordinators' (runs-repo lockRun),
  // and the episode read after it sees what the lock's previous holder committed.
  const locked = lock === "record" ? { run: await lockRunOfEpisode(tx, episodeId) } : { status: (await lockRunStatusOfEpisode(tx, episodeId))?.status };
  const episode = locked.run || locked.status ? await getEpisode(tx, episodeId) : undefined;
  if (!episode) {
    ctx.logger.warn(`cell ${cellId}: ${what} for unknown episode ${JSON.stringify(episodeId)}; acked and skipped`);
    return undefined;
  }
  return { episode, ...locked };
}

function isoAt(ms: number, fallback: Date): string {
  return ms > 0 ? new Date(ms).toISOString() : fallback.toISOString();
}

async function onStarted(ctx: LinkContext, tx: Tx, cellId: string, started: EpisodeStarted): Promise<void> {
  // Only the run's first start moves the run (scheduling -> running), and only that takes the run's lock.
  // A run already running (or ended) never goes back, so the episode's move needs no run lock: one guarded
  // update, ordered with the run's end and with a requeue by the episode's row, and with this cell's other
  // messages by the cell's row (on PostgreSQL, a finish of the fleet's oldest run would otherwise wait for
  // every start of it, each through a commit).
  const at = isoAt(started.startedAtMs, ctx.now());
  if (await markEpisodeRunningOfStartedRun(tx, started.episodeId, cellId, at)) return;
  // Otherwise: the run's lock and status through the episode's id; the guarded move needs no read of the episode.
  const locked = await lockRunStatusOfEpisode(tx, started.episodeId);
  if (!locked) {
    ctx.logger.warn(`cell ${cellId}: EpisodeStarted for unknown episode ${JSON.stringify(started.episodeId)}; acked and skipped`);
    return;
  }
  if (!await markEpisodeRunning(tx, started.episodeId, cellId, at)) return;
  await ctx.lifecycle.started(tx, locked.runId, cellId, locked.status);
}

/**
 * The container image an episode ran, as its meta reports it (`policy_image`, cell-agent/episode/runner.ts),
 * for the run's `resolved_pins.images`; undefined when there is none or it is malformed.
 */
function policyImageOf(metaJson: string): { image: string; id: string; repo_digests: string[] } | undefined {
  let meta: { policy_image?: { image?: unknown; id?: unknown; repo_digests?: unknown } };
  try {
    meta = JSON.parse(metaJson || "{}") as typeof meta;
  } catch {
    return undefined;
  }
  const pin = meta?.policy_image;
  const short = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= 512;
  if (!pin || !short(pin.image) || !short(pin.id) || !/^sha256:[0-9a-f]{64}$/.test(pin.id)) return undefined;
  const digests = Array.isArray(pin.repo_digests) ? pin.repo_digests.filter(short).slice(0, 16) : [];
  return { image: pin.image, id: pin.id, repo_digests: digests };
}

/**
 * EpisodeFinished. A finish of a running run whose kind has no `progress` hook goes without the run's lock
 * (finishWithoutRunLock); any other (a kind that decides as episodes finish, a run that ended, an unlabelled or
 * malformed outcome, a new image pin for the run's resolved_pins) takes the run's lock, and the kind decides and the
 * run completes in this transaction, as the run's other moves do.
 */
async function onFinished(ctx: LinkContext, tx: Tx, cellId: string, finished: EpisodeFinished, lockFree: LockFreeFinish): Promise<void> {
  if (lockFree.allowed && (finished.outcome === "success" || finished.outcome === "failure") && await finishWithoutRunLock(ctx, tx, cellId, finished, lockFree)) return;
  const known = await knownEpisode(ctx, tx, cellId, finished.episodeId, "EpisodeFinished", "record");
  if (!known) return;
  const { episode, run } = known;
  if (kindModule(run.kind).progress) ctx.finishes.rememberLocked(run.id);
  const holder = holderOf(episode, cellId, finished);
  clearAssignedAfterCommit(ctx, tx, cellId, episode, holder);
  // The scheduler is kicked by the last effect of each path below, once the run's progress is settled: a pass
  // started before that could hand the freed cell another run's episode while this run's end was still being
  // written, and a live view of this run would then close as "the cell moved on" instead of "run ... ended".
  // Here only (kickLocal): a finish frees this coordinator's cell and makes no episode pending, so the other
  // coordinators on the database have nothing new to match (on PostgreSQL, one NOTIFY less per episode).
  if (finished.outcome !== "success" && finished.outcome !== "failure" && finished.outcome !== "unlabelled") {
    ctx.logger.error(`cell ${cellId}: EpisodeFinished for ${episode.id} has outcome ${JSON.stringify(finished.outcome)} (want success, failure or unlabelled); acked and skipped`);
    tx.afterCommit(() => ctx.scheduler.kickLocal());
    return;
  }
  if (finished.outcome === "unlabelled") {
    const label = labelOf(finished.evaluationJson);
    // The person's label never came: listed in the result, never counted in n, not run again.
    const unlabelled = await markEpisodeUnlabelled(tx, episode.id, { ...commonOutcome(ctx, cellId, finished), waitedS: label?.waitedS ?? 0 });
    if (unlabelled) {
      ctx.logger.warn(`cell ${cellId}: episode ${episode.id} ended unlabelled: no person labelled it within the cell's label timeout; it is listed in the result and not counted`);
      await ctx.lifecycle.refreshResult(tx, episode.run_id, run);
    }
    tx.afterCommit(async () => {
      if (ctx.registry.assignedEpisodeOf(cellId) === episode.id) ctx.registry.setAssigned(cellId, undefined);
      if (unlabelled) {
        await ctx.lifecycle.progress(ctx.db, episode.run_id);
        await ctx.scheduler.episodeMetered(episode.run_id, run);
      }
      ctx.scheduler.kickLocal();
    });
    return;
  }
  const outcome = finished.outcome;
  if (!await markEpisodeDone(tx, episode.id, doneOutcome(ctx, cellId, finished, outcome), episode)) {
    // The first finish wins (e.g. a restarted agent's late report beat the reassigned attempt, or
    // the other way round): this one is acked, its outcome and artifacts are not recorded, and the
    // cell's uploads of them are refused (artifact_not_yours / artifact_unknown), which it sets aside.
    ctx.logger.warn(
      `cell ${cellId}: EpisodeFinished for ${episode.id} (attempt ${finished.attempt}) ignored: the episode is already ${episode.status}` +
        `${episode.status === "done" && episode.cell_id ? ` (finished by cell ${episode.cell_id})` : ""}; its artifacts are not recorded`,
    );
    tx.afterCommit(() => ctx.scheduler.kickLocal());
    return;
  }
  await recordFinish(ctx, tx, cellId, finished, outcome, episode, run, holder);
  const pin = policyImageOf(finished.metaJson);
  // A new image pin changes the run's resolved_pins, which its result shows: then the result is refreshed from the run read again.
  const pinned = pin ? await addPinnedImage(tx, episode.run_id, pin) : false;
  // A run halted while this episode ran (even one the halt cancelled after its link dropped) stays
  // stopped; its partial result now counts the episode and its robot time.
  await ctx.lifecycle.refreshResult(tx, episode.run_id, pinned ? undefined : run);
  publishEpisodeAfterCommit(ctx, tx, finished, outcome, episode, run);
  // In this transaction, under the run's lock already held: the kind decides, and the run completes
  // with its last episode (its effects, such as the status event, follow the episode event above).
  await ctx.lifecycle.progress(tx, episode.run_id, pinned ? (await lockAndGetRun(tx, episode.run_id))! : run);
  tx.afterCommit(async () => {
    try {
      // The run's account and caps never change: the record read at the finish serves the budget checks.
      await ctx.scheduler.episodeMetered(episode.run_id, run);
    } finally {
      // Kicked in any case (episodeMetered kicks too; kicks in one tick make one pass): the cell is free.
      ctx.scheduler.kickLocal();
    }
  });
}

/**
 * A finish that holds no lock on its run's row that keeps other finishes out (docs/store.md, "Finishing without the
 * run's lock"): on PostgreSQL the finishes of the fleet's oldest run would otherwise commit one at a time. Returns
 * false, having read only the run, when the locked path must decide (see onFinished); throws RunLockNeeded, to be
 * applied again under the lock, when the run ended or the episode moved after that read. Otherwise the episode is
 * done in this transaction, and applySequenced asks for the run's completion after the commit and the episode event.
 *
 * Why nothing is decided twice or lost:
 * - The episode's row: the outcome is written by one guarded UPDATE (markEpisodeDoneIfUnmoved), so of two finishes
 *   of one episode (two attempts, two coordinators) one records it; the other finds it moved and goes the locked way,
 *   where it is the finish that came second.
 * - The run's row, FOR KEY SHARE (getEpisodeSharingRunLock): the run cannot end (an ending takes FOR UPDATE) until
 *   this commits, so the ending's result counts this episode, or this finish saw the run ended and rolls back.
 * - The run's completion: asked after the commit (lifecycle completeIfFinished). Every finish's question comes after
 *   its own commit, so the last finish to commit sees no episode open (or a finish still under way here, which asks
 *   after it); the ending under the run's lock passes once. A coordinator that stops between the commit and the
 *   question leaves a running run without an open episode: run-completion.ts's sweep completes it.
 */
async function finishWithoutRunLock(ctx: LinkContext, tx: Tx, cellId: string, finished: EpisodeFinished, lockFree: LockFreeFinish): Promise<boolean> {
  const outcome = finished.outcome as "success" | "failure";
  const run = await getRunOfEpisode(tx, finished.episodeId);
  const pin = policyImageOf(finished.metaJson);
  if (!run || run.status !== "running" || kindModule(run.kind).progress || (pin && pinnedImagesWith(run.resolvedPins, pin))) return false;
  // From here the transaction holds the run's row FOR KEY SHARE; it never asks for FOR UPDATE, which would wait for
  // the other finishes holding it, as they might for this one: a case for the lock rolls back instead.
  const read = await getEpisodeSharingRunLock(tx, finished.episodeId);
  const episode = read?.episode;
  if (!episode || read.runStatus !== "running" || (episode.status !== "assigned" && episode.status !== "running")) throw new RunLockNeeded();
  if (!await markEpisodeDoneIfUnmoved(tx, episode, doneOutcome(ctx, cellId, finished, outcome))) throw new RunLockNeeded();
  ctx.finishes.enter(run.id);
  lockFree.entered = run.id;
  const holder = holderOf(episode, cellId, finished);
  clearAssignedAfterCommit(ctx, tx, cellId, episode, holder);
  await recordFinish(ctx, tx, cellId, finished, outcome, episode, run, holder);
  publishEpisodeAfterCommit(ctx, tx, finished, outcome, episode, run);
  tx.afterCommit(() => {
    lockFree.committed = run;
  });
  return true;
}

/**
 * The cell holding a newer attempt of the episode, when this finish is of an earlier one (its cell's link dropped and
 * the episode was reassigned, to another cell or to this one after a restart); it is cancelled once this finish counts.
 */
function holderOf(episode: Pick<EpisodeRow, "status" | "attempt" | "cell_id">, cellId: string, finished: EpisodeFinished): string | undefined {
  return (episode.status === "assigned" || episode.status === "running") && episode.cell_id &&
    (episode.cell_id !== cellId || (finished.attempt > 0 && finished.attempt !== episode.attempt))
    ? episode.cell_id : undefined;
}

function clearAssignedAfterCommit(ctx: LinkContext, tx: Tx, cellId: string, episode: EpisodeRow, holder: string | undefined): void {
  tx.afterCommit(() => {
    // A cell still running the newer attempt stays assigned until it reports that attempt.
    if (holder !== cellId && ctx.registry.assignedEpisodeOf(cellId) === episode.id) ctx.registry.setAssigned(cellId, undefined);
  });
}

function commonOutcome(ctx: LinkContext, cellId: string, finished: EpisodeFinished) {
  return {
    cellId,
    durationS: finished.durationS,
    resetS: finished.resetS,
    operatorResetS: finished.operatorResetS ?? null,
    replaySpecJson: finished.replaySpecJson || null,
    metaJson: finished.metaJson || null,
    evaluationJson: finished.evaluationJson || null,
    finishedAt: isoAt(finished.finishedAtMs, ctx.now()),
    attempt: finished.attempt,
  };
}

function doneOutcome(ctx: LinkContext, cellId: string, finished: EpisodeFinished, outcome: "success" | "failure"): EpisodeOutcome {
  const label = labelOf(finished.evaluationJson);
  return {
    ...commonOutcome(ctx, cellId, finished),
    outcome,
    // An older cell's legacy name is stored under its current one (protocol/failure-clusters.ts).
    failureCluster: outcome === "failure" ? canonicalFailureCluster(finished.failureCluster || null) : null,
    label: label?.judgedBy ? { judgedBy: label.judgedBy, progress: label.judgedBy === "human" ? label.progress : null, note: label.judgedBy === "human" ? label.note : null, waitedS: label.waitedS } : null,
  };
}

/** What a counted finish records with its outcome, on either path: the newer attempt's cancel, the artifacts, the failure webhook. */
async function recordFinish(
  ctx: LinkContext, tx: Tx, cellId: string, finished: EpisodeFinished, outcome: "success" | "failure", episode: EpisodeRow, run: RunRecord, holder: string | undefined,
): Promise<void> {
  // The first finish counts: the cell holding the newer attempt must stop it and not report it finished.
  if (holder) tx.afterCommit(() => cancelNewerAttempt(ctx, cellId, finished, episode, holder));
  for (const ref of finished.artifacts) {
    if (!isSafeFileName(ref.fileName)) {
      logUnsafeArtifact(ctx, cellId, episode.id, ref.kind, ref.fileName);
      continue;
    }
    await insertPendingArtifact(tx, { episodeId: episode.id, runId: episode.run_id, kind: ref.kind, fileName: ref.fileName, bytes: ref.bytes, sha256: ref.sha256 });
  }
  if (outcome === "failure") {
    // Committed with the outcome (durable webhook outbox), to the run's account (as read with the run).
    await enqueueEvent(tx, run.accountId, "episode.failed", {
      run_id: episode.run_id, episode_id: episode.id, index: episode.idx, cluster: canonicalFailureCluster(finished.failureCluster || "unclassified"), duration_s: finished.durationS,
    }, ctx.now());
  }
}

/** Tells the cell holding the newer attempt to cancel it: the first finish counts. */
async function cancelNewerAttempt(ctx: LinkContext, cellId: string, finished: EpisodeFinished, episode: Pick<EpisodeRow, "id" | "attempt">, holder: string): Promise<void> {
  const sent = await ctx.registry.cancelEpisode(holder, episode.id, "finished elsewhere");
  ctx.logger.warn(
    `cell ${cellId}: finished episode ${episode.id} (attempt ${finished.attempt}) after it was reassigned${holder === cellId ? " to it again" : ` to cell ${holder}`} (attempt ${episode.attempt}); ` +
      `the first finish counts${sent ? `, cell ${holder} is told to cancel its attempt` : `; cell ${holder} is not connected, its attempt will be ignored`}`,
  );
}

function logUnsafeArtifact(ctx: LinkContext, cellId: string, episodeId: string, kind: string, fileName: string): void {
  ctx.logger.error(`cell ${cellId}: artifact ${kind} of ${episodeId} has file_name ${JSON.stringify(fileName)}, not a plain file name; not recorded`);
}

function publishEpisodeAfterCommit(ctx: LinkContext, tx: Tx, finished: EpisodeFinished, outcome: "success" | "failure", episode: EpisodeRow, run: RunRecord): void {
  tx.afterCommit(() => {
    ctx.metrics.episodesFinished.inc({ outcome });
    ctx.runEvents.publish({
      runId: run.id,
      type: "episode",
      data: { episode: episode.idx + 1, of: run.episodesTotal, outcome, duration_s: finished.durationS },
    });
  });
}

/**
 * The person's label (or the judge's verdict, judged_by "judge") the cell put in the evaluation JSON
 * (`label: {judged_by, progress, note, waited_s}`), read defensively: a cell's malformed JSON reads as no label.
 */
function labelOf(evaluationJson: string): { judgedBy: "human" | "judge" | null; progress: number | null; note: string | null; waitedS: number | null } | null {
  let label: Record<string, unknown> | undefined;
  try {
    label = (JSON.parse(evaluationJson || "{}") as { label?: Record<string, unknown> }).label;
  } catch {
    return null;
  }
  if (!label || typeof label !== "object") return null;
  const progress = typeof label.progress === "number" && label.progress >= 0 && label.progress <= 100 ? label.progress : null;
  // A judge's verdict that no person was asked about has no labelling time (null, not 0 s of a person's).
  const waitedS = typeof label.waited_s === "number" && label.waited_s >= 0 ? label.waited_s : label.judged_by === "judge" ? null : 0;
  return { judgedBy: label.judged_by === "human" || label.judged_by === "judge" ? label.judged_by : null, progress, note: typeof label.note === "string" ? label.note.slice(0, 2000) : null, waitedS };
}

async function onInterrupted(ctx: LinkContext, tx: Tx, cellId: string, interrupted: EpisodeInterrupted): Promise<void> {
  const episode = (await knownEpisode(ctx, tx, cellId, interrupted.episodeId, "EpisodeInterrupted", "status"))?.episode;
  if (!episode) return;
  const reason = interrupted.reason || "unspecified";
  if (interrupted.attempt > 0 && interrupted.attempt !== episode.attempt) {
    // A late report on an earlier attempt (a restarted agent's outbox, after the stream's end had
    // already requeued the episode and it was assigned again): it completes that attempt's record
    // and must not requeue the attempt now running.
    await amendLinkLostInterruption(tx, episode.id, cellId, interrupted.attempt, reason, interrupted.detail);
    return;
  }
  const requeued = await requeueEpisode(tx, episode.id, cellId, {
    reason,
    detail: interrupted.detail,
    at: ctx.now().toISOString(),
    duration_s: interrupted.durationS,
    ...(interrupted.operatorResetS ? { operator_reset_s: interrupted.operatorResetS } : {}),
  });
  if (requeued) {
    await ctx.lifecycle.settleRequeued(tx, episode.id);
    await failRunOnRepeatedInterruptions(ctx, tx, episode.id);
  } else {
    // Already requeued when the stream ended (a crash, a cut link): the record gets the cell's reason.
    await amendLinkLostInterruption(tx, episode.id, cellId, interrupted.attempt, reason, interrupted.detail);
  }
  tx.afterCommit(async () => {
    if (ctx.registry.assignedEpisodeOf(cellId) === episode.id) ctx.registry.setAssigned(cellId, undefined);
    if (requeued) {
      ctx.metrics.episodesInterrupted.inc({ reason });
      ctx.logger.warn(`cell ${cellId}: episode ${episode.id} attempt ${episode.attempt} interrupted (${reason}: ${interrupted.detail}); back to pending`);
      await ctx.scheduler.episodeMetered(episode.run_id);
    }
    ctx.scheduler.kick();
  });
}

/** An episode interrupted this many times fails its run instead of going back to pending again. */
export const MAX_INTERRUPTED_ATTEMPTS = 5;

/**
 * For an episode just put back to pending: once it has `MAX_INTERRUPTED_ATTEMPTS` interruptions,
 * fails its run (never drops the episode silently, never retries it forever) through the
 * lifecycle, which cancels what is pending, keeps the partial result and tells the cells; the
 * status message names the episode. Call inside the requeue's transaction.
 */
async function failRunOnRepeatedInterruptions(ctx: LinkContext, tx: Tx, episodeId: string): Promise<void> {
  const episode = await getEpisodeRecord(tx, episodeId);
  if (!episode || episode.status !== "pending") return;
  const interruptions = episode.interruptions;
  if (interruptions.length < MAX_INTERRUPTED_ATTEMPTS) return;
  const counts = new Map<string, number>();
  for (const i of interruptions) {
    const what = `${i.reason} on ${i.cell ?? "no cell"}`;
    counts.set(what, (counts.get(what) ?? 0) + 1);
  }
  const reasons = [...counts].map(([what, n]) => (n > 1 ? `${n}x ${what}` : what)).join(", ");
  const message =
    `episode ${episode.idx} (${episode.id}) was interrupted ${interruptions.length} times (${reasons}); the run is failed rather than ` +
    `retried without end. Finished episodes are kept in the partial result; check those cells, then submit the run again`;
  await ctx.lifecycle.end(tx, episode.runId, { status: "failed", message });
}

/**
 * Puts every episode the store says this cell holds back to pending (link lost, agent restart).
 * The attempt's robot time is estimated from the coordinator's clock since EpisodeStarted, capped
 * at the plan's max_duration_s; an attempt that never started counts 0.
 */
export async function requeueHeldBy(ctx: LinkContext, cellId: string, reason: string, detail: string, onlyEpisodeId?: string): Promise<number> {
  const now = ctx.now();
  const meteredRuns = new Set<string>();
  const requeued = await transact(ctx.db, async (tx) => {
    for (const runId of await listRunIdsHeldByCell(tx, cellId)) await lockRun(tx, runId);
    const held = await listEpisodesHeldByCell(tx, cellId);
    let count = 0;
    for (const episode of held) {
      if (onlyEpisodeId !== undefined && episode.id !== onlyEpisodeId) continue;
      const maxS = (await getRun(tx, episode.run_id))?.plan.max_duration_s ?? Infinity;
      const elapsedS = episode.status === "running" && episode.started_at ? Math.max(0, (now.getTime() - Date.parse(episode.started_at)) / 1000) : 0;
      if (await requeueEpisode(tx, episode.id, cellId, { reason, detail, at: now.toISOString(), duration_s: Math.min(elapsedS, maxS) })) {
        count += 1;
        meteredRuns.add(episode.run_id);
        await ctx.lifecycle.settleRequeued(tx, episode.id);
        await failRunOnRepeatedInterruptions(ctx, tx, episode.id);
      }
    }
    return count;
  }, { logger: ctx.logger });
  if (requeued > 0) {
    ctx.metrics.episodesInterrupted.inc({ reason }, requeued);
    ctx.logger.warn(`cell ${cellId}: ${requeued} episode(s) back to pending (${reason}: ${detail})`);
    for (const runId of meteredRuns) await ctx.scheduler.episodeMetered(runId);
    ctx.scheduler.kick();
  }
  return requeued;
}
