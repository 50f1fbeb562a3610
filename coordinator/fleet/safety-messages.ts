/**
 * Applying an agent's SafetyEvent. Runs inside the sequenced message's transaction (see
 * episode-messages.ts), so the halt, the webhook and `last_seq_applied` commit together: a
 * coordinator crash can lose none of them, and a resent event is not applied twice.
 *
 *  - estop_triggered: the run whose episode the cell held is halted with `estop_triggered` (partial
 *    results kept), webhook `estop.triggered` {run_id, cell, latency_ms, at} goes to the run's
 *    account, and the registry marks the cell estopped: no work until `estop_reset`.
 *  - protective_stop "policy_endpoint_timeout": the run is halted with `policy_endpoint_timeout`.
 *    The cell itself is fine and keeps taking work.
 *  - estop_reset: the registry clears the cell's e-stop; the scheduler may use it again.
 *
 * The interrupted episode itself arrives next as EpisodeInterrupted (the agent sends it after the
 * SafetyEvent); the run is closed by then, so it is recorded as an interruption and cancelled.
 */
import type { SafetyEvent } from "../../protocol/gen/cell.js";
import { findRunHeldByCell, getEpisode } from "../store/episodes-repo.js";
import { enqueueRunEvent } from "../webhooks/outbox.js";
import type { Tx } from "../store/tx.js";
import type { LinkContext } from "./link-context.js";

/** The run the cell was working for when the event fired: from the event's episode, else the store. */
async function runOfEvent(tx: Tx, cellId: string, event: SafetyEvent): Promise<string | undefined> {
  if (event.episodeId) {
    const episode = await getEpisode(tx, event.episodeId);
    if (episode) return episode.run_id;
  }
  return findRunHeldByCell(tx, cellId);
}

/**
 * Applies `event` from `cellId` in `tx`, the sequenced message's transaction; what it tells the
 * registry and the log runs after that commits, as do the lifecycle's notifications (CancelEpisode,
 * the `stopped` status event).
 */
export async function applySafetyEvent(ctx: LinkContext, tx: Tx, cellId: string, event: SafetyEvent): Promise<void> {
  const at = new Date(event.atMs > 0 ? event.atMs : ctx.now().getTime()).toISOString();
  const runId = event.kind === "estop_reset" ? undefined : await runOfEvent(tx, cellId, event);
  if (event.kind === "estop_triggered") {
    const latency = event.latencyMs >= 0 ? `${event.latencyMs.toFixed(1)} ms` : "torque off NOT confirmed";
    if (runId) {
      await ctx.lifecycle.end(tx, runId, { status: "stopped", code: "estop_triggered", message: `${cellId} emergency stop at ${at}; latency ${latency}; partial results kept` });
      await enqueueRunEvent(tx, runId, "estop.triggered", { run_id: runId, cell: cellId, latency_ms: event.latencyMs, at }, ctx.now());
    }
  } else if (event.kind === "protective_stop" && event.detail === "policy_endpoint_timeout" && runId) {
    await ctx.lifecycle.end(tx, runId, { status: "stopped", code: "policy_endpoint_timeout", message: `the endpoint policy persistently exceeded its latency_budget_ms on ${cellId} (episode ${event.episodeId || "unknown"}) at ${at}; partial results kept; fix the endpoint and resubmit` });
  }
  tx.afterCommit(() => {
    ctx.registry.recordSafetyEvent(cellId, event);
    const where = runId ? `run ${runId}, ` : "";
    ctx.logger.warn(`cell ${cellId}: safety event ${event.kind} (${where}episode ${event.episodeId || "none"}, latency ${event.latencyMs} ms): ${event.detail}`);
    if (event.kind === "estop_reset") ctx.scheduler.kick();
  });
}
