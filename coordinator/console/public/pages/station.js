/**
 * The operator station, for the technician beside the cells (operator keys; made for a tablet): one
 * large card per cell with what it is doing and what it needs from a person. For a reset: the cell's
 * live top camera with each object's target pose drawn over it (sceneOverlay, from the calibration the
 * cell sends with the scene) and the targets as a list, and the buttons Scene ready, Abort episode and
 * Mark previous episode invalid (with a reason). For a label (a task judged by a person): the live
 * camera on the finished scene, the instruction, progress 0-100, a note and the buttons Success and
 * Failure; the card names no run or policy, so labels of a compare run stay blind. For an intervention
 * (a run with interventions on_stall or scripted: the episode is paused, the arm held): what happened
 * and what to do, step by step, and the buttons Intervene (when at the cell) and Done (interventionPanel). Polls GET /v1/cells/{cell} every second while the tab
 * is visible; cells that need someone come first, and a beep sounds (WebAudio, once sound is on) when
 * a cell starts needing someone.
 */
import { api } from "../api.js";
import { h, options, replace } from "../dom.js";
import { cameraImage } from "../live-camera.js";
import { sceneOverlay } from "../scene-overlay.js";
import { badge, busy, confirmButton, errorSlot } from "../ui.js";
import { STATE_WORDS } from "./fleet.js";

const REFRESH_MS = 1000;
/** MJPEG streams each hold one of the browser's 6 connections to the host. */
const MAX_LIVE = 4;

export const INVALID_REASONS = [
  ["scene_wrong", "The scene was set wrong"],
  ["hardware_fault", "Hardware fault"],
  ["person_in_cell", "A person was in the cell"],
];

const NEEDS_WORDS = {
  reset: "Set the scene, then press Scene ready",
  label: "Judge the episode: did it succeed?",
  intervene: "The episode is paused and needs your help",
};
/** Why a person judges an episode the run's judge endpoint also saw (docs/judges.md); never what the judge said. */
const REVIEW_WORDS = {
  audit: "Audit: a judge scored this episode too. Judge it on your own.",
  low_confidence: "The judge was unsure about this episode. Your label decides it.",
  judge_failed: "The judge did not answer for this episode. Your label decides it.",
};

/** A short beep through WebAudio; silent until the person has turned sound on (browsers require a gesture). */
function beeper() {
  let audio = null;
  return {
    get on() { return audio !== null && audio.state === "running"; },
    async enable() {
      audio ??= new AudioContext();
      await audio.resume();
    },
    beep() {
      if (!audio || audio.state !== "running") return;
      const oscillator = audio.createOscillator();
      const gain = audio.createGain();
      oscillator.frequency.value = 880;
      gain.gain.setValueAtTime(0.2, audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.4);
      oscillator.connect(gain).connect(audio.destination);
      oscillator.start();
      oscillator.stop(audio.currentTime + 0.4);
    },
    close() { void audio?.close(); },
  };
}

const mm = (m) => `${Math.round(m * 1000)} mm`;
const deg = (rad) => `${Math.round((rad * 180) / Math.PI)}°`;

function targetsList(scene) {
  const objects = Object.entries(scene?.objects ?? {});
  return h("ul", { class: "targets" },
    objects.map(([name, t]) => h("li", {}, h("strong", {}, name), ` (${t.object}): x ${mm(t.position_m[0])}, y ${mm(t.position_m[1])}, yaw ${deg(t.yaw_rad ?? 0)}`,
      t.tolerance_m ? `, within ${mm(t.tolerance_m)}` : "")),
    (scene?.distractors ?? []).map((d) => h("li", { class: "muted" }, `distractor ${d.object}: x ${mm(d.position_m[0])}, y ${mm(d.position_m[1])}`)),
    scene?.lighting ? h("li", {}, `lighting: ${scene.lighting}`) : null);
}

/**
 * The intervention part of a cell's card: what happened and the steps, Intervene (phase offered: the
 * person is at the cell) and Done with a note (phase holding: they have stepped back). Its own
 * function so changes to the rest of the card merge cleanly.
 */
function interventionPanel(id, { signal, slot, said, refresh, episodeOf }) {
  const what = h("p", { class: "station-instruction" });
  const steps = h("ol", { class: "targets" });
  const note = h("input", { id: `intervene-note-${id}`, maxlength: 500, autocomplete: "off", placeholder: "What you did (optional)", "aria-label": "What you did" });
  const post = (path, body) => api(`/v1/cells/${encodeURIComponent(id)}/${path}`, { method: "POST", json: body, signal });
  const intervene = h("button", { type: "button", class: "primary huge", "data-action": "intervene", on: { click: () => busy(intervene, async () => {
    await post("intervene", { episode_id: episodeOf() });
    said("The arm is held: help the episode, then press Done.");
    await refresh();
  }, slot) } }, "Intervene");
  const done = h("button", { type: "button", class: "primary huge", "data-action": "intervene-done", on: { click: () => busy(done, async () => {
    await post("intervene-done", { episode_id: episodeOf(), ...(note.value.trim() ? { note: note.value.trim() } : {}) });
    note.value = "";
    said("Done: the episode goes on, marked as helped.");
    await refresh();
  }, slot) } }, "Done");
  // When the scene cannot be saved: the attempt ends, the arm holds, and the episode runs again.
  const abort = confirmButton({
    label: "Abort episode", question: "Abort this episode? It goes back to the queue.", confirm: "Abort episode", slot,
    action: async () => {
      const answer = await post("abort", { episode_id: episodeOf(), note: "aborted during an intervention" });
      said(`Episode ${answer.episode_id} aborted; it goes back to the queue.`);
      await refresh();
    },
  });
  const offered = h("div", { class: "actions station-actions" }, intervene);
  const holding = h("div", { class: "actions station-actions" }, note, done);
  const element = h("div", { class: "station-intervene" }, what, steps, offered, holding, h("div", { class: "actions station-actions" }, abort));
  element.hidden = true;
  return {
    element,
    update(attention) {
      element.hidden = attention?.kind !== "intervene";
      if (element.hidden) return;
      const scene = attention.scene ?? {};
      what.textContent = `${scene.what ?? "The episode needs a person."}${typeof scene.t_s === "number" ? ` (at ${scene.t_s.toFixed(1)} s of the episode)` : ""}`;
      replace(steps, (scene.steps ?? []).map((step) => h("li", {}, step)));
      offered.hidden = scene.phase !== "offered";
      holding.hidden = scene.phase !== "holding";
    },
  };
}

export async function stationPage(ctx) {
  ctx.setTitle("Station");
  const { signal } = ctx;
  const sound = beeper();
  ctx.cleanup(() => sound.close());
  const cards = new Map();
  const live = [];
  const grid = h("div", { class: "station" });
  const errors = errorSlot();
  const summary = h("p", { class: "muted" });
  const announce = h("p", { class: "sr-only", "aria-live": "assertive" });
  const soundButton = h("button", { type: "button", class: "small", on: { click: async () => {
    await sound.enable();
    soundButton.textContent = "Sound on";
    soundButton.disabled = true;
    sound.beep();
  } } }, "Turn sound on");
  let timer = null;
  ctx.cleanup(() => clearTimeout(timer));

  function cardOf(id) {
    const title = h("h2", { id: `station-${id}` }, id);
    const state = h("p", { class: "station-state" });
    const needs = h("p", { class: "station-needs" });
    const picture = cameraImage(`Live top camera of cell ${id}`);
    ctx.cleanup(() => picture.stop());
    const frame = h("div", { class: "station-camera" });
    const targets = h("div", {});
    const previous = h("p", { class: "small" });
    const slot = errorSlot();
    // What the person last did on this card, in words: it stays until the next action, or until the card asks
    // for a step the notice would be old news beside (`staleOn`, given that new wait; by default any new wait).
    // A label's notice stays on the next episode's reset (the step that follows it) and goes at the next label.
    const done = h("p", { class: "notice station-done", role: "status", hidden: true });
    let notice = null; // { actedOn: "<episode>/<since>" of the wait the action answered, staleOn }
    const waitKey = (attention) => (attention ? `${attention.episode_id}/${attention.since}` : "");
    const said = (text, staleOn = () => true) => {
      done.textContent = text;
      done.hidden = false;
      notice = { actedOn: waitKey(current?.attention), staleOn };
      announce.textContent = `Cell ${id}: ${text}`;
    };
    const note = h("input", { id: `note-${id}`, maxlength: 500, autocomplete: "off", placeholder: "Note (optional)", "aria-label": "Note on why the previous episode is invalid" });
    const reason = h("select", { id: `reason-${id}`, "aria-label": "Why the previous episode is invalid" }, options(INVALID_REASONS));
    let current = null; // the cell's detail as last read
    let mjpeg = null;

    const ready = h("button", { type: "button", class: "primary huge", "data-action": "scene-ready", on: { click: () => busy(ready, async () => {
      const index = current.attention.index;
      await api(`/v1/cells/${encodeURIComponent(id)}/scene-ready`, { method: "POST", json: { episode_id: current.attention.episode_id }, signal });
      said(`Scene of episode ${index !== null ? `#${index}` : current.attention.episode_id} confirmed; the episode starts.`);
      await refresh();
    }, slot) } }, "Scene ready");
    const abort = confirmButton({
      label: "Abort episode", question: "Abort this episode? It goes back to the queue.", confirm: "Abort episode", slot,
      action: async () => {
        const answer = await api(`/v1/cells/${encodeURIComponent(id)}/abort`, { method: "POST", json: { episode_id: current.attention?.episode_id ?? current.episode_id }, signal });
        said(`Episode ${answer.episode_id} aborted; it goes back to the queue.`);
        await refresh();
      },
    });
    const invalidate = h("button", { type: "button", class: "danger huge", "data-action": "invalidate-previous", on: { click: () => busy(invalidate, async () => {
      const body = { reason: reason.value, episode_id: current.previous_episode.id, ...(note.value.trim() ? { note: note.value.trim() } : {}) };
      const invalid = await api(`/v1/cells/${encodeURIComponent(id)}/invalidate-previous`, { method: "POST", json: body, signal });
      note.value = "";
      said(`Episode #${invalid.index} of run ${invalid.run_id} marked invalid (${INVALID_REASONS.find(([r]) => r === invalid.reason)?.[1] ?? invalid.reason}); it runs again.`);
      await refresh();
    }, slot) } }, "Mark previous episode invalid");
    // A label: success yes/no, progress 0-100 and a note, for the episode the card shows.
    const progress = h("input", { id: `progress-${id}`, type: "number", min: 0, max: 100, step: 5, value: 50, inputmode: "numeric", "aria-label": "Progress, 0 to 100" });
    const labelNote = h("input", { id: `label-note-${id}`, maxlength: 500, autocomplete: "off", placeholder: "Note (optional)", "aria-label": "Note on the episode" });
    const instruction = h("p", { class: "station-instruction" });
    const review = h("p", { class: "station-review", "data-review": "" });
    const label = (success, button) => busy(button, async () => {
      const value = progress.value.trim() === "" ? undefined : Number(progress.value);
      const body = { success, episode_id: current.attention.episode_id, ...(value !== undefined ? { progress: value } : {}), ...(labelNote.value.trim() ? { note: labelNote.value.trim() } : {}) };
      await api(`/v1/cells/${encodeURIComponent(id)}/label`, { method: "POST", json: body, signal });
      labelNote.value = "";
      said(`Episode labelled ${success ? "a success" : "a failure"}${value !== undefined ? `, progress ${value}` : ""}.`, (next) => next.kind === "label");
      await refresh();
    }, slot);
    const yes = h("button", { type: "button", class: "primary huge", "data-action": "label-success", on: { click: () => label(true, yes) } }, "Success");
    const no = h("button", { type: "button", class: "danger huge", "data-action": "label-failure", on: { click: () => label(false, no) } }, "Failure");
    const labelActions = h("div", { class: "station-label" }, review, instruction,
      h("div", { class: "actions station-actions" }, h("label", { for: `progress-${id}` }, "Progress (0-100) "), progress, labelNote),
      h("div", { class: "actions station-actions" }, yes, no));
    const resetActions = h("div", { class: "actions station-actions" }, ready, abort);
    const help = interventionPanel(id, { signal, slot, said, refresh: () => refresh(), episodeOf: () => current.attention.episode_id });
    const invalidForm = h("div", { class: "station-invalid" }, previous, h("div", { class: "actions station-actions" }, reason, note, invalidate));
    const element = h("article", { class: "card station-card", "aria-labelledby": `station-${id}`, "data-cell": id },
      title, state, needs, done, frame, targets, resetActions, labelActions, help.element, invalidForm, slot.element);

    return {
      element,
      get needsSomeone() { return Boolean(current?.attention); },
      stopCamera() { picture.stop(); mjpeg = null; replace(frame, null); },
      async update(cell) {
        const was = waitKey(current?.attention);
        current = cell;
        const attention = cell.attention;
        if (notice && attention && waitKey(attention) !== notice.actedOn && notice.staleOn(attention)) {
          done.hidden = true;
          notice = null;
        }
        const s = cell.connected ? cell.state : cell.revoked ? "revoked" : "offline";
        replace(state, badge(s), " ", STATE_WORDS[s] ?? s);
        element.classList.toggle("needs", Boolean(attention));
        // What the card shows now, for scripts and tests: "<episode>/<since>" of the wait, or empty.
        element.dataset.attention = waitKey(attention);
        element.dataset.attentionKind = attention?.kind ?? "";
        // A label names no run (labels of a compare run stay blind to the policy).
        replace(needs, attention
          ? [h("strong", {}, NEEDS_WORDS[attention.kind] ?? attention.kind), attention.kind === "label"
            ? ` — waiting ${Math.round(attention.waiting_s)} s`
            : ` — episode ${attention.index !== null ? `#${attention.index} ` : ""}of run ${attention.run_id ?? "?"}, waiting ${Math.round(attention.waiting_s)} s`]
          : cell.connected ? "Nothing needed now." : "");
        replace(targets, attention?.kind === "reset" ? targetsList(attention.scene) : null);
        resetActions.hidden = attention?.kind !== "reset";
        labelActions.hidden = attention?.kind !== "label";
        help.update(attention);
        if (attention?.kind === "label") instruction.textContent = attention.scene.instruction ? `Instruction: “${attention.scene.instruction}”` : "";
        const why = attention?.kind === "label" ? attention.scene.review ?? "" : "";
        review.dataset.review = why;
        review.textContent = REVIEW_WORDS[why] ?? "";
        review.hidden = why === "";
        const p = cell.previous_episode;
        invalidForm.hidden = !p;
        if (p) {
          // While a label waits, nothing names the run or an outcome: the person judges blind to which policy ran.
          const blind = attention?.kind === "label";
          replace(previous, blind
            ? `Previous episode: #${p.index} (attempt ${p.attempt})`
            : `Previous episode: #${p.index} of run ${p.run_id} (attempt ${p.attempt}), ${p.outcome ?? "no outcome"}`,
            p.run_open ? "" : " — its run has ended, so its result is final");
          invalidate.disabled = !p.run_open;
        }
        // A wait longer than the stream token's life: fetch a fresh descriptor and play its URL.
        if (attention && mjpeg && picture.stale()) mjpeg = null;
        // The camera plays while the cell needs someone (the scene is checked on it), up to MAX_LIVE cells.
        if (attention && !mjpeg && (live.includes(id) || live.length < MAX_LIVE)) {
          const descriptor = await api(`/v1/streams/${encodeURIComponent(id)}`, { signal }).catch(() => null);
          const top = descriptor?.cameras.find((c) => c.name === "top") ?? descriptor?.cameras[0];
          if (top) {
            mjpeg = top.mjpeg_url;
            if (!live.includes(id)) live.push(id);
            picture.play(mjpeg);
            replace(frame, h("div", { class: "overlay-wrap" }, picture.img, attention.kind === "reset" ? sceneOverlay(attention.scene, top.name) : null));
          }
        } else if (attention && mjpeg) {
          const overlay = attention.kind === "reset" ? sceneOverlay(attention.scene, "top") : null;
          const wrap = frame.firstChild;
          if (wrap && was !== waitKey(attention)) replace(wrap, picture.img, overlay);
        } else if (!attention && mjpeg) {
          this.stopCamera();
          if (live.includes(id)) live.splice(live.indexOf(id), 1);
        }
        if (attention && was !== waitKey(attention)) {
          sound.beep();
          announce.textContent = `Cell ${id} needs someone: ${NEEDS_WORDS[attention.kind] ?? attention.kind}.`;
        }
      },
    };
  }

  async function refresh() {
    clearTimeout(timer);
    try {
      const list = await api("/v1/cells", { signal });
      const active = list.data.filter((c) => !c.revoked);
      const details = await Promise.all(active.map((c) => api(`/v1/cells/${encodeURIComponent(c.id)}`, { signal })));
      errors.clear();
      for (const cell of details) {
        let card = cards.get(cell.id);
        if (!card) {
          card = cardOf(cell.id);
          cards.set(cell.id, card);
        }
        await card.update(cell);
      }
      for (const [id, card] of cards) {
        if (active.some((c) => c.id === id)) continue;
        card.stopCamera();
        cards.delete(id);
        // Its camera slot is free again (MAX_LIVE).
        if (live.includes(id)) live.splice(live.indexOf(id), 1);
      }
      // Cells that need someone first, longest waiting first; then the rest by id.
      const order = [...details].sort((a, b) => (a.attention ? 0 : 1) - (b.attention ? 0 : 1) || (a.attention?.since ?? a.id).localeCompare(b.attention?.since ?? b.id))
        .map((c) => cards.get(c.id).element);
      if (order.some((el, i) => grid.children[i] !== el) || grid.children.length !== order.length) grid.replaceChildren(...order);
      const waiting = details.filter((c) => c.attention).length;
      summary.textContent = `${waiting === 0 ? "No cell needs anyone" : `${waiting} cell${waiting === 1 ? " needs" : "s need"} someone`} · ${details.length} cell${details.length === 1 ? "" : "s"} · updated ${new Date().toLocaleTimeString()}`;
    } catch (error) {
      if (signal.aborted) return;
      errors.show(error);
    }
    if (signal.aborted) return;
    timer = setTimeout(() => {
      if (document.visibilityState === "visible") void refresh();
      else document.addEventListener("visibilitychange", () => void refresh(), { once: true });
    }, REFRESH_MS);
  }

  ctx.show(h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Station"), soundButton), summary, announce, errors.element, grid);
  await refresh();
}
