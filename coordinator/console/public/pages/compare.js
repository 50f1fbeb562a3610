/**
 * `#/compare?runs=<id>,<id>[,...]`: any two or more runs side by side (GET /v1/comparisons), as the runs
 * list's "Compare these" selects them: a warning first when their pins differ, then every pair's
 * difference (the sentence it supports, its interval on -100..+100 points), each side's rate with its
 * Wilson and model-level intervals and n, the runs' pins, and downloads for a paper (a row per run:
 * CSV and LaTeX tables, SVG and PNG figure, BibTeX and a citation). The ids can be edited here too.
 */
import { api } from "../api.js";
import { field, h } from "../dom.js";
import { pct } from "../format.js";
import { differenceBar, sideBar } from "../difference.js";
import { errorSlot, table } from "../ui.js";
import { paperDownloads } from "./paper-downloads.js";

/**
 * A side's perturbation settings (canonical JSON from the API) in words that wrap:
 * `{"lighting":["dim"],"seed":7}` -> "lighting dim; seed 7". Anything that is not a JSON object is shown as is.
 */
export function perturbationWords(json) {
  let value;
  try { value = JSON.parse(json); } catch { return json; }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return json;
  const words = (v) => (Array.isArray(v) ? v.map(words).join(", ") : v !== null && typeof v === "object" ? JSON.stringify(v) : String(v));
  return Object.entries(value).map(([key, v]) => `${key.replaceAll("_", " ")} ${words(v)}`).join("; ");
}

/** The ids in `runs=a,b,c`, trimmed, without empties. */
const idsOf = (text) => (text ?? "").split(/[\s,]+/).map((id) => id.trim()).filter(Boolean);

export async function comparePage(ctx) {
  ctx.setTitle("Compare runs");
  const ids = idsOf(ctx.query.get("runs"));
  const input = h("input", { id: "compare-runs", type: "text", value: ids.join(", "), size: 60, spellcheck: false, autocomplete: "off" });
  const form = h("form", { class: "filters", on: { submit: (e) => { e.preventDefault(); ctx.navigate(`/compare?runs=${idsOf(input.value).map(encodeURIComponent).join(",")}`); } } },
    field("Runs (2 to 6 ids, comma-separated)", input), h("button", { type: "submit" }, "Compare"));
  const errors = errorSlot();
  const head = h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Compare runs"));
  if (ids.length < 2) {
    ctx.show(head, h("p", {}, "Choose two or more runs in the ", h("a", { href: "#/runs" }, "runs list"), " and compare them, or give their ids here."), form);
    return;
  }
  ctx.show(head, form, errors.element, h("p", { class: "muted", "aria-live": "polite" }, "Comparing..."));
  let c;
  try {
    c = await api(`/v1/comparisons?runs=${ids.map(encodeURIComponent).join(",")}`, { signal: ctx.signal });
  } catch (error) {
    if (ctx.signal.aborted) return;
    ctx.show(head, form, errors.element);
    errors.show(error);
    return;
  }
  const warningsEl = c.warnings.length
    ? h("div", { class: "warning", role: "note", "aria-label": "The runs' pins differ" }, c.warnings.map((w) => h("p", {}, w)))
    : null;
  const simultaneous = c.simultaneous.pairs > 1
    ? `The ${c.simultaneous.pairs} intervals hold together with ${pct(c.simultaneous.family_level)} confidence: each is a ${pct(c.simultaneous.ci_level)} interval (Bonferroni).`
    : "";
  ctx.show(
    head,
    warningsEl,
    h("section", { class: "card comparison", "aria-labelledby": "h-differences" },
      h("h2", { id: "h-differences" }, c.differences.length === 1 ? `Difference: ${c.differences[0].a} - ${c.differences[0].b}` : "Differences"),
      c.differences.map((d) => h("div", { class: "pair-difference", "data-pair": `${d.a} - ${d.b}` },
        c.differences.length > 1 ? h("h3", {}, `${d.a} - ${d.b}`) : null,
        h("p", { class: "claim", "data-shown": d.shown }, d.sentence),
        differenceBar({ ...d, of: `${d.a} - ${d.b}` }),
        h("p", { class: "small muted" }, `On these cells alone (Newcombe): ${d.these_cells.diff > 0 ? "+" : ""}${Number((d.these_cells.diff * 100).toFixed(1))} points, `
          + `interval ${Number((d.these_cells.ci[0] * 100).toFixed(1))} to ${Number((d.these_cells.ci[1] * 100).toFixed(1))}`
          + `${d.probability_a_greater !== null ? `; P(${d.a} better) = ${d.probability_a_greater.toFixed(3)}` : ""}.`))),
      h("p", { class: "small" }, simultaneous, " The runs were not paired, so each side is modelled on its own cells (beta-binomial posterior difference of the model-level rates).")),
    h("section", { class: "card", "aria-labelledby": "h-sides" },
      h("h2", { id: "h-sides" }, "Each side"),
      h("p", { class: "small muted" }, "Success rate with its 95% Wilson interval and n."),
      h("div", { class: "rates" }, c.sides.map(sideBar)),
      table(null, ["Side", "Run", "Policy", "Robot", "Environment", "Task", "Perturbation", "n", "Rate", "95% model-level interval"], c.sides.map((s) => [
        s.label,
        s.published ? `${s.run_id} (published)` : h("a", { href: `#/runs/${s.run_id}` }, s.run_id, s.unit ? ` ${s.unit}` : ""),
        s.policy_name ?? "—", s.robot, s.environment, s.task, `${s.perturbation_rev}${s.perturbation ? `: ${perturbationWords(s.perturbation)}` : ""}`,
        String(s.n), pct(s.success_rate), `${pct(s.ci95[0])} – ${pct(s.ci95[1])}`,
      ]))),
    h("section", { class: "card", "aria-labelledby": "h-paper" },
      h("h2", { id: "h-paper" }, "For a paper"),
      h("p", { class: "small muted" }, "A row per run (its headline rate with n and 95% interval): tables, a figure and citations (docs/papers.md)."),
      paperDownloads((file) => `/v1/paper/${file}?runs=${ids.map(encodeURIComponent).join(",")}`, `assay-${ids[0]}-and-${ids.length - 1}-more`, { signal: ctx.signal, errors })),
    form,
  );
}
