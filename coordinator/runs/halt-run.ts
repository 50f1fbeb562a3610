/**
 * Halting a run: the one way a run is stopped (budget, monthly cap, queue timeout, e-stop, endpoint
 * timeout). In one transaction the run moves to `stopped` with the error code and message, its
 * pending episodes become `cancelled` and its partial Result (n and ci95 over the `done` episodes;
 * meters over every attempt that ran) is stored; then every cell holding one of its episodes gets
 * CancelEpisode and subscribers get `status: stopped`.
 *
 * An episode the cell finishes anyway is still recorded (its robot time was spent and is billed)
 * and the partial result is recomputed, but the run stays stopped; an episode the cell reports
 * interrupted (or loses) is cancelled instead of going back to pending (`settleEpisodeOfClosedRun`).
 */
import type { ErrorCode } from "../errors/codes.js";
import type { Db } from "../store/database.js";
import { getRunRow, setRunStatus } from "../store/runs-repo.js";
import type { RunEvents } from "./run-events.js";
import type { RunCompleter } from "./run-results.js";
import { isTerminal } from "./run-state.js";

/** Reaches the cells; the fleet registry implements it. */
export interface EpisodeCanceller {
  /** Sends CancelEpisode to the cell if it is connected; returns whether it was sent. */
  cancelEpisode(cellId: string, episodeId: string, reason: string): boolean;
}

export interface HaltContext {
  db: Db;
  runEvents: RunEvents;
  cells: EpisodeCanceller;
  completer: Pick<RunCompleter, "storePartialResult">;
  /** Clock for the status history; default () => new Date(). */
  now?: () => Date;
}

/**
 * Stops `runId` with `code` (shown as `status_detail.code`) and `message`. Returns false, changing
 * nothing, when the run is unknown or already terminal. Call it outside any transaction: the
 * events and CancelEpisode messages go out once the change has committed.
 */
export function haltRun(ctx: HaltContext, runId: string, code: ErrorCode, message: string): boolean {
  const at = (ctx.now ?? (() => new Date()))().toISOString();
  const held = ctx.db.transaction(() => {
    const run = getRunRow(ctx.db, runId);
    if (!run || isTerminal(run.status)) return undefined;
    if (!setRunStatus(ctx.db, runId, "stopped", { cell: null, code, message, at })) return undefined;
    ctx.db.prepare("UPDATE episodes SET status = 'cancelled' WHERE run_id = ? AND status = 'pending'").run(runId);
    ctx.completer.storePartialResult(runId);
    return ctx.db
      .prepare("SELECT id, cell_id FROM episodes WHERE run_id = ? AND status IN ('assigned', 'running') AND cell_id IS NOT NULL ORDER BY idx")
      .all(runId) as Array<{ id: string; cell_id: string }>;
  })();
  if (!held) return false;
  for (const episode of held) ctx.cells.cancelEpisode(episode.cell_id, episode.id, `${code}: ${message}`);
  ctx.runEvents.publish({ runId, type: "status", data: { status: "stopped", cell: null, webrtc: null } });
  return true;
}

/**
 * For an episode just put back to pending (interrupted, link lost): when its run is stopped or
 * failed, cancels it instead and refreshes the partial result (the attempt's time counts). Returns
 * whether the run was closed. Call it inside the transaction that requeued the episode.
 */
export function settleEpisodeOfClosedRun(db: Db, completer: Pick<RunCompleter, "storePartialResult">, episodeId: string): boolean {
  const row = db
    .prepare("SELECT e.run_id, r.status FROM episodes e JOIN runs r ON r.id = e.run_id WHERE e.id = ?")
    .get(episodeId) as { run_id: string; status: string } | undefined;
  if (!row || (row.status !== "stopped" && row.status !== "failed")) return false;
  db.prepare("UPDATE episodes SET status = 'cancelled' WHERE id = ? AND status = 'pending'").run(episodeId);
  completer.storePartialResult(row.run_id);
  return true;
}
