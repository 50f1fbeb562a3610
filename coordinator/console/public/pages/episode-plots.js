/**
 * An episode's joints over time, one small chart per joint: the measured position and the commanded
 * target (the policy's action after the safety envelope), from GET .../episodes/{id}/series (downsampled
 * by the coordinator to at most 2000 points). Drawn with uPlot, served by the coordinator from the pinned
 * npm package (/assets/<version>/vendor/uplot/) and loaded only when a plot is first shown.
 */
import { api } from "../api.js";
import { h } from "../dom.js";

let uPlotModule = null;

/** uPlot and its stylesheet, loaded once. */
async function loadUPlot() {
  if (!uPlotModule) {
    const css = new URL("../vendor/uplot/uPlot.min.css", import.meta.url).href;
    if (!document.querySelector(`link[href="${css}"]`)) document.head.append(h("link", { rel: "stylesheet", href: css }));
    uPlotModule = import("../vendor/uplot/uPlot.esm.js").then((m) => m.default);
  }
  return uPlotModule;
}

/**
 * The plots of one episode into `container` (visible, so its width is known), two charts a row (one on a
 * narrow screen); resolves with `destroy()`, which frees the charts.
 */
export async function episodePlots(episode, container, { signal } = {}) {
  const [series, UPlot] = await Promise.all([
    api(episode.series_url, { signal }),
    loadUPlot(),
  ]);
  const charts = [];
  const grid = h("div", { class: "plots", "data-points": String(series.points) });
  container.replaceChildren(
    h("p", { class: "small muted" }, `Joint positions measured and targets commanded, ${series.points} of ${series.steps} control steps`,
      series.events.length ? `; events: ${series.events.slice(0, 12).map((e) => `${e.name} at ${e.t_s.toFixed(1)} s`).join(", ")}` : "", "."),
    grid);
  // The grid's columns (style.css .plots): two, or one on a narrow screen; each chart fills its column.
  const columns = getComputedStyle(grid).gridTemplateColumns.split(" ").length || 1;
  const width = Math.max(200, Math.floor((grid.clientWidth - 16 - (columns - 1) * 11) / columns));
  series.joint_names.forEach((name, j) => {
    const cell = h("figure", { class: "plot", "aria-label": `${name}: measured and commanded over time` }, h("figcaption", { class: "small" }, name));
    grid.append(cell);
    charts.push(new UPlot({
      width,
      height: 160,
      legend: { show: true },
      cursor: { drag: { x: true, y: false } },
      scales: { x: { time: false } },
      axes: [{ label: "s" }, {}],
      series: [
        { label: "t (s)" },
        { label: "measured", stroke: "#1f6feb", width: 1.5 },
        { label: "commanded", stroke: "#d9480f", width: 1, dash: [4, 3] },
      ],
    }, [series.t_s, series.measured[j], series.commanded[j]], cell));
  });
  return { destroy: () => charts.forEach((c) => c.destroy()) };
}
