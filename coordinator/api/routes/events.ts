/**
 * GET /v1/runs/{run_id}/events: server-sent events. On connect: one `status` event with the run's
 * current status, then one `episode` event per finished episode in index order (history for a late
 * subscriber), then live events. The stream ends after a terminal `status` event; a comment line is
 * sent every heartbeat period so proxies keep it open.
 *
 * Open streams are capped per key and per account (coordinator/streams/connection-caps.ts: 429
 * rate_limited past the cap, before the stream starts), a stream with no event for `sseIdleMs` is closed (a client reconnects and gets the history again), and so is one whose
 * client stops reading (more than MAX_BUFFERED_BYTES waiting), so nobody can hold sockets and memory
 * without bound.
 *
 * The `webrtc` URL of a `status` event is minted for the subscriber's key: a key with streams:read
 * gets a signalling URL whose token names the key and the run; any other key gets null, so a key
 * that may read a run but not watch it learns nothing from its events that opens a live view.
 */
import { STREAM_SCOPE, statusEventStreamUrl } from "../../auth/stream-tokens.js";
import { Router, type Response } from "express";
import { authOf } from "../../auth/authenticate.js";
import type { EpisodeEventData, RunEvent, StatusEventData } from "../../runs/run-events.js";
import { isTerminal, type RunStatus } from "../../domain/run-state.js";
import { listDoneEpisodesPage } from "../../store/done-episodes-repo.js";
import { nextTurn } from "../../async/next-turn.js";
import { drainedOrClosed } from "../../http/json-list-stream.js";
import { getRun, lastStatusCell } from "../../store/runs-repo.js";
import { serialQueue } from "../../async/serial-queue.js";
import type { CompiledApiDeps } from "../api-deps.js";
import { requireRun } from "./runs.js";

function writeEvent(res: Response, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Finished episodes read per step of a new subscriber's history. */
const HISTORY_PAGE = 200;

/** A client further behind than this is not reading: its stream is closed. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

export function eventsRouter(deps: CompiledApiDeps, router: Router = Router()): Router {
  const idleMs = deps.sseIdleMs;

  router.get("/runs/:runId/events", async (req, res) => {
    const { keyId, accountId, scope } = authOf(res);
    const run = await requireRun(deps.db, accountId, req.params.runId);
    // Counted from here (a finished run's stream too, however briefly), so nothing opens past the cap.
    const release = deps.connectionCaps.acquire("event_streams", keyId, accountId);
    res.on("close", release);
    const mayWatch = scope.includes(STREAM_SCOPE);
    const webrtcOf = async (cell: string | null): Promise<string | null> =>
      cell && mayWatch ? await statusEventStreamUrl(deps.db, deps.urls.streamsUrl, run.id, cell, deps.clock(), keyId) : null;
    res.status(200).set({
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    });
    res.flushHeaders();

    // Subscribed before the history is read, so that no event published meanwhile is lost: live
    // events wait, in order, behind the history, and an episode the history already gave is not
    // given again. Each event awaits the store (its webrtc URL), so they are written one at a time.
    const inOrder = serialQueue(() => close());
    const given = new Set<number>();
    let idle = setTimeout(() => close(), idleMs).unref();
    const heartbeat = setInterval(() => {
      if (res.writableLength > MAX_BUFFERED_BYTES) return close();
      res.write(": heartbeat\n\n");
    }, deps.sseHeartbeatMs);
    heartbeat.unref();
    const unsubscribe = deps.runEvents.subscribe(run.id, (event: RunEvent) => void inOrder.push(async () => {
      if (closed) return;
      if (event.type === "episode" && given.has((event.data as EpisodeEventData).episode)) return;
      if (res.writableLength > MAX_BUFFERED_BYTES) return close();
      // The published URL was minted for no key; each subscriber gets its own (or none).
      writeEvent(res, event.type, event.type === "status" ? { ...event.data, webrtc: await webrtcOf(event.data.cell) } : event.data);
      clearTimeout(idle);
      idle = setTimeout(() => close(), idleMs).unref();
      if (event.type === "status" && isTerminal(event.data.status as RunStatus)) close();
    }));
    void inOrder.push(async () => {
      // Read again after subscribing: the run may have moved since requireRun read it.
      const status = ((await getRun(deps.db, run.id))?.status ?? run.status) as RunStatus;
      const cell = status === "scheduling" || status === "running" ? await lastStatusCell(deps.db, run.id) : null;
      const initial: StatusEventData = { status, cell, webrtc: await webrtcOf(cell) };
      if (closed) return;
      writeEvent(res, "status", initial);
      // The history a page at a time, a turn of the event loop between pages (and the client's socket drained):
      // read in one piece, a 10,000-episode run's held the loop for every other request.
      for (let afterIdx = -1; ;) {
        const page = await listDoneEpisodesPage(deps.db, run.id, {}, afterIdx, HISTORY_PAGE);
        if (closed) return;
        for (const episode of page) {
          const data: EpisodeEventData = { episode: episode.idx + 1, of: run.episodesTotal, outcome: episode.outcome!, duration_s: episode.durationS ?? 0 };
          given.add(data.episode);
          writeEvent(res, "episode", data);
        }
        if (page.length < HISTORY_PAGE) break;
        afterIdx = page[page.length - 1].idx;
        if (res.writableNeedDrain) await drainedOrClosed(res);
        await nextTurn();
        if (closed) return;
      }
      if (isTerminal(status)) close();
    });
    let closed = false;
    function close(): void {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      clearTimeout(idle);
      unsubscribe();
      release();
      // A client this far behind is not reading: an end it will never read would keep its socket.
      if (res.writableLength > MAX_BUFFERED_BYTES) res.destroy();
      else if (!res.writableEnded) res.end();
    }
    res.on("close", close);
  });

  return router;
}
