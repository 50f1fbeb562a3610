/**
 * A cell's camera, live, as MJPEG in an <img>: GET /v1/streams/{cell} gives each camera an
 * `mjpeg_url` whose signed token is the credential (an <img> cannot send the key). The stream is
 * closed when the view is stopped or the page is left, so the cell stops sending frames.
 */
import { api, ApiError, localPath } from "./api.js";
import { h } from "./dom.js";

/** A 1x1 GIF: pointing the <img> at it ends the open MJPEG request at once. */
const BLANK = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";

/** One camera picture: `play(url)` starts it, `stop()` ends the stream. */
export function cameraImage(label) {
  const img = h("img", { class: "camera", alt: label, decoding: "async" });
  return {
    img,
    play(url) { img.src = localPath(url); },
    stop() {
      img.src = BLANK;
      img.removeAttribute("src");
    },
  };
}

/**
 * A live view that follows whichever cell the caller names: `show(cell)` (the cell a run's status
 * event names), `stop()`. `camera` picks the camera by name (default: the first, usually `top`).
 */
export function liveCamera({ signal, camera } = {}) {
  const note = h("p", { class: "muted small" });
  const caption = h("figcaption", {});
  const picture = cameraImage("Live camera");
  const element = h("figure", { class: "live", hidden: true }, picture.img, caption);
  const wrap = h("div", {}, element, note);
  let cell = null;
  signal?.addEventListener("abort", () => picture.stop(), { once: true });

  async function show(next) {
    if (!next || next === cell) return;
    cell = next;
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
    } catch (error) {
      if (signal?.aborted) return;
      cell = null;
      note.textContent = error instanceof ApiError && error.code === "not_found"
        ? `Cell ${next} is not running this run's work right now; the view returns with its next episode.`
        : error instanceof ApiError && error.code === "insufficient_scope"
          ? "This key cannot watch cameras (it needs streams:read)."
          : `The live view is unavailable: ${error.message}`;
    }
  }

  function stop() {
    picture.stop();
    element.hidden = true;
    cell = null;
  }
  return { element: wrap, show, stop, get cell() { return cell; } };
}
