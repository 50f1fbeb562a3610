/**
 * A run's episodes (GET /v1/runs/{id}/episodes?outcome=&cluster=), each with its video played in the
 * page, its MCAP as a download and its replay spec. Artifact files need the key, so they are fetched
 * as Blobs and shown through object URLs (revoked when replaced or when the page is left).
 */
import { api, apiBlob } from "../api.js";
import { field, h, options, replace } from "../dom.js";
import { seconds } from "../format.js";
import { badge, busy, errorSlot, jsonBlock, saveBlob } from "../ui.js";

const fileNameOf = (url) => decodeURIComponent(new URL(url, location.href).pathname.split("/").pop());

export function episodesSection(runId, { signal, cleanup, clusters: initialClusters = [] }) {
  const filter = { outcome: "", cluster: "" };
  const known = new Set(initialClusters);
  const outcome = h("select", { id: "ep-outcome" }, options([["", "All outcomes"], "success", "failure"], ""));
  const cluster = h("select", { id: "ep-cluster" });
  const body = h("tbody");
  const tableEl = h("table", { class: "episodes" },
    h("caption", { class: "sr-only" }, "Episodes of the run, by index"),
    h("thead", {}, h("tr", {}, ["Episode", "Outcome", "Failure cluster", "Duration", "Cell", "Attempts", "Files", "Replay spec"].map((x) => h("th", { scope: "col" }, x)))),
    body);
  const empty = h("p", { class: "muted", hidden: true });
  const errors = errorSlot();

  const playerTitle = h("h3", { tabindex: "-1" });
  const video = h("video", { controls: true, muted: true, playsinline: true, preload: "auto", class: "episode-video" });
  const playerFacts = h("div", {});
  const player = h("section", { class: "player", hidden: true, "aria-label": "Episode video" }, playerTitle, video, playerFacts);
  let objectUrl = null;
  cleanup(() => {
    video.removeAttribute("src");
    video.load();
    if (objectUrl) URL.revokeObjectURL(objectUrl);
  });

  function fillClusters() {
    replace(cluster, options([["", "All clusters"], ...[...known].sort()], filter.cluster));
  }
  fillClusters();
  outcome.addEventListener("change", () => { filter.outcome = outcome.value; void load(); });
  cluster.addEventListener("change", () => { filter.cluster = cluster.value; void load(); });

  async function play(ep, button) {
    await busy(button, async () => {
      const blob = await apiBlob(ep.video_url, { signal });
      if (objectUrl) URL.revokeObjectURL(objectUrl);
      objectUrl = URL.createObjectURL(blob);
      video.src = objectUrl;
      playerTitle.textContent = `Episode ${ep.index + 1}: ${ep.outcome}${ep.failure_cluster ? ` (${ep.failure_cluster})` : ""}`;
      replace(playerFacts, h("p", { class: "small muted" }, `${ep.id} on ${ep.cell ?? "an unknown cell"}, ${seconds(ep.duration_s)}. `, ep.replay_spec?.instruction ? `Instruction: “${ep.replay_spec.instruction}”.` : ""));
      player.hidden = false;
      playerTitle.focus();
      // Muted, so the browser lets it start on its own; the controls are there to pause and seek.
      await video.play().catch(() => {});
    }, errors);
  }

  async function download(ep, button) {
    await busy(button, async () => saveBlob(await apiBlob(ep.mcap_url, { signal }), fileNameOf(ep.mcap_url)), errors);
  }

  function rowOf(ep) {
    const watch = ep.video_url ? h("button", { type: "button", class: "small", on: { click: () => play(ep, watch) }, "aria-label": `Watch the video of episode ${ep.index + 1}` }, "Video") : null;
    const mcap = ep.mcap_url ? h("button", { type: "button", class: "small", on: { click: () => download(ep, mcap) }, "aria-label": `Download the MCAP of episode ${ep.index + 1}` }, "MCAP") : null;
    return h("tr", {},
      h("th", { scope: "row" }, `#${ep.index + 1}`),
      h("td", {}, badge(ep.outcome), ep.intervened ? " (helped)" : ""),
      h("td", {}, ep.failure_cluster ?? ""),
      h("td", {}, seconds(ep.duration_s)),
      h("td", {}, ep.cell ?? "—"),
      h("td", {}, String(ep.attempts)),
      h("td", { class: "buttons" }, watch ?? h("span", { class: "muted" }, "no video yet"), " ", mcap),
      h("td", {}, ep.replay_spec ? h("details", {}, h("summary", {}, "Show"), jsonBlock(ep.replay_spec)) : "—"));
  }

  let loading = null;
  async function load() {
    const query = new URLSearchParams(Object.entries(filter).filter(([, v]) => v)).toString();
    const mine = (loading = api(`/v1/runs/${encodeURIComponent(runId)}/episodes${query ? `?${query}` : ""}`, { signal }));
    try {
      const list = await mine;
      if (mine !== loading) return; // a newer filter's answer wins
      errors.clear();
      for (const ep of list.data) if (ep.failure_cluster && !known.has(ep.failure_cluster)) { known.add(ep.failure_cluster); fillClusters(); }
      body.replaceChildren(...list.data.map(rowOf));
      tableEl.hidden = list.data.length === 0;
      empty.hidden = list.data.length > 0;
      empty.textContent = query ? "No finished episode matches these filters." : "No episode has finished yet.";
    } catch (error) {
      if (!signal.aborted) errors.show(error);
    }
  }

  const element = h("section", { class: "card", "aria-labelledby": "h-episodes" },
    h("h2", { id: "h-episodes" }, "Episodes"),
    h("form", { class: "filters", on: { submit: (e) => e.preventDefault() } }, field("Outcome", outcome), field("Failure cluster", cluster)),
    errors.element, player, tableEl, empty);

  return {
    element,
    load,
    /** Shows the failures of one cluster (from the Result's failure clusters). */
    showCluster(name) {
      known.add(name);
      filter.cluster = name;
      filter.outcome = "failure";
      fillClusters();
      outcome.value = "failure";
      void load();
      cluster.focus();
    },
  };
}
