/**
 * Follows a run's event stream (GET /v1/runs/{id}/events): `onStatus({status, cell, webrtc})` and
 * `onEpisode({episode, of, outcome, duration_s})` for the history first, then live. A dropped stream
 * is opened again (the history is sent again on connect, so handlers must be idempotent per
 * episode); it ends for good after a terminal status or when `signal` aborts.
 */
import { readEvents } from "./api.js";

export const TERMINAL = new Set(["completed", "failed", "stopped"]);

const wait = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
});

/** Resolves once the run has ended (or the page was left); rejects only on an API error before any event arrived. */
export async function watchRun(runId, { signal, onStatus, onEpisode, onReconnecting }) {
  let ended = false;
  let connectedOnce = false;
  let delayMs = 1000;
  while (!ended && !signal.aborted) {
    try {
      await readEvents(`/v1/runs/${encodeURIComponent(runId)}/events`, {
        signal,
        onEvent: ({ event, data }) => {
          connectedOnce = true;
          delayMs = 1000;
          if (event === "status") {
            if (TERMINAL.has(data.status)) ended = true;
            onStatus(data);
          } else if (event === "episode") {
            onEpisode(data);
          }
        },
      });
    } catch (error) {
      if (signal.aborted) return;
      if (!connectedOnce) throw error;
    }
    if (!ended && !signal.aborted) {
      onReconnecting?.();
      await wait(delayMs, signal);
      delayMs = Math.min(10_000, delayMs * 2);
    }
  }
}
