/**
 * PDF rendering (issue 24 rows 2 and 14): how long the label of the largest legal kit and a report
 * with every out-of-scope line at its bound take, whether layout work grows linearly with the text
 * (characters pdfkit measures per character of an unbroken line), and how long the event loop is
 * held while PDFs render, in process (in slices) and on the coordinator's worker thread. Loop delay
 * is `perf_hooks.monitorEventLoopDelay` at 1 ms resolution over the renders, beside the same
 * measure over a second of doing nothing (what the machine's load alone costs).
 *
 *   npx tsx scripts/bench/render-pdf.ts [renders per figure, default 5]
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { inProcessPdfRenderer, workerPdfRenderer, type PdfRenderer } from "../../coordinator/api/pdf-renderer.js";
import { KIT_ITEMS_MAX, TASK_ENTRIES_MAX, TEXT_MAX_CHARS } from "../../coordinator/json/field-bounds.js";
import { renderShippingLabel } from "../../coordinator/kits/label-pdf.js";
import type { KitRecord } from "../../coordinator/store/kits-repo.js";
import type { PdfWork } from "../../coordinator/pdf/pdf-document.js";
import { renderReportPdf } from "../../coordinator/reports/report-pdf.js";
import type { Report } from "../../coordinator/reports/report.js";
import type { Figure } from "../bench.js";
import { quantile } from "./quantiles.js";

const BENCH = "render-pdf";
const NOW = new Date("2026-11-27T12:00:00.000Z");

/** Seeded text without spaces (pdfkit memoizes equal words, so the text must not repeat). */
function unbroken(n: number, seed: number): string {
  let x = seed >>> 0;
  let text = "";
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    text += String.fromCharCode(97 + ((x >>> 16) % 26));
  }
  return text;
}

const largestKit = (): KitRecord => ({
  id: "kit_BenchLargest1", account_id: "acct_bench", name: "largest-legal-kit", status: "registered", created: NOW.toISOString(), status_history: [], tracking: null,
  items: Array.from({ length: KIT_ITEMS_MAX }, (_, i) => ({ desc: unbroken(TEXT_MAX_CHARS, i + 1), qty: i + 1 })),
} as unknown as KitRecord);

const rate = { n: 100, success_rate: 0.7, ci95: [0.6, 0.78] as [number, number], interval_method: "wilson" };
const fullReport = (outOfScope: string[]): Report => ({
  object: "report", run_id: "run_Bench", kind: "verification", run_kind: "run", result: rate,
  resolved_pins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
  citation: "Assay run run_Bench (2026-11-27): pick-cube@v1 on so101@3.11 in tabletop@1, n=100, success 0.70 [0.60, 0.78] (Wilson 95%).",
  pdf_url: "http://127.0.0.1/v1/runs/run_Bench/report?format=pdf", generated: NOW.toISOString(), failure_clusters: { grasp_slip: 30 },
  perturbation_schedule: { perturbation_rev: "assay-perturb@1", requested: {}, summary: { lighting: {}, distractors: {} }, realized: [] },
  stages: {}, instructions: { mode: "sampled", sampled: { ...rate, by_instruction: {} }, held_out: { ...rate, n: 0, by_instruction: {} } },
  out_of_scope: outOfScope, units: [],
  interventions: { mode: "none", episodes_intervened: 0, count: 0, assisted_successes: 0, events: [], unassisted: rate, assisted: rate },
  cells: { by_cell: [{ cell: "cell 1", n: 100, successes: 70, success_rate: 0.7 }], clusters: 1, design_effect: 1, effective_n: 100, ci95_these_cells: [0.6, 0.78] },
  cost: { robot_hours: 1, environment_hours: 1, cost_usd: 10 },
  // Cells as stored before the beta-binomial headline (no statement): the report's fallback path.
} as unknown as Report);

/** Renders `times` times one after the other; wall ms of each and the loop's longest delay over all. */
async function timed(times: number, render: () => Promise<Buffer>): Promise<{ ms: number[]; loopMaxMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    await render();
    ms.push(performance.now() - started);
  }
  histogram.disable();
  return { ms, loopMaxMs: histogram.max / 1e6 };
}

export async function run(times = 5): Promise<Figure[]> {
  const figures: Figure[] = [];
  const figure = (metric: string, value: number, unit: string) => figures.push({ bench: BENCH, metric, value: Number(value.toFixed(3)), unit });
  const kit = largestKit();
  const report = fullReport(Array.from({ length: TASK_ENTRIES_MAX }, (_, i) => unbroken(TEXT_MAX_CHARS, 1000 + i)));

  // Linear layout: characters measured per character of one unbroken out-of-scope line, at two lengths.
  const measured = async (chars: number) => {
    const base: PdfWork = { measuredChars: 0, slices: 0 };
    const work: PdfWork = { measuredChars: 0, slices: 0 };
    await renderReportPdf(fullReport(["x"]), NOW, { work: base });
    await renderReportPdf(fullReport([unbroken(chars, 7)]), NOW, { work });
    return (work.measuredChars - base.measuredChars) / chars;
  };
  figure("layout_measured_chars_per_char_1000", await measured(1000), "chars/char");
  figure("layout_measured_chars_per_char_2000", await measured(2000), "chars/char");

  // The machine's own noise: the loop's longest delay while it does nothing for a second.
  const idle = monitorEventLoopDelay({ resolution: 1 });
  idle.enable();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  idle.disable();
  figure("idle_loop_delay_max_ms", idle.max / 1e6, "ms");

  await renderShippingLabel(kit, NOW); // warm-up (fonts, JIT)
  for (const [name, renderer] of [["in_process", inProcessPdfRenderer()], ["worker", workerPdfRenderer()]] as Array<[string, PdfRenderer]>) {
    await renderer.label(kit, NOW); // the worker starts here
    const label = await timed(times, () => renderer.label(kit, NOW));
    figure(`${name}_largest_label_ms_p50`, quantile(label.ms, 0.5), "ms");
    figure(`${name}_largest_label_loop_delay_max_ms`, label.loopMaxMs, "ms");
    const full = await timed(times, () => renderer.report(report, NOW));
    figure(`${name}_report_32_lines_at_bound_ms_p50`, quantile(full.ms, 0.5), "ms");
    figure(`${name}_report_loop_delay_max_ms`, full.loopMaxMs, "ms");
    await renderer.close();
  }
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const f of await run(Number(process.argv[2] ?? 5))) console.log(JSON.stringify(f));
}
