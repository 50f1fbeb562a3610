/**
 * GET /v1/runs/{run_id}/events: server-sent events. On connect: one `status` event with the run's
 * current status, then one `episode` event per finished episode in index order (history for a late
 * subscriber), then live events. The stream ends after a terminal `status` event; a comment line is
 * sent every heartbeat period so proxies keep it open.
 */
import { statusEventStreamUrl } from "../../streams/stream-tokens.js";
import { Router, type Response } from "express";
import { authOf } from "../../auth/authenticate.js";
import type { EpisodeEventData, RunEvent, StatusEventData } from "../../runs/run-events.js";
import { isTerminal, type RunStatus } from "../../runs/run-state.js";
import { listEpisodes } from "../../store/episodes-repo.js";
import { lastStatusCell } from "../../store/runs-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { requireRun } from "./runs.js";

function writeEvent(res: Response, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export function eventsRouter(deps: CompiledApiDeps): Router {
  const router = Router();

  router.get("/runs/:runId/events", (req, res) => {
    const run = requireRun(deps.db, authOf(res).accountId, req.params.runId);
    res.status(200).set({
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    res.flushHeaders();

    // Everything from here to subscribe() is synchronous (better-sqlite3), so no event published
    // by this process can fall between the history read and the subscription.
    const status = run.status as RunStatus;
    const cell = status === "scheduling" || status === "running" ? lastStatusCell(deps.db, run.id) : null;
    const initial: StatusEventData = { status, cell, webrtc: cell ? statusEventStreamUrl(deps.db, deps.urls.streamsUrl, run.id, cell, deps.clock()) : null };
    writeEvent(res, "status", initial);
    for (const episode of listEpisodes(deps.db, run.id, {})) {
      if (episode.outcome === null) continue;
      const data: EpisodeEventData = { episode: episode.idx + 1, of: run.episodesTotal, outcome: episode.outcome, duration_s: episode.durationS ?? 0 };
      writeEvent(res, "episode", data);
    }
    if (isTerminal(status)) {
      res.end();
      return;
    }

    const heartbeat = setInterval(() => res.write(": heartbeat\n\n"), deps.sseHeartbeatMs);
    heartbeat.unref();
    const unsubscribe = deps.runEvents.subscribe(run.id, (event: RunEvent) => {
      writeEvent(res, event.type, event.data);
      if (event.type === "status" && isTerminal(event.data.status as RunStatus)) close();
    });
    function close(): void {
      clearInterval(heartbeat);
      unsubscribe();
      if (!res.writableEnded) res.end();
    }
    res.on("close", close);
  });

  return router;
}
