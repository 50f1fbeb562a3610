/**
 * A run's failures as a grid of stills (GET .../episodes?outcome=failure&cluster=&stage=), each card the
 * last frame of the top camera (GET .../episodes/{id}/thumbnail), the episode's index, its failure cluster
 * and the last stage it reached; choosing a card opens the episode (episode-viewer.js). Filterable by
 * cluster and by stage. Stills need the key, so they are fetched as Blobs (four at a time, the first
 * PAGE cards, more on request; only once the recording is stored: `thumbnail_url`) and shown through
 * object URLs kept per episode until the page is left.
 */
import { api, apiBlob } from "../api.js";
import { field, h, options, replace } from "../dom.js";
import { errorSlot } from "../ui.js";

const PAGE = 24;
const PARALLEL = 4;

export function failureGrid(runId, { signal, cleanup, open, clusters: initialClusters = [], stages: initialStages = [] }) {
  const filter = { cluster: "", stage: "" };
  const knownClusters = new Set(initialClusters);
  const knownStages = new Set(initialStages);
  const cluster = h("select", { id: "fg-cluster" });
  const stage = h("select", { id: "fg-stage" });
  const grid = h("ul", { class: "failure-grid" });
  const more = h("button", { type: "button", hidden: true, on: { click: () => { shown += PAGE; draw(); } } }, "Show more");
  const empty = h("p", { class: "muted", hidden: true });
  const errors = errorSlot();
  let failures = [];
  let shown = PAGE;
  // Episode id -> object URL of its still: kept across redraws (a live run's grid is redrawn as episodes finish).
  const stillUrls = new Map();
  let drawn = 0;
  cleanup(() => { stillUrls.forEach((url) => URL.revokeObjectURL(url)); stillUrls.clear(); });

  function fillFilters() {
    replace(cluster, options([["", "All clusters"], ...[...knownClusters].sort()], filter.cluster));
    replace(stage, options([["", "Any last stage"], ...[...knownStages].map((s) => [s, s]), ["none", "no stage reached"]], filter.stage));
  }
  fillFilters();
  cluster.addEventListener("change", () => { filter.cluster = cluster.value; void load(); });
  stage.addEventListener("change", () => { filter.stage = stage.value; void load(); });

  function card(ep) {
    // No alt text until the still is there: an image without a source but with one is drawn as a broken image.
    const img = h("img", { alt: "", width: 160, height: 120, loading: "lazy" });
    const button = h("button", { type: "button", class: "failure-card", "data-episode": String(ep.index), on: { click: () => open(ep) }, "aria-label": `Open episode ${ep.index}: ${ep.failure_cluster ?? "failure"}` },
      img,
      h("span", { class: "failure-index" }, `Episode ${ep.index}`),
      h("span", { class: "failure-cluster" }, ep.failure_cluster ?? "unclassified"),
      h("span", { class: "small muted" }, ep.last_stage ? `last stage ${ep.last_stage}` : "no stage reached"));
    return { element: h("li", {}, button), img, ep };
  }

  /** Fetches the stills of `cards`, PARALLEL at a time; a still that cannot be had leaves its card without one. */
  async function stills(cards, generation) {
    // thumbnail_url is null until the recording is stored (uploaded after the episode ends); the grid is redrawn as episodes finish.
    const queue = cards.filter((c) => c.ep.thumbnail_url);
    const show = (c, url) => {
      c.img.alt = `Last frame of episode ${c.ep.index}`;
      c.img.src = url;
    };
    for (const c of queue) if (stillUrls.has(c.ep.id)) show(c, stillUrls.get(c.ep.id));
    const missing = queue.filter((c) => !stillUrls.has(c.ep.id));
    const worker = async () => {
      for (let c = missing.shift(); c; c = missing.shift()) {
        if (generation !== drawn) return;
        try {
          const blob = await apiBlob(c.ep.thumbnail_url, { signal });
          const url = stillUrls.get(c.ep.id) ?? URL.createObjectURL(blob);
          stillUrls.set(c.ep.id, url);
          show(c, url);
        } catch {
          c.img.alt = `No still of episode ${c.ep.index}`;
        }
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
  }

  function draw() {
    const generation = ++drawn;
    const cards = failures.slice(0, shown).map(card);
    grid.replaceChildren(...cards.map((c) => c.element));
    more.hidden = failures.length <= shown;
    more.textContent = `Show more (${failures.length - Math.min(shown, failures.length)} left)`;
    empty.hidden = failures.length > 0;
    empty.textContent = filter.cluster || filter.stage ? "No failure matches these filters." : "No failures.";
    void stills(cards, generation);
  }

  let loading = null;
  /** The query and answer last drawn: the same answer again (a live run relisted, nothing new) leaves the cards as they are. */
  let lastDrawn = "";
  async function load() {
    const query = new URLSearchParams({ outcome: "failure", ...Object.fromEntries(Object.entries(filter).filter(([, v]) => v)) }).toString();
    const mine = (loading = api(`/v1/runs/${encodeURIComponent(runId)}/episodes?${query}`, { signal }));
    try {
      const list = await mine;
      if (mine !== loading) return; // a newer filter's answer wins
      errors.clear();
      let grew = false;
      for (const ep of list.data) {
        if (ep.failure_cluster && !knownClusters.has(ep.failure_cluster)) { knownClusters.add(ep.failure_cluster); grew = true; }
        if (ep.last_stage && !knownStages.has(ep.last_stage)) { knownStages.add(ep.last_stage); grew = true; }
      }
      if (grew) fillFilters();
      // Cards replaced by identical ones would be a click lost (a person's, mid-click) and stills fetched again.
      const text = `${query}\n${JSON.stringify(list.data)}`;
      if (text === lastDrawn) return;
      lastDrawn = text;
      failures = list.data;
      shown = PAGE;
      draw();
    } catch (error) {
      if (!signal.aborted) errors.show(error);
    }
  }

  const element = h("section", { class: "card", "aria-labelledby": "h-failure-grid" },
    h("h2", { id: "h-failure-grid" }, "Failures"),
    h("form", { class: "filters", on: { submit: (e) => e.preventDefault() } }, field("Failure cluster", cluster), field("Last stage reached", stage)),
    errors.element, grid, more, empty);

  return {
    element,
    load,
    /** Shows the failures that stopped at one stage (from the stage funnel). */
    showStage(name) {
      knownStages.add(name);
      filter.stage = name;
      filter.cluster = "";
      fillFilters();
      void load();
      stage.focus();
    },
    /** Shows the failures of one cluster (from the Result's failure clusters). */
    showCluster(name) {
      knownClusters.add(name);
      filter.cluster = name;
      filter.stage = "";
      fillFilters();
      void load();
      cluster.focus();
    },
  };
}
