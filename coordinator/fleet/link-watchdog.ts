/**
 * The link watchdog: disconnects cells that went silent, and requeues episodes held by cells that
 * have not come back since this coordinator started (a disconnect while running requeues at once,
 * so only a restart leaves such orphans).
 */
import { LinkError } from "../errors/link-errors.js";
import { listHeldEpisodes } from "../store/episodes-repo.js";
import { requeueHeldBy } from "./episode-messages.js";
import type { LinkContext } from "./link-context.js";
import { singleFlight } from "../async/single-flight.js";

export interface LinkWatchdogOptions {
  /** A cell silent this long is disconnected, and orphans are requeued once this long has passed since start. */
  heartbeatTimeoutMs: number;
  /** Check period; the watchdog checks at least once a second. */
  heartbeatIntervalMs: number;
}

/** Starts the periodic check (one at a time); returns its stop function, which waits for a check in progress. */
export function startLinkWatchdog(ctx: LinkContext, options: LinkWatchdogOptions): () => Promise<void> {
  const clockMs = () => ctx.now().getTime();
  const startedAtMs = clockMs();
  const tick = singleFlight(async () => {
      for (const session of ctx.registry.silentSessions(options.heartbeatTimeoutMs)) {
        ctx.logger.warn(`cell ${session.cellId}: silent for more than ${options.heartbeatTimeoutMs} ms; treating it as disconnected`);
        session.close(new LinkError("heartbeat_timeout", `no message for ${options.heartbeatTimeoutMs} ms; reconnect`));
      }
      if (clockMs() - startedAtMs > options.heartbeatTimeoutMs) {
        for (const cellId of new Set((await listHeldEpisodes(ctx.db)).map((e) => e.cell_id))) {
          if (!cellId || ctx.registry.session(cellId)) continue;
          // On a shared database, a cell may hold its episode through another coordinator (or one
          // that died moments ago and whose cells are still reconnecting elsewhere).
          if (await ctx.cluster?.heldElsewhere(cellId, options.heartbeatTimeoutMs)) continue;
          await requeueHeldBy(ctx, cellId, "link_lost", `cell ${cellId} has not reconnected since the coordinator started`);
        }
      }
  }, (error) => ctx.logger.error(`CellLink watchdog failed: ${(error as Error).stack ?? error}`));
  const timer = setInterval(() => void tick.run(), Math.min(1000, options.heartbeatIntervalMs));
  timer.unref();
  return async () => {
    clearInterval(timer);
    await tick.idle();
  };
}
