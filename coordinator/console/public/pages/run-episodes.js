/**
 * A run's episodes (GET /v1/runs/{id}/episodes?outcome=&cluster=), numbered by their API `index` (from
 * 0, as the CLI, exports and the PDF number them), each openable (its videos and joint plots, through
 * `open(ep)`: episode-viewer.js), its MCAP as a download and its replay spec. Files need the key, so
 * they are fetched as Blobs.
 */
import { api, apiBlob } from "../api.js";
import { field, h, options, replace } from "../dom.js";
import { seconds } from "../format.js";
import { badge, busy, errorSlot, jsonBlock, saveBlob } from "../ui.js";

const fileNameOf = (url) => decodeURIComponent(new URL(url, location.href).pathname.split("/").pop());

export function episodesSection(runId, { signal, open, clusters: initialClusters = [] }) {
  const filter = { outcome: "", cluster: "" };
  const known = new Set(initialClusters);
  const outcome = h("select", { id: "ep-outcome" }, options([["", "All outcomes"], "success", "failure"], ""));
  const cluster = h("select", { id: "ep-cluster" });
  const body = h("tbody");
  const tableEl = h("table", { class: "episodes" },
    h("caption", { class: "sr-only" }, "Episodes of the run, by index"),
    h("thead", {}, h("tr", {}, ["Episode", "Outcome", "Failure cluster", "Last stage", "Duration", "Cell", "Attempts", "Files", "Replay spec"].map((x) => h("th", { scope: "col" }, x)))),
    body);
  const empty = h("p", { class: "muted", hidden: true });
  const errors = errorSlot();

  function fillClusters() {
    replace(cluster, options([["", "All clusters"], ...[...known].sort()], filter.cluster));
  }
  fillClusters();
  outcome.addEventListener("change", () => { filter.outcome = outcome.value; void load(); });
  cluster.addEventListener("change", () => { filter.cluster = cluster.value; void load(); });

  async function download(ep, button) {
    await busy(button, async () => saveBlob(await apiBlob(ep.mcap_url, { signal }), fileNameOf(ep.mcap_url)), errors);
  }

  function rowOf(ep) {
    const watch = h("button", { type: "button", class: "small", on: { click: () => open(ep) },
      "aria-label": ep.video_url ? `Watch the video of episode ${ep.index}` : `Plot the joints of episode ${ep.index}` }, ep.video_url ? "Video" : "Plots");
    const mcap = ep.mcap_url ? h("button", { type: "button", class: "small", on: { click: () => download(ep, mcap) }, "aria-label": `Download the MCAP of episode ${ep.index}` }, "MCAP") : null;
    return h("tr", {},
      h("th", { scope: "row" }, `#${ep.index}`),
      h("td", {}, badge(ep.outcome), ep.intervened ? " (helped)" : ""),
      h("td", {}, ep.failure_cluster ?? ""),
      h("td", {}, ep.last_stage ?? "—"),
      h("td", {}, seconds(ep.duration_s)),
      h("td", {}, ep.cell ?? "—"),
      h("td", {}, String(ep.attempts)),
      h("td", { class: "buttons" }, ep.video_url || ep.mcap_url ? watch : h("span", { class: "muted" }, "no files yet"), " ", mcap),
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
    errors.element, tableEl, empty);

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
