/**
 * Buttons that download a run's (or a selection's) paper files: the table as CSV and LaTeX, the figure
 * as SVG and PNG, the citation as BibTeX and text (GET /v1/runs/{id}/paper/{file}, GET
 * /v1/paper/{file}?runs=a,b; docs/papers.md). Downloaded as Blobs with the key, like the PDF report.
 * `paperDownloads(`/v1/paper/{file}?runs=${ids.join(",")}`, `assay-${ids[0]}-and-...`)` serves the
 * compare-selection page the same way.
 */
import { apiBlob } from "../api.js";
import { h } from "../dom.js";
import { busy, saveBlob } from "../ui.js";

const FILES = [
  ["table.csv", "Table (CSV)"], ["table.tex", "Table (LaTeX)"], ["figure.svg", "Figure (SVG)"], ["figure.png", "Figure (PNG)"],
  ["citation.bib", "Citation (BibTeX)"], ["citation.txt", "Citation (text)"],
];

/** One button per file; `pathOf(file)` is its API path, `stem` the saved files' name before `-<file>`. */
export function paperDownloads(pathOf, stem, { signal, errors }) {
  return h("div", { class: "actions", role: "group", "aria-label": "Downloads for a paper" }, FILES.map(([file, label]) => {
    const button = h("button", { type: "button", class: "small", on: { click: () => busy(button, async () => saveBlob(await apiBlob(pathOf(file), { signal }), `${stem}-${file}`), errors) } }, `Download: ${label}`);
    return button;
  }));
}
