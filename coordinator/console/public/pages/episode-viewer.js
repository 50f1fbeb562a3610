/**
 * One episode opened on the run page: what happened (outcome, failure cluster, last stage reached, the
 * person's label), its video from every camera the API lists (`videos: {camera: url}` when present, else
 * `video_url`), and plots of its joints (episode-plots.js). Videos need the key, so they are fetched as
 * Blobs and shown through object URLs, revoked when replaced or when the page is left.
 */
import { apiBlob } from "../api.js";
import { h, replace } from "../dom.js";
import { seconds } from "../format.js";
import { errorSlot } from "../ui.js";
import { episodePlots } from "./episode-plots.js";

/** The episode's videos as [camera, url] pairs. */
export function videosOf(ep) {
  const listed = ep.videos && typeof ep.videos === "object" ? Object.entries(ep.videos).filter(([, url]) => typeof url === "string") : [];
  if (listed.length > 0) return listed;
  return ep.video_url ? [["top", ep.video_url]] : [];
}

/** What happened, in words: "failure (timeout_after_grasped), last stage grasped". */
export function episodeWords(ep) {
  return `${ep.outcome}${ep.failure_cluster ? ` (${ep.failure_cluster})` : ""}${ep.last_stage ? `, last stage ${ep.last_stage}` : ep.last_stage === null ? ", no stage reached" : ""}`;
}

export function episodeViewer(runId, { signal, cleanup }) {
  const title = h("h3", { tabindex: "-1" });
  const facts = h("div", {});
  const videos = h("div", { class: "videos" });
  const plots = h("div", { class: "episode-plots" });
  const errors = errorSlot();
  const close = h("button", { type: "button", class: "small", on: { click: () => clear() } }, "Close");
  const element = h("section", { class: "player", hidden: true, "aria-label": "Episode" }, h("div", { class: "player-head" }, title, close), facts, errors.element, videos, plots);
  let objectUrls = [];
  let chart = null;
  let opened = 0;

  function clear() {
    for (const video of videos.querySelectorAll("video")) { video.removeAttribute("src"); video.load(); }
    objectUrls.forEach((url) => URL.revokeObjectURL(url));
    objectUrls = [];
    chart?.destroy();
    chart = null;
    videos.replaceChildren();
    plots.replaceChildren();
    element.hidden = true;
  }
  cleanup(clear);

  async function open(ep) {
    clear();
    const mine = ++opened;
    errors.clear();
    element.hidden = false;
    element.dataset.episode = String(ep.index);
    title.textContent = `Episode ${ep.index}: ${episodeWords(ep)}`;
    replace(facts, h("p", { class: "small muted" }, `${ep.id} on ${ep.cell ?? "an unknown cell"}, ${seconds(ep.duration_s)}. `,
      ep.replay_spec?.instruction ? `Instruction: “${ep.replay_spec.instruction}”. ` : "",
      ep.label?.note ? `The person's note: “${ep.label.note}”. ` : "",
      ep.label?.progress !== null && ep.label?.progress !== undefined ? `Progress ${ep.label.progress}/100.` : ""));
    title.focus();
    const pairs = videosOf(ep);
    const players = pairs.map(([camera]) => {
      const video = h("video", { controls: true, muted: true, playsinline: true, preload: "auto", class: "episode-video", "aria-label": `Episode ${ep.index}, camera ${camera}` });
      videos.append(h("figure", { class: "camera" }, video, h("figcaption", { class: "small" }, camera)));
      return video;
    });
    if (pairs.length === 0) videos.append(h("p", { class: "muted" }, "No video yet."));
    const loads = pairs.map(async ([, url], i) => {
      const blob = await apiBlob(url, { signal });
      if (mine !== opened) return;
      const objectUrl = URL.createObjectURL(blob);
      objectUrls.push(objectUrl);
      players[i].src = objectUrl;
      // Muted, so the browser lets it start on its own; the controls are there to pause and seek.
      await players[i].play().catch(() => {});
    });
    const plotted = ep.series_url
      ? episodePlots(ep, plots, { signal })
        .then((made) => { if (mine === opened) chart = made; else made.destroy(); })
      : Promise.resolve(plots.replaceChildren(h("p", { class: "muted" }, "The recording is not stored yet, so no plots: open the episode again in a moment.")));
    for (const result of await Promise.allSettled([...loads, plotted])) {
      if (result.status === "rejected" && !signal.aborted && mine === opened) errors.show(result.reason);
    }
  }

  return { element, open };
}
