/**
 * The fleet at a glance, for technicians (operator keys): every cell (GET /v1/cells) with its robot
 * pin, environment, link, e-stop or hold state, current run and episode (GET /v1/streams/{cell}) and
 * its live top camera; enrollment (POST /v1/cells, the token shown once) and revocation
 * (DELETE /v1/cells/{id}). Refreshed every 5 s while the tab is visible. Cells waiting on a person
 * (a scene to set, an episode to judge) come first, longest waiting first, saying what they need and
 * for how long (the same cells page the operator account: cell.attention_needed, docs/operators.md).
 *
 * A browser opens at most 6 connections to one host over HTTP/1.1 and every MJPEG stream holds one,
 * so at most MAX_LIVE cameras play at once; "Show camera" on another cell stops the oldest.
 */
import { api, ApiError } from "../api.js";
import { field, h, options, replace } from "../dom.js";
import { when } from "../format.js";
import { NEEDS_WORDS, needingFirst, waited } from "../attention-words.js";
import { cameraImage } from "../live-camera.js";
import { badge, busy, confirmButton, errorSlot, table } from "../ui.js";

const MAX_LIVE = 4;
const REFRESH_MS = 5000;

/** What a state means at the cell, in words. */
export const STATE_WORDS = {
  idle: "Idle, ready for work",
  busy: "Running an episode",
  running: "Running an episode",
  awaiting_reset: "Waiting for a person to set the scene",
  awaiting_label: "Waiting for a person to judge the episode",
  intervening: "Paused for a person's help",
  estopped: "E-stop pressed: a technician must reset it",
  held: "On hold",
  firmware_mismatch: "Held: firmware does not match its pin",
  offline: "Offline: agent not connected",
  revoked: "Revoked",
};

const OWN_RUNS_ONLY = "This key may watch only cells running its own runs.";

/** The descriptor of a cell, or why there is none. */
async function describe(cell, signal) {
  try {
    return { descriptor: await api(`/v1/streams/${encodeURIComponent(cell)}`, { signal }) };
  } catch (error) {
    if (signal.aborted) throw error;
    return { problem: error instanceof ApiError && error.code === "not_found" ? OWN_RUNS_ONLY : error.message, notFound: error.code === "not_found" };
  }
}

/**
 * Descriptors of the connected cells. Only the operator account watches every cell; another
 * account's admin key may list the fleet yet watch only cells on its own runs. Which one this key
 * is shows on the first idle cell (200 or 404), so an idle cell is asked about once and, for a key
 * that watches only its own runs, idle cells are not asked again (each refusal is a 404 in the log).
 */
async function describeAll(cells, signal, knows) {
  const out = new Array(cells.length).fill(null).map(() => ({}));
  const asked = cells.map((c, i) => [c, i]).filter(([c]) => c.connected && (knows.everyCell !== false || c.state === "busy"));
  const probe = knows.everyCell === undefined ? asked.find(([c]) => c.state !== "busy") : undefined;
  if (probe) {
    out[probe[1]] = await describe(probe[0].id, signal);
    knows.everyCell = !out[probe[1]].notFound;
  }
  await Promise.all(asked.filter((x) => x !== probe && (knows.everyCell !== false || x[0].state === "busy")).map(async ([c, i]) => { out[i] = await describe(c.id, signal); }));
  for (const [i, c] of cells.entries()) if (c.connected && knows.everyCell === false && !out[i].descriptor && !out[i].problem) out[i] = { problem: OWN_RUNS_ONLY };
  return out;
}

export async function fleetPage(ctx) {
  ctx.setTitle("Fleet");
  const { signal } = ctx;
  const robots = await api("/v1/robots", { signal }).catch(() => ({ data: [] }));
  const cards = new Map(); // cell id -> {element, update(cell, described), camera}
  const live = []; // cell ids whose camera plays, oldest first
  const knows = {}; // everyCell: whether this key may watch idle cells (learnt on the first one)
  const grid = h("div", { class: "cells" });
  const revokedSlot = h("div", {});
  const errors = errorSlot();
  const summary = h("p", { class: "small muted" });
  // State changes (an e-stop, a cell dropping off) are announced; the 5 s refresh itself is not.
  const changes = h("p", { class: "sr-only", "aria-live": "assertive" });
  const lastState = new Map();
  let timer = null;
  ctx.cleanup(() => clearTimeout(timer));

  const unwatch = (id) => { if (live.includes(id)) live.splice(live.indexOf(id), 1); };

  function watch(id) {
    if (live.includes(id)) return;
    live.push(id);
    while (live.length > MAX_LIVE) cards.get(live.shift())?.stopCamera();
    cards.get(id)?.startCamera();
  }

  function cardOf(cell) {
    const title = h("h2", {}, h("a", { href: `#/fleet/${cell.id}` }, cell.id));
    const state = h("span", {});
    const needs = h("p", { class: "cell-needs", hidden: true });
    const info = h("dl", { class: "facts" });
    const picture = cameraImage(`Live top camera of cell ${cell.id}`);
    const show = h("button", { type: "button", class: "small", on: { click: () => watch(cell.id) } }, "Show camera");
    const camera = h("div", { class: "camera-slot" });
    const note = h("p", { class: "small muted" });
    const cardErrors = errorSlot();
    const revoke = confirmButton({
      label: "Revoke", question: `Revoke ${cell.id}? Its link is cut at once and its episode goes back to the queue.`, confirm: `Revoke ${cell.id}`, slot: cardErrors,
      action: async () => { await api(`/v1/cells/${encodeURIComponent(cell.id)}`, { method: "DELETE", signal }); await refresh(); },
    });
    const element = h("article", { class: "card cell", "aria-labelledby": `cell-${cell.id}` }, title, state, needs, info, camera, note, cardErrors.element, h("div", { class: "actions" }, revoke));
    title.id = `cell-${cell.id}`;
    ctx.cleanup(() => picture.stop());
    let mjpeg = null;
    let playing = false;
    const entry = {
      element,
      startCamera() {
        if (!mjpeg) return;
        playing = true;
        picture.play(mjpeg);
        replace(camera, picture.img);
      },
      stopCamera() {
        playing = false;
        picture.stop();
        replace(camera, mjpeg ? show : null);
      },
      update(c, { descriptor, problem }) {
        const s = descriptor?.state === "estopped" ? "estopped" : c.state;
        replace(state, badge(s), " ", STATE_WORDS[s] ?? s);
        const a = c.attention;
        element.classList.toggle("needs", Boolean(a));
        needs.hidden = !a;
        replace(needs, a
          ? [h("strong", {}, NEEDS_WORDS[a.kind] ?? a.kind), a.kind === "reset" && a.index !== null && a.index !== undefined ? ` for episode #${a.index}` : "",
            ` — waiting ${waited(a.waiting_s)} (since ${new Date(a.since).toLocaleTimeString()}). `, h("a", { href: "#/station" }, "Open the station")]
          : null);
        replace(info,
          h("dt", {}, "Robot"), h("dd", {}, descriptor?.robot ?? `${c.model}${c.firmware ? `@${c.firmware}` : ""}`),
          h("dt", {}, "Environment"), h("dd", {}, descriptor?.environment ?? c.environment ?? "—"),
          h("dt", {}, "Link"), h("dd", {}, c.connected ? ["connected since ", when(c.connected_at)] : ["offline, last seen ", when(c.last_seen)]),
          h("dt", {}, "Run"), h("dd", {}, descriptor?.run_id ?? (c.episode_id ? "(another account's)" : "none")),
          h("dt", {}, "Episode"), h("dd", {}, descriptor?.episode ? `#${descriptor.episode.index} (${descriptor.episode.id})` : c.episode_id ?? "none"),
          h("dt", {}, "Viewers"), h("dd", {}, descriptor ? String(descriptor.viewers) : "—"),
          // Recordings runs wait for until this cell uploads them (docs/operators.md).
          c.recordings_not_uploaded ? h("dt", {}, "Not uploaded") : null,
          c.recordings_not_uploaded ? h("dd", {}, `${c.recordings_not_uploaded.artifacts} recording${c.recordings_not_uploaded.artifacts === 1 ? "" : "s"}`,
            c.recordings_not_uploaded.since ? [", since ", when(c.recordings_not_uploaded.since)] : "") : null);
        const top = descriptor?.cameras.find((x) => x.name === "top") ?? descriptor?.cameras[0];
        const had = mjpeg;
        mjpeg = top?.mjpeg_url ?? null;
        note.textContent = problem ?? (descriptor && !top ? "No camera while the cell is offline." : "");
        if (!mjpeg) { entry.stopCamera(); unwatch(c.id); }
        else if (playing && (!had || picture.stale())) entry.startCamera();
        else if (!playing) replace(camera, show);
      },
    };
    return entry;
  }

  async function refresh() {
    clearTimeout(timer);
    try {
      const cells = await api("/v1/cells", { signal });
      const active = needingFirst(cells.data.filter((c) => !c.revoked));
      const described = await describeAll(active, signal, knows);
      errors.clear();
      for (const [i, c] of active.entries()) {
        let card = cards.get(c.id);
        if (!card) {
          card = cardOf(c);
          cards.set(c.id, card);
        }
        card.update(c, described[i]);
        const state = described[i].descriptor?.state === "estopped" ? "estopped" : c.state;
        if (lastState.has(c.id) && lastState.get(c.id) !== state) changes.textContent = `Cell ${c.id}: ${STATE_WORDS[state] ?? state}.`;
        lastState.set(c.id, state);
      }
      for (const [id, card] of cards) {
        if (!active.some((c) => c.id === id)) { card.stopCamera(); cards.delete(id); unwatch(id); }
      }
      const order = active.map((c) => cards.get(c.id).element);
      if (order.some((el, i) => grid.children[i] !== el) || grid.children.length !== order.length) grid.replaceChildren(...order);
      // Cameras start on their own for the first connected cells, up to the limit.
      for (const c of active) if (c.connected && live.length < MAX_LIVE && !live.includes(c.id) && described[active.indexOf(c)].descriptor) watch(c.id);
      const count = (s) => active.filter((c) => c.state === s).length;
      const waiting = active.filter((c) => c.attention).length;
      summary.textContent = `${active.length} cells: ${waiting ? `${waiting} waiting on a person, ` : ""}${active.filter((c) => c.connected).length} connected, ${count("busy")} busy, ${count("estopped")} e-stopped, ${count("held") + count("firmware_mismatch")} held. Updated ${new Date().toLocaleTimeString()}.`;
      const revoked = cells.data.filter((c) => c.revoked);
      replace(revokedSlot, revoked.length ? [h("h2", {}, "Revoked cells"), table(null, ["Cell", "Model", "Revoked"], revoked.map((c) => [c.id, c.model, when(c.revoked)]))] : null);
    } catch (error) {
      if (signal.aborted) return;
      errors.show(error);
    }
    timer = setTimeout(() => {
      if (document.visibilityState === "visible") void refresh();
      else document.addEventListener("visibilitychange", () => void refresh(), { once: true });
    }, REFRESH_MS);
  }

  // Enrollment: the token is shown once, for the technician to give the cell's agent.
  const enrollErrors = errorSlot();
  const cellId = h("input", { id: "enroll-cell", required: true, autocomplete: "off", pattern: "[a-z0-9][a-z0-9_\\-]*", maxlength: 64 });
  const model = h("select", { id: "enroll-model" }, options(robots.data.map((r) => [r.id, `${r.id} (${r.class}, ${r.dof} DoF)`])));
  const enrolled = h("div", { "aria-live": "polite" });
  const enroll = h("button", { type: "submit", class: "primary" }, "Enroll cell");
  const enrollForm = h("form", { class: "card", on: { submit: (e) => {
    e.preventDefault();
    void busy(enroll, async () => {
      const cell = await api("/v1/cells", { method: "POST", json: { cell_id: cellId.value.trim(), model: model.value }, signal });
      const token = h("input", { id: "enroll-token", class: "code secret", readonly: true, value: cell.enrollment_token });
      replace(enrolled, h("div", { class: "notice secret-box", role: "status" },
        h("h3", { tabindex: "-1" }, `Cell ${cell.id} enrolled`),
        h("label", { for: "enroll-token" }, "Enrollment token"), token,
        h("p", {}, h("strong", {}, "Shown once. "), "Give it to the cell's agent (cell-agent enroll); enrolling the same cell again issues a new token and cuts the old one.")));
      enrolled.querySelector("h3").focus();
      cellId.value = "";
      await refresh();
    }, enrollErrors);
  } } },
    h("h2", {}, "Enroll a cell"),
    h("div", { class: "grid" }, field("Cell id", cellId, "1..64 of a-z, 0-9, - and _"), field("Robot model", model)),
    enrollErrors.element, h("div", { class: "actions" }, enroll), enrolled);
  ctx.cleanup(() => enrolled.replaceChildren());

  ctx.show(h("h1", { tabindex: "-1" }, "Fleet"), summary, changes, errors.element, grid, revokedSlot, enrollForm);
  await refresh();
}
