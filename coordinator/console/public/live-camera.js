/**
 * A cell's camera, live, as MJPEG in an <img>: GET /v1/streams/{cell} gives each camera an
 * `mjpeg_url` whose signed token is the credential (an <img> cannot send the key). The stream is
 * closed when the view is stopped or the page is left, so the cell stops sending frames.
 */
import { api, ApiError, localPath } from "./api.js";
import { h } from "./dom.js";

/** A 1x1 GIF: pointing the <img> at it ends the open MJPEG request at once. */
const BLANK = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";

/**
 * A stream URL's token lasts 10 minutes, and the coordinator ends the views it opened when it expires:
 * a page that keeps a camera playing plays a fresh URL (from a fresh descriptor) before then.
 */
export const RENEW_MS = 8 * 60_000;

/**
 * One camera picture: `play(url)` starts it, `stop()` ends the stream; `stale()` says the URL playing
 * is older than RENEW_MS (play the next descriptor's URL then).
 */
export function cameraImage(label) {
  const img = h("img", { class: "camera", alt: label, decoding: "async" });
  let playedAt = 0;
  return {
    img,
    play(url) {
      playedAt = Date.now();
      img.src = localPath(url);
    },
    stale() { return playedAt > 0 && Date.now() - playedAt > RENEW_MS; },
    stop() {
      playedAt = 0;
      img.src = BLANK;
      img.removeAttribute("src");
    },
  };
}

/** Attempts to show a cell that answers 404 (between two of the run's episodes) before giving up. */
const RETRIES = 5;
const RETRY_MS = 2000;

/**
 * A live view that follows whichever cell the caller names: `show(cell)` (the cell a run's status
 * event names), `stop()`. `camera` picks the camera by name (default: the first, usually `top`).
 * A customer may watch a cell only while it holds one of the customer's episodes, so a cell caught
 * between two episodes answers 404: the view asks again a few times.
 */
export function liveCamera({ signal, camera } = {}) {
  const note = h("p", { class: "muted small" });
  const caption = h("figcaption", {});
  const picture = cameraImage("Live camera");
  const element = h("figure", { class: "live", hidden: true }, picture.img, caption);
  const wrap = h("div", {}, element, note);
  let cell = null;
  let retry = null;
  let renew = null;
  let attempts = 0;
  signal?.addEventListener("abort", () => { clearTimeout(retry); clearTimeout(renew); picture.stop(); }, { once: true });
  // The stream itself was refused (the cell moved on between the descriptor and the connection): ask again.
  picture.img.addEventListener("error", () => {
    const failed = cell;
    if (!failed || signal?.aborted || attempts >= RETRIES) return;
    cell = null;
    element.hidden = true;
    retry = setTimeout(() => void show(failed, attempts + 1), RETRY_MS);
  });

  async function show(next, attempt = 0) {
    if (!next || next === cell) return;
    clearTimeout(retry);
    clearTimeout(renew);
    cell = next;
    attempts = attempt;
    try {
      const d = await api(`/v1/streams/${encodeURIComponent(next)}`, { signal });
      const cam = d.cameras.find((c) => c.name === camera) ?? d.cameras[0];
      if (!cam) {
        note.textContent = `Cell ${next} has no camera to show.`;
        return;
      }
      picture.img.alt = `Live ${cam.name} camera of cell ${next}`;
      caption.textContent = `Cell ${next} · ${cam.name} camera · ${d.robot} in ${d.environment} · live, up to ${d.max_frame_rate_hz} frames/s`;
      picture.play(cam.mjpeg_url);
      element.hidden = false;
      note.textContent = "";
      // Before the URL's token expires (and the coordinator ends the stream), play a fresh one.
      renew = setTimeout(() => {
        if (cell !== next || signal?.aborted) return;
        cell = null;
        void show(next);
      }, RENEW_MS);
    } catch (error) {
      if (signal?.aborted || cell !== next) return;
      cell = null;
      if (error instanceof ApiError && error.code === "not_found" && attempt < RETRIES) retry = setTimeout(() => void show(next, attempt + 1), RETRY_MS);
      note.textContent = error instanceof ApiError && error.code === "not_found"
        ? `Cell ${next} is not running this run's work right now; the view returns with its next episode.`
        : error instanceof ApiError && error.code === "insufficient_scope"
          ? "This key cannot watch cameras (it needs streams:read)."
          : `The live view is unavailable: ${error.message}`;
    }
  }

  function stop() {
    clearTimeout(retry);
    clearTimeout(renew);
    picture.stop();
    element.hidden = true;
    cell = null;
  }
  return { element: wrap, show, stop, get cell() { return cell; } };
}
