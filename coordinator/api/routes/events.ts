/**
 * GET /v1/runs/{run_id}/events: server-sent events. On connect: one `status` event with the run's
 * current status, then one `episode` event per finished episode in index order (history for a late
 * subscriber), then live events. The stream ends after a terminal `status` event; a comment line is
 * sent every heartbeat period so proxies keep it open.
 *
 * Open streams are capped per key and per account (429 rate_limited past the cap), a stream with no
 * event for `idleMs` is closed (a client reconnects and gets the history again), and so is one whose
 * client stops reading (more than MAX_BUFFERED_BYTES waiting), so nobody can hold sockets and memory
 * without bound.
 */
import { statusEventStreamUrl } from "../../streams/stream-tokens.js";
import { Router, type Response } from "express";
import { authOf } from "../../auth/authenticate.js";
import { AssayError } from "../../errors/assay-error.js";
import type { EpisodeEventData, RunEvent, StatusEventData } from "../../runs/run-events.js";
import { isTerminal, type RunStatus } from "../../runs/run-state.js";
import { listEpisodes } from "../../store/episodes-repo.js";
import { lastStatusCell } from "../../store/runs-repo.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { requireRun } from "./runs.js";

function writeEvent(res: Response, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** A client further behind than this is not reading: its stream is closed. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

/** Open event streams by key and by account. */
class StreamCounts {
  private readonly open = new Map<string, number>();

  count(id: string): number {
    return this.open.get(id) ?? 0;
  }

  add(id: string, delta: number): void {
    const n = this.count(id) + delta;
    if (n > 0) this.open.set(id, n);
    else this.open.delete(id);
  }
}

export function eventsRouter(deps: CompiledApiDeps): Router {
  const router = Router();
  const counts = new StreamCounts();
  const { perKey, perAccount, idleMs } = deps.sseLimits;

  router.get("/runs/:runId/events", (req, res) => {
    const { keyId, accountId } = authOf(res);
    const run = requireRun(deps.db, accountId, req.params.runId);
    if (counts.count(`key:${keyId}`) >= perKey || counts.count(`account:${accountId}`) >= perAccount) {
      const which = counts.count(`key:${keyId}`) >= perKey ? `this key has ${perKey}` : `this account has ${perAccount}`;
      throw new AssayError("rate_limited", `${which} event streams open, the most allowed at once; close one (or read a finished run's result instead) and retry`, { retryAfterS: 5 });
    }
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

    counts.add(`key:${keyId}`, 1);
    counts.add(`account:${accountId}`, 1);
    let idle = setTimeout(() => close(), idleMs).unref();
    const heartbeat = setInterval(() => {
      if (res.writableLength > MAX_BUFFERED_BYTES) return close();
      res.write(": heartbeat\n\n");
    }, deps.sseHeartbeatMs);
    heartbeat.unref();
    const unsubscribe = deps.runEvents.subscribe(run.id, (event: RunEvent) => {
      if (res.writableLength > MAX_BUFFERED_BYTES) return close();
      writeEvent(res, event.type, event.data);
      clearTimeout(idle);
      idle = setTimeout(() => close(), idleMs).unref();
      if (event.type === "status" && isTerminal(event.data.status as RunStatus)) close();
    });
    let closed = false;
    function close(): void {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      clearTimeout(idle);
      unsubscribe();
      counts.add(`key:${keyId}`, -1);
      counts.add(`account:${accountId}`, -1);
      if (!res.writableEnded) res.end();
    }
    res.on("close", close);
  });

  return router;
}
