/**
 * The run lifecycle: the one module that moves a run between statuses and the only one that ends
 * a run. Every ending (completed, failed, stopped with a spec error code) goes through `end`,
 * which in one transaction moves the status (coordinator/domain/run-state.ts), cancels the pending
 * episodes, stores the Result (partial for a run that did not complete: n and ci95 over the `done`
 * episodes, meters over every attempt that ran), writes `run.completed` to the webhook outbox and
 * runs the kind's `onEnded` (gate decisions, matrix regressions) so their durable consequences
 * commit with the ending; after the commit it tells the cells holding the run's episodes to
 * cancel, publishes the SSE `status` event and runs the composition root's ended hooks (the webhook
 * worker's kick; exports and streams hook in here).
 *
 * Every method takes the transaction explicitly (coordinator/store/tx.ts): a `Tx` to work in the
 * caller's transaction, whose commit then releases the notifications; `end` and `progress` also
 * take the `Db` itself, and then open their own transaction.
 *
 * A cell that finishes an episode of a run that ended meanwhile still has it recorded (its robot
 * time was spent and is billed): `refreshResult` recomputes the stored result, the status stays.
 */
import { createReplayMemo } from "../kinds/sequential-replay.js";
import { boardsOfRun } from "../leaderboards/published-results.js";
import { getAccount } from "../store/accounts-repo.js";
import type { FirmwarePins } from "../../firmware-pins/pins.js";
import type { ErrorCode } from "../errors/codes.js";
import { kindModule } from "../kinds/registry.js";
import { listPendingArtifactsByCell, markPendingArtifactsMissing } from "../store/artifacts-repo.js";
import type { Db } from "../store/database.js";
import { cancelPendingEpisode, cancelPendingEpisodes, countEpisodesByStatus, getEpisode, hasOpenEpisodes, listHeldEpisodesOfRun } from "../store/episodes-repo.js";
import { readEpisodeRecords } from "../runs/episode-records.js";
import { nextTurn } from "../async/next-turn.js";
import { getRun, lockAndGetRun, lockRunStatus, setRunResult, setRunStatus, type RunRecord, backfilling } from "../store/runs-repo.js";
import { transact, type Tx } from "../store/tx.js";
import { enqueueEvent } from "../webhooks/outbox.js";
import { statusEventStreamUrl } from "../auth/stream-tokens.js";
import { interventionModeOf, interventionSummaryInTurns } from "../runs/interventions.js";
import { operatorSectionsInTurns } from "../runs/operator-time.js";
import type { RunEvents } from "../runs/run-events.js";
import { isTerminal, type RunStatus, type TerminalRunStatus } from "../domain/run-state.js";
import { runView } from "./run-view.js";
import { DEFAULT_RECORDING_WAIT_MS, recordingsMissingMessage, recordingWaitOver } from "../runs/recording-wait.js";

/** Reaches the cells; the fleet registry implements it. */
export interface EpisodeCanceller {
  /** Sends CancelEpisode to the cell if it is connected; returns whether it was sent. */
  cancelEpisode(cellId: string, episodeId: string, reason: string): Promise<boolean>;
}

/** How a run ends. */
export type RunEnding =
  | { status: "completed" }
  | { status: "failed"; message: string }
  | { status: "stopped"; code: ErrorCode; message: string }
  /** Stopped on the customer's request (POST /v1/runs/{id}/cancel): no error code. */
  | { status: "stopped"; code?: undefined; message: string };

export interface RunLifecycleOptions {
  runEvents: RunEvents;
  cells: EpisodeCanceller;
  pins: FirmwarePins;
  /** Public base of the /v1 API (no /v1, no trailing slash), for the Result's URLs. */
  baseUrl: string;
  /** Base of live stream URLs; status events carry `${streamsUrl}/cells/<cell>`. */
  streamsUrl: string;
  /** Run after the commit of every ending, with the ended run. Default none. */
  endedHooks?: ReadonlyArray<(run: RunRecord) => void>;
  /** Clock; default () => new Date(). */
  now?: () => Date;
  /**
   * How long a run whose episodes have all finished waits for recordings its cells have not uploaded, counted from
   * the finish of the newest one's episode; then it completes without them, recorded missing. Default 6 h.
   */
  recordingWaitMs?: number;
  logger?: { error(message: string): void; warn?(message: string): void };
}

export interface RunLifecycle {
  /**
   * queued -> scheduling: the scheduler assigned the run's first episode to `cellId` (in that transaction).
   * `status`: the run's status as the caller read it under the run's lock in `tx` (runs-repo
   * lockRunStatus); without it, the run is locked and read here.
   */
  scheduled(tx: Tx, runId: string, cellId: string, status?: RunStatus): Promise<void>;
  /** scheduling -> running: `cellId` started the run's first episode (in that message's transaction). `status`: as for `scheduled`. */
  started(tx: Tx, runId: string, cellId: string, status?: RunStatus): Promise<void>;
  /**
   * After an episode of the run finished or one of its artifacts was stored: the kind decides
   * (and may stop the run), then the run completes when every episode is done or cancelled, at
   * least one is done, and every recording is stored, or `recordingWaitMs` has passed since the
   * newest pending one's episode finished (then it completes without them, recorded missing).
   * Returns true when it completed the run.
   * `db`: the caller's `Tx`, or the `Db` to open a transaction of its own.
   */
  progress(db: Db, runId: string): Promise<boolean>;
  /**
   * `progress` in the transaction that locked the run and read it (`locked`, runs-repo lockAndGetRun
   * / lockRunOfEpisode; not changed since): the work joins `tx` as it stands, with no savepoint (if
   * it throws, the caller's transaction fails with it), and the run is not read again.
   */
  progress(tx: Tx, runId: string, locked: RunRecord): Promise<boolean>;
  /**
   * After a finish of an episode of the run committed without the run's lock (a kind without a `progress` hook,
   * fleet/episode-messages.ts): one probe for an open episode outside any transaction, and when none is left,
   * `progress` in a transaction of its own, under the run's lock, which checks again and ends the run once. Returns
   * true when it completed the run. Call it on the `Db`, after the finish's commit: a probe after every finish's
   * commit sees all of them, so of two last finishes that commit at once at least one sees none open, and the
   * lock and the ending's own check (a run ends once) let one of them end the run.
   */
  completeIfFinished(db: Db, runId: string): Promise<boolean>;
  /**
   * `progress` as if the wait for recordings were over (the account's admin asked to stop waiting): a run whose
   * episodes have all finished completes now, its recordings not uploaded recorded missing; `by` is logged. Returns
   * true when it completed the run; false, changing nothing, when the run is not running or has episodes to run.
   */
  completeWithoutRecordings(db: Db, runId: string, by: string): Promise<boolean>;
  /**
   * Ends the run; false, changing nothing, when it is unknown or has already ended. `db`: the
   * caller's `Tx`, or the `Db` to open a transaction of its own.
   */
  end(db: Db, runId: string, ending: RunEnding): Promise<boolean>;
  /**
   * Recomputes and stores the Result of a run that has ended (a late finish counted); no-op otherwise.
   * `run`: the run as the caller read it under its lock in `tx` (runs-repo lockAndGetRun /
   * lockRunOfEpisode) and has not changed since; without it, the run is locked and read here.
   */
  refreshResult(tx: Tx, runId: string, run?: RunRecord): Promise<void>;
  /**
   * An episode was just put back to pending: when its run has ended it is cancelled instead and
   * the result refreshed (the attempt's time counts). Returns whether the run had ended.
   */
  settleRequeued(tx: Tx, episodeId: string): Promise<boolean>;
  /** The Result of the run from its episodes as they stand (with its interventions section), read on `db` (a Tx or the Db). */
  resultOf(db: Db, run: RunRecord): Promise<Record<string, unknown>>;
}

export function createRunLifecycle(options: RunLifecycleOptions): RunLifecycle {
  const { runEvents, cells, pins, baseUrl, streamsUrl } = options;
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? console;
  const endedHooks = options.endedHooks ?? [];
  const recordingWaitMs = options.recordingWaitMs ?? DEFAULT_RECORDING_WAIT_MS;
  const transactOptions = { logger };
  // Kinds' sequential tests as each run's last progress left them, so the next continues them (kinds/sequential-replay.ts).
  const replays = createReplayMemo();

  /**
   * The run's Result from all its episodes. Read a page at a time and computed a slice of episodes per turn of the
   * event loop (a 10,000-episode run's completion held it 0.3-0.45 s in one piece); inside the ending's transaction, under the
   * run's lock, which every change to its episodes takes: the episodes read are the ones the Result counts.
   */
  async function resultOf(db: Db, run: RunRecord): Promise<Record<string, unknown>> {
    const episodes = await readEpisodeRecords(db, run.id);
    const result = await kindModule(run.kind).result({ db, pins, baseUrl }, run, episodes);
    await nextTurn();
    const interventions = await interventionSummaryInTurns(interventionModeOf(run.request), episodes, kindModule(run.kind).traits.hasUnits);
    await nextTurn();
    return { ...result, interventions, ...await operatorSectionsInTurns(episodes) };
  }

  async function publishStatus(tx: Tx, runId: string, status: string, cell: string | null): Promise<void> {
    const webrtc = cell ? await statusEventStreamUrl(tx, streamsUrl, runId, cell, now()) : null;
    tx.afterCommit(() => runEvents.publish({ runId, type: "status", data: { status, cell, webrtc } }));
  }

  async function end(db: Db, runId: string, ending: RunEnding): Promise<boolean> {
    return await transact(db, (tx) => endIn(tx, runId, ending), transactOptions);
  }

  /** `locked`: the run as the caller read it under its lock in `tx`; without it, locked and read here. */
  async function endIn(tx: Tx, runId: string, ending: RunEnding, locked?: RunRecord): Promise<boolean> {
    const run = locked ?? await lockAndGetRun(tx, runId);
    if (!run || isTerminal(run.status)) return false;
    const at = now();
    const status: TerminalRunStatus = ending.status;
    await setRunStatus(tx, runId, status, {
      cell: null, at: at.toISOString(),
      ...(ending.status === "stopped" ? { code: ending.code } : {}),
      ...(ending.status !== "completed" ? { message: ending.message } : {}),
    });
    await cancelPendingEpisodes(tx, runId);
    const ended = (await getRun(tx, runId))!;
    const result = await resultOf(tx, ended);
    await setRunResult(tx, runId, result);
    if (status === "completed") {
      await enqueueEvent(tx, run.accountId, "run.completed", { run: runView({ ...ended, result }) }, at);
      // A published run of an opted-in account enters its boards: tell the publisher where.
      const boards = (await getAccount(tx, run.accountId))?.leaderboard_opt_in === 1 ? await boardsOfRun(tx, { ...ended, result }) : [];
      if (boards.length > 0) {
        await enqueueEvent(tx, run.accountId, "leaderboard.entered", { run_id: runId, leaderboards: boards.map((id) => ({ id, url: `${baseUrl}/v1/leaderboards/${id}` })) }, at);
      }
    }
    await kindModule(run.kind).onEnded?.({ tx, pins, baseUrl, now: at, status }, { ...ended, result }, result);
    const held = await listHeldEpisodesOfRun(tx, runId);
    const reason = ending.status === "stopped" ? (ending.code ? `${ending.code}: ${ending.message}` : `cancelled: ${ending.message}`) : ending.status === "failed" ? `the run failed: ${ending.message}` : "the run completed";
    tx.afterCommit(async () => {
      if (ending.status === "failed") logger.error(`run ${runId} failed: ${ending.message}`);
      for (const episode of held) await cells.cancelEpisode(episode.cell_id, episode.id, reason);
    });
    await publishStatus(tx, runId, status, null);
    tx.afterCommit(() => {
      for (const hook of endedHooks) hook({ ...ended, result });
    });
    return true;
  }

  /** The work of `progress`, in `tx`, which holds the run's lock; `run`: the run as read under it. */
  async function progressIn(tx: Tx, runId: string, run: RunRecord | undefined, stopWaitingBy?: string): Promise<boolean> {
    if (!run || run.status !== "running") return false;
    const decision = await kindModule(run.kind).progress?.({ tx, pins, baseUrl, now: now(), replays }, run);
    if (decision) {
      // The kind may have written the run (its kind_state): read again under the lock.
      await endIn(tx, runId, { status: "stopped", ...decision.stop });
      return false;
    }
    // Cancelled episodes (a kind decided early) and unlabelled ones (no person's label came) do not
    // hold completion back; at least one must be done or unlabelled. The usual finish stops at the first
    // open episode; the run's episodes are counted only once none is left.
    if (await hasOpenEpisodes(tx, runId)) return false;
    const counts = await countEpisodesByStatus(tx, runId);
    if (counts.done + counts.unlabelled === 0) return false;
    // Recordings not uploaded yet hold the run, for recordingWaitMs at most (runs/recording-wait.ts).
    const pending = await listPendingArtifactsByCell(tx, runId);
    const at = now();
    if (pending.length > 0 && stopWaitingBy === undefined && !recordingWaitOver(pending, at, recordingWaitMs)) return false;
    // Episodes still being inserted (a large run's creation) are episodes still to run.
    if (await backfilling(tx, runId)) return false;
    if (pending.length > 0) {
      await markPendingArtifactsMissing(tx, runId, at.toISOString());
      const line = recordingsMissingMessage(runId, pending, stopWaitingBy === undefined ? { waitMs: recordingWaitMs } : { by: stopWaitingBy });
      tx.afterCommit(() => (logger.warn ?? logger.error).call(logger, line));
    }
    return endIn(tx, runId, { status: "completed" });
  }

  return {
    async scheduled(tx, runId, cellId, status) {
      if ((status ?? await lockRunStatus(tx, runId)) !== "queued") return;
      await setRunStatus(tx, runId, "scheduling", { cell: cellId, at: now().toISOString() });
      await publishStatus(tx, runId, "scheduling", cellId);
    },
    async started(tx, runId, cellId, status) {
      if ((status ?? await lockRunStatus(tx, runId)) !== "scheduling") return;
      await setRunStatus(tx, runId, "running", { cell: cellId, at: now().toISOString() });
      await publishStatus(tx, runId, "running", cellId);
    },
    progress(db: Db, runId: string, locked?: RunRecord) {
      // With the locked record, `db` is the Tx that locked it (the interface's second form).
      if (locked) return progressIn(db as Tx, runId, locked);
      return transact(db, async (tx) => progressIn(tx, runId, await lockAndGetRun(tx, runId)), transactOptions);
    },
    async completeIfFinished(db, runId) {
      if (await hasOpenEpisodes(db, runId)) return false;
      return transact(db, async (tx) => progressIn(tx, runId, await lockAndGetRun(tx, runId)), transactOptions);
    },
    completeWithoutRecordings(db, runId, by) {
      return transact(db, async (tx) => progressIn(tx, runId, await lockAndGetRun(tx, runId), by), transactOptions);
    },
    end,
    async refreshResult(tx, runId, locked) {
      const run = locked ?? await lockAndGetRun(tx, runId);
      if (run && (run.status === "stopped" || run.status === "failed")) await setRunResult(tx, runId, await resultOf(tx, run));
    },
    async settleRequeued(tx, episodeId) {
      const episode = await getEpisode(tx, episodeId);
      const run = episode ? await getRun(tx, episode.run_id) : undefined;
      if (!run || (run.status !== "stopped" && run.status !== "failed")) return false;
      await cancelPendingEpisode(tx, episodeId);
      await setRunResult(tx, run.id, await resultOf(tx, run));
      return true;
    },
    resultOf,
  };
}
