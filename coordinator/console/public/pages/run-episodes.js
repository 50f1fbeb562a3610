/**
 * A run's episodes (GET /v1/runs/{id}/episodes?outcome=&cluster=), numbered by their API `index` (from
 * 0, as the CLI, exports and the PDF number them), each openable (its videos and joint plots, through
 * `open(ep)`: episode-viewer.js), its MCAP as a download and its replay spec. Files need the key, so
 * they are fetched as Blobs. A run of several units names each episode's policy (or side); a compare's
 * pairs open side by side: both episodes of the pair, the seed they share, both outcomes and both
 * videos playing together.
 */
import { api, apiBlob } from "../api.js";
import { field, h, options, replace } from "../dom.js";
import { seconds } from "../format.js";
import { badge, busy, errorSlot, jsonBlock, saveBlob } from "../ui.js";

const fileNameOf = (url) => decodeURIComponent(new URL(url, location.href).pathname.split("/").pop());

/** What an episode's unit is called: a compare's policy name, a transfer's role, else the unit's key. */
const unitName = (units, index) => {
  const unit = units?.find((u) => u.index === index) ?? units?.[index];
  return unit ? (unit.policy_name ?? unit.role ?? unit.key) : `unit ${index}`;
};

export function episodesSection(runId, { signal, cleanup, open, clusters: initialClusters = [], units = [] }) {
  const byUnit = units.length > 1;
  const filter = { outcome: "", cluster: "" };
  const known = new Set(initialClusters);
  const outcome = h("select", { id: "ep-outcome" }, options([["", "All outcomes"], "success", "failure"], ""));
  const cluster = h("select", { id: "ep-cluster" });
  const body = h("tbody");
  const tableEl = h("table", { class: "episodes" },
    h("caption", { class: "sr-only" }, "Episodes of the run, by index"),
    h("thead", {}, h("tr", {}, ["Episode", ...(byUnit ? ["Policy", "Pair"] : []), "Outcome", "Failure cluster", "Last stage", "Duration", "Cell", "Attempts", "Files", "Replay spec"].map((x) => h("th", { scope: "col" }, x)))),
    body);
  const empty = h("p", { class: "muted", hidden: true });
  const errors = errorSlot();

  // A compare's pair, side by side: both episodes' facts and videos.
  const pairTitle = h("h3", { tabindex: "-1" });
  const pairBody = h("div", { class: "pair" });
  const pairView = h("section", { class: "player pair-view", hidden: true, "aria-label": "Pair of episodes, side by side" }, pairTitle, pairBody);
  let pairUrls = [];
  const releasePair = () => {
    for (const v of pairBody.querySelectorAll("video")) { v.removeAttribute("src"); v.load(); }
    for (const url of pairUrls) URL.revokeObjectURL(url);
    pairUrls = [];
  };
  cleanup(releasePair);

  function fillClusters() {
    replace(cluster, options([["", "All clusters"], ...[...known].sort()], filter.cluster));
  }
  fillClusters();
  outcome.addEventListener("change", () => { filter.outcome = outcome.value; void load(); });
  cluster.addEventListener("change", () => { filter.cluster = cluster.value; void load(); });

  /** Opens pair `pair` side by side: both episodes (from the unfiltered list), the seed they share, both outcomes, both videos. */
  async function showPair(pair, button) {
    await busy(button, async () => {
      const all = await api(`/v1/runs/${encodeURIComponent(runId)}/episodes`, { signal });
      const both = all.data.filter((e) => e.pair === pair).sort((a, b) => (a.unit ?? 0) - (b.unit ?? 0));
      releasePair();
      const seeds = [...new Set(both.map((e) => e.replay_spec?.layout_seed).filter((x) => x !== undefined))];
      pairTitle.textContent = `Pair ${pair}: ${both.map((e) => `${unitName(units, e.unit)} ${e.outcome}`).join(", ")}`;
      const figures = await Promise.all(both.map(async (e) => {
        const clip = h("video", { controls: true, muted: true, playsinline: true, preload: "auto", loop: true, class: "episode-video", "aria-label": `Video of ${unitName(units, e.unit)}'s episode ${e.index}` });
        if (e.video_url) {
          const url = URL.createObjectURL(await apiBlob(e.video_url, { signal }));
          pairUrls.push(url);
          clip.src = url;
        }
        return h("figure", { "data-unit": String(e.unit) },
          h("figcaption", {}, h("strong", {}, unitName(units, e.unit)), " ", badge(e.outcome), e.failure_cluster ? ` (${e.failure_cluster})` : "",
            h("span", { class: "small muted" }, ` episode #${e.index} on ${e.cell ?? "an unknown cell"}, ${seconds(e.duration_s)}`)),
          e.video_url ? clip : h("p", { class: "muted" }, "no video yet"));
      }));
      replace(pairBody, [
        ...figures,
        h("p", { class: "small muted pair-seed" }, seeds.length === 1
          ? `Same initial conditions: layout seed ${seeds[0]}${both[0]?.replay_spec?.lighting ? `, lighting ${both[0].replay_spec.lighting}` : ""}.`
          : `Layout seeds ${seeds.join(" and ") || "not recorded"}.`),
      ]);
      pairView.hidden = false;
      pairTitle.focus();
      // Muted, so the browser lets both start on their own, together.
      await Promise.all([...pairBody.querySelectorAll("video")].filter((v) => v.src).map((v) => v.play().catch(() => {})));
    }, errors);
  }

  async function download(ep, button) {
    await busy(button, async () => saveBlob(await apiBlob(ep.mcap_url, { signal }), fileNameOf(ep.mcap_url)), errors);
  }

  function rowOf(ep) {
    const watch = h("button", { type: "button", class: "small", on: { click: () => open(ep) },
      "aria-label": ep.video_url ? `Watch the video of episode ${ep.index}` : `Plot the joints of episode ${ep.index}` }, ep.video_url ? "Video" : "Plots");
    const mcap = ep.mcap_url ? h("button", { type: "button", class: "small", on: { click: () => download(ep, mcap) }, "aria-label": `Download the MCAP of episode ${ep.index}` }, "MCAP") : null;
    const pairButton = typeof ep.pair === "number"
      ? h("button", { type: "button", class: "small", on: { click: () => showPair(ep.pair, pairButton) }, "aria-label": `Show pair ${ep.pair} side by side` }, `Pair ${ep.pair}`)
      : null;
    return h("tr", {},
      h("th", { scope: "row" }, `#${ep.index}`),
      byUnit ? h("td", {}, unitName(units, ep.unit)) : null,
      byUnit ? h("td", {}, pairButton ?? "—") : null,
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
  /** The query and answer last shown: the same answer again (a live run relisted, nothing new) leaves the rows as they are. */
  let lastShown = "";
  async function load() {
    const query = new URLSearchParams(Object.entries(filter).filter(([, v]) => v)).toString();
    const mine = (loading = api(`/v1/runs/${encodeURIComponent(runId)}/episodes${query ? `?${query}` : ""}`, { signal }));
    try {
      const list = await mine;
      if (mine !== loading) return; // a newer filter's answer wins
      errors.clear();
      for (const ep of list.data) if (ep.failure_cluster && !known.has(ep.failure_cluster)) { known.add(ep.failure_cluster); fillClusters(); }
      // Rows replaced by identical ones would close the replay spec a person opened, and lose a click.
      const text = `${query}\n${JSON.stringify(list.data)}`;
      if (text === lastShown) return;
      lastShown = text;
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
    errors.element, pairView, tableEl, empty);

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
