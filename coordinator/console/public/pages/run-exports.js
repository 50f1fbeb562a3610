/**
 * A completed run's report and exports: the citation (GET /v1/runs/{id}/report), the PDF
 * (?format=pdf), and exports in each format (POST /v1/runs/{id}/export, GET /v1/runs/{id}/exports,
 * polled each second while one is preparing; the archive downloaded as a Blob with the key).
 */
import { api, apiBlob } from "../api.js";
import { h, replace } from "../dom.js";
import { when } from "../format.js";
import { badge, busy, errorSlot, saveBlob, table } from "../ui.js";
import { paperDownloads } from "./paper-downloads.js";

const FORMATS = [["lerobot", "LeRobot dataset"], ["rlds", "RLDS (TensorFlow Datasets)"], ["mcap-bundle", "MCAP bundle (audit record)"]];
const POLL_MS = 1000;

const bytes = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1e3))} kB`);

export function reportSection(run, { signal }) {
  const errors = errorSlot();
  const citation = h("blockquote", { class: "citation" }, "Loading the citation…");
  const pdf = h("button", { type: "button", on: { click: () => busy(pdf, async () => saveBlob(await apiBlob(`/v1/runs/${run.id}/report?format=pdf`, { signal }), `${run.id}-report.pdf`), errors) } }, "Download the report (PDF)");
  // The one-line citation for a paper (docs/papers.md); the JSON report's is the fallback.
  apiBlob(`/v1/runs/${run.id}/paper/citation.txt`, { signal }).then((blob) => blob.text()).then(
    (text) => { citation.textContent = text.trim(); },
    () => api(`/v1/runs/${run.id}/report`, { signal }).then(
      (report) => { citation.textContent = report.citation; },
      (error) => { citation.remove(); if (!signal.aborted) errors.show(error); },
    ),
  );
  return h("section", { class: "card", "aria-labelledby": "h-report" },
    h("h2", { id: "h-report" }, "Report"), citation, errors.element, h("div", { class: "actions" }, pdf),
    h("h3", {}, "For a paper"),
    h("p", { class: "small muted" }, "The rates with n and 95% intervals as a table and a figure, and the citation (docs: papers)."),
    paperDownloads((file) => `/v1/runs/${run.id}/paper/${file}`, `assay-${run.id}`, { signal, errors }));
}

export function exportsSection(run, { signal, cleanup }) {
  const errors = errorSlot();
  const list = h("div", { "aria-live": "polite" });
  let timer = null;
  cleanup(() => clearTimeout(timer));

  async function load() {
    clearTimeout(timer);
    try {
      const exports = await api(`/v1/runs/${run.id}/exports`, { signal });
      replace(list, table(null, ["Export", "Format", "Status", "Episodes", "File", "Created", "Available until", ""], exports.data.map((x) => [
        x.id,
        x.format,
        badge(x.status),
        x.status === "preparing" && x.progress ? `${x.progress.episodes_done} of ${x.progress.episodes_total}` : x.episodes ? `${x.episodes.included} included${Object.entries(x.episodes.excluded ?? {}).map(([why, n]) => `, ${n} left out (${why})`).join("")}` : "—",
        x.file ? `${x.file.name} (${bytes(x.file.bytes)})` : x.failure ? x.failure.message : "—",
        when(x.created),
        when(x.expires_at),
        x.status === "ready" && x.download_url ? downloadButton(x) : "",
      ]), { empty: "No exports yet." }));
      if (exports.data.some((x) => x.status === "preparing")) timer = setTimeout(() => void load(), POLL_MS);
    } catch (error) {
      if (!signal.aborted) errors.show(error);
    }
  }

  function downloadButton(x) {
    const button = h("button", { type: "button", class: "small", on: { click: () => busy(button, async () => saveBlob(await apiBlob(x.download_url, { signal }), x.file.name), errors) } }, "Download");
    return button;
  }

  const buttons = FORMATS.map(([format, label]) => {
    const button = h("button", { type: "button", on: { click: () => busy(button, async () => { await api(`/v1/runs/${run.id}/export`, { method: "POST", json: { format }, signal }); await load(); }, errors) } }, `Export: ${label}`);
    return button;
  });

  void load();
  return h("section", { class: "card", "aria-labelledby": "h-exports" },
    h("h2", { id: "h-exports" }, "Exports"),
    h("p", { class: "small muted" }, "Training formats leave out episodes the policy did not succeed in on its own, unless the run was submitted with train_on_failures. Archives download into the browser's memory first; for very large runs use the API (docs: Exports)."),
    h("div", { class: "actions" }, buttons), errors.element, list);
}
