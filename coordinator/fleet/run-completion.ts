/**
 * Completing a run whose finishes take no run lock (fleet/episode-messages.ts, docs/store.md "Finishing without the
 * run's lock"). Such a finish commits the episode's outcome, publishes its `episode` event, and only then asks
 * whether the run is complete (lifecycle `completeIfFinished`: a probe for an open episode, then the ending under the
 * run's lock, which a run passes once).
 *
 * - `FinishesInFlight` (finishes-in-flight.ts) orders one coordinator's finishes of a run: a finish enters before its transaction commits and
 *   leaves once its events are published; only the finish that leaves last asks, so the run's `status` event never
 *   comes before the `episode` event of a finish this coordinator committed earlier.
 * - `startRunCompletionSweep` completes what a stopped coordinator left: a run whose last finish committed but whose
 *   completion was never asked (the process ended between the finish's commit and the question). It looks every
 *   `periodMs` for running runs with no open episode, and asks for a run found two looks in a row (so a finish that
 *   is asking at that moment, here or on another coordinator, goes first) that no finish here is working on.
 *   The same question completes a run that waited `recordingWaitMs` for recordings its cells never uploaded
 *   (runs/recording-wait.ts): under the run's lock, in the lifecycle, so one coordinator of several does it, once,
 *   and a restart loses nothing (the sweep asks again). Each look also refreshes what is shown of the runs still
 *   waiting (recording-waits.ts: status_detail, /metrics, the log) and the overdue and missing recordings' gauges.
 */
import { nextTurn } from "../async/next-turn.js";
import { singleFlight } from "../async/single-flight.js";
import { RECORDING_OVERDUE_MS } from "../runs/recording-wait.js";
import { countOverdueArtifactsByCell, listPendingArtifactsByCell, type PendingArtifactsOfCell } from "../store/artifacts-repo.js";
import { listRunningRunsWithoutOpenEpisodes } from "../store/runs-repo.js";
import type { LinkContext } from "./link-context.js";

/** Time between two looks of the sweep: a run left running with all its episodes finished completes 10 to 20 s after the coordinator (or another one) starts. */
export const RUN_COMPLETION_SWEEP_MS = 10_000;

/**
 * Runs looked at per sweep, oldest first. Every running run with no open episode is looked at on every look (a run
 * waiting for recordings stays in this set for up to recordingWaitMs, so a smaller batch would leave the newer ones
 * unshown and unended behind the older ones); this only bounds one look's work if a store ever holds more.
 */
export const SWEEP_MAX_RUNS = 10_000;

/** Runs a look handles between two turns of the event loop (each costs one or two statements). */
const RUNS_PER_TURN = 50;

export interface RunCompletionSweepOptions {
  /** Time between looks; a run is completed on the second look that finds it. */
  periodMs: number;
}

/**
 * One look of the sweep: asks for completion of the runs that `suspects` (the previous look's finds) and this look
 * both found; returns this look's finds, to pass to the next one.
 */
export async function sweepFinishedRuns(
  ctx: Pick<LinkContext, "db" | "lifecycle" | "finishes" | "logger" | "recordingWaits" | "metrics" | "now">, suspects: ReadonlySet<string>,
): Promise<Set<string>> {
  const found = new Set(await listRunningRunsWithoutOpenEpisodes(ctx.db, SWEEP_MAX_RUNS));
  if (found.size === SWEEP_MAX_RUNS) ctx.logger.warn(`run completion sweep: ${SWEEP_MAX_RUNS} or more running runs have no open episode; the newest beyond ${SWEEP_MAX_RUNS} wait for the older ones to end`);
  const waiting = new Map<string, PendingArtifactsOfCell[]>();
  let handled = 0;
  for (const runId of [...found]) {
    // On SQLite each statement resolves at once: without a turn now and then, a look over many runs is one long turn.
    if (++handled % RUNS_PER_TURN === 0) await nextTurn();
    if (suspects.has(runId) && !ctx.finishes.has(runId)) {
      // Also the end of a wait for recordings: the lifecycle completes the run without them once it is over.
      const waited = ctx.recordingWaits?.reason(runId) !== undefined;
      if (await ctx.lifecycle.completeIfFinished(ctx.db, runId)) {
        // A run that waited for recordings is logged by the lifecycle (completed with or without them).
        if (!waited) ctx.logger.warn(`run ${runId}: completed by the sweep: its last episode finished but its completion was not decided then (a coordinator stopped in between)`);
        found.delete(runId);
        continue;
      }
    }
    const pending = await listPendingArtifactsByCell(ctx.db, runId);
    if (pending.length > 0) waiting.set(runId, pending);
  }
  ctx.recordingWaits?.update(waiting, suspects);
  if (ctx.metrics) {
    const byCell = await countOverdueArtifactsByCell(ctx.db, new Date(ctx.now().getTime() - RECORDING_OVERDUE_MS).toISOString());
    ctx.metrics.recordingsOverdue.reset();
    ctx.metrics.recordingsMissing.reset();
    for (const row of byCell) {
      if (row.overdue > 0) ctx.metrics.recordingsOverdue.set({ cell: row.cellId ?? "" }, row.overdue);
      if (row.missing > 0) ctx.metrics.recordingsMissing.set({ cell: row.cellId ?? "" }, row.missing);
    }
  }
  return found;
}

/** Starts the sweep (one look at a time, the first at once); returns its stop function, which waits for a look in progress. */
export function startRunCompletionSweep(ctx: LinkContext, options: RunCompletionSweepOptions): () => Promise<void> {
  let suspects: ReadonlySet<string> = new Set();
  const look = singleFlight(async () => {
    suspects = await sweepFinishedRuns(ctx, suspects);
  }, (error) => ctx.logger.error(`run completion sweep failed: ${(error as Error).stack ?? error}`));
  void look.run();
  const timer = setInterval(() => void look.run(), options.periodMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await look.idle();
  };
}
