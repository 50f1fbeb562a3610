/**
 * One cell for technicians: every camera live (MJPEG), its state, run and episode
 * (GET /v1/streams/{cell}, refreshed every 5 s) and its record in the fleet (GET /v1/cells).
 */
import { api } from "../api.js";
import { facts, h, replace } from "../dom.js";
import { when } from "../format.js";
import { cameraImage } from "../live-camera.js";
import { badge, errorSlot } from "../ui.js";
import { STATE_WORDS } from "./fleet.js";

const REFRESH_MS = 5000;

export async function cellPage(ctx) {
  const id = ctx.params[0];
  ctx.setTitle(`Cell ${id}`);
  const { signal } = ctx;
  const errors = errorSlot();
  const head = h("div", {});
  const cams = h("div", { class: "cameras" });
  const pictures = new Map();
  let timer = null;
  ctx.cleanup(() => { clearTimeout(timer); for (const p of pictures.values()) p.stop(); });

  async function refresh() {
    try {
      const [cells, d] = await Promise.all([api("/v1/cells", { signal }), api(`/v1/streams/${encodeURIComponent(id)}`, { signal })]);
      const cell = cells.data.find((c) => c.id === id);
      errors.clear();
      replace(head, h("p", {}, badge(d.state), " ", STATE_WORDS[d.state] ?? d.state), facts([
        ["Robot", d.robot],
        ["Environment", d.environment],
        ["Link", cell?.connected ? ["connected since ", when(cell.connected_at)] : ["offline, last seen ", when(cell?.last_seen)]],
        ["Run", d.run_id ?? "none"],
        ["Episode", d.episode ? `#${d.episode.index} (${d.episode.id})` : "none"],
        ["Viewers", String(d.viewers)],
        ["Enrolled", cell ? when(cell.created) : null],
      ]));
      for (const cam of d.cameras) {
        const playing = pictures.get(cam.name);
        // The token in a playing URL expires (and its stream ends): play this descriptor's fresh URL.
        if (playing?.stale()) playing.play(cam.mjpeg_url);
        if (playing) continue;
        const picture = cameraImage(`Live ${cam.name} camera of cell ${id}`);
        pictures.set(cam.name, picture);
        picture.play(cam.mjpeg_url);
        cams.append(h("figure", { class: "live" }, picture.img, h("figcaption", {}, `${cam.name}: ${cam.width} × ${cam.height}, ${cam.rate_hz} Hz (viewers get at most ${d.max_frame_rate_hz} frames/s)`)));
      }
      if (d.cameras.length === 0 && pictures.size > 0) {
        for (const p of pictures.values()) p.stop();
        pictures.clear();
        cams.replaceChildren(h("p", { class: "muted" }, "No cameras while the cell is offline."));
      }
    } catch (error) {
      if (signal.aborted) return;
      errors.show(error);
    }
    timer = setTimeout(() => void refresh(), REFRESH_MS);
  }

  ctx.show(h("p", { class: "small" }, h("a", { href: "#/fleet" }, "← Fleet")), h("h1", { tabindex: "-1" }, `Cell ${id}`), errors.element, head, h("h2", {}, "Cameras"), cams);
  await refresh();
}
