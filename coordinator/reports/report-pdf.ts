/**
 * The report as a PDF (A4, pdfkit's built-in Helvetica): citation, headline rate, a vector chart of
 * success rates with their 95% interval bars (one row per unit, or per stage for a single-unit
 * run), failure clusters, the realized perturbation summary, instruction rates and the task's
 * out-of-scope declarations, verbatim. Rendered in slices (coordinator/pdf/pdf-document.ts) with
 * every text bounded (pdf-text.ts): long unbroken runs are broken into lines, labels and
 * instructions cut with "..." (the JSON report has them whole).
 */
import { startPdf, type Doc, type PdfRenderOptions } from "../pdf/pdf-document.js";
import { pdfText } from "../pdf/pdf-text.js";
import type { RateSummary } from "../runs/result-summary.js";
import type { Report } from "./report.js";
import { operatorTimeText } from "./operator-time-section.js";
import { drawCompareHeadline } from "./compare-headline-section.js";

/** Longest chart label, instruction, and any other line drawn (an out-of-scope line is at most 2,000 by its bound). */
const LABEL_CHARS = 80;
const INSTRUCTION_CHARS = 300;
const LINE_CHARS = 4000;
/** Longest unbroken run on an A4 line (narrower runs are wrapped by pdfkit as usual). */
const RUN_CHARS = 80;

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

interface ChartRow {
  label: string;
  rate: RateSummary;
}

/**
 * Horizontal interval chart: for each row a dot at the success rate, a bar over ci95 with end
 * ticks, on a 0..1 axis with gridlines every 0.25. Draws at the current y; moves y below it.
 */
export async function drawRateChart(doc: Doc, title: string, rows: readonly ChartRow[], pause: () => Promise<void> = async () => {}): Promise<void> {
  const left = doc.page.margins.left;
  const labelW = 170;
  const axisX = left + labelW;
  const axisW = doc.page.width - doc.page.margins.right - axisX - 70;
  const rowH = 18;
  doc.font("Helvetica-Bold").fontSize(11).fillColor("black").text(title, left, doc.y);
  const top = doc.y + 6;
  const height = rows.length * rowH;
  const xOf = (p: number) => axisX + p * axisW;
  doc.lineWidth(0.5).strokeColor("#bbbbbb");
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    doc.moveTo(xOf(tick), top).lineTo(xOf(tick), top + height).stroke();
    doc.font("Helvetica").fontSize(7).fillColor("#666666").text(tick.toFixed(2), xOf(tick) - 8, top + height + 2, { width: 16, align: "center", lineBreak: false });
  }
  for (const [i, row] of rows.entries()) {
    const y = top + i * rowH + rowH / 2;
    doc.font("Helvetica").fontSize(8).fillColor("black").text(pdfText(row.label, LABEL_CHARS, LABEL_CHARS), left, y - 4, { width: labelW - 6, ellipsis: true, lineBreak: false, height: 10 });
    const [lo, hi] = row.rate.ci95;
    doc.lineWidth(1.5).strokeColor("#1f4e9a").moveTo(xOf(lo), y).lineTo(xOf(hi), y).stroke();
    doc.lineWidth(1).moveTo(xOf(lo), y - 4).lineTo(xOf(lo), y + 4).stroke();
    doc.moveTo(xOf(hi), y - 4).lineTo(xOf(hi), y + 4).stroke();
    doc.circle(xOf(row.rate.success_rate), y, 3).fillColor("#1f4e9a").fill();
    doc.font("Helvetica").fontSize(7).fillColor("black")
      .text(`${pct(row.rate.success_rate)} (n=${row.rate.n})`, axisX + axisW + 6, y - 4, { width: 64, lineBreak: false });
    await pause();
  }
  doc.x = left;
  doc.y = top + height + 18;
}

function heading(doc: Doc, text: string): void {
  doc.moveDown(0.6).font("Helvetica-Bold").fontSize(11).fillColor("black").text(text, doc.page.margins.left);
  doc.font("Helvetica").fontSize(9);
}

/** A resolved pin as text: a list joined, a pinned model by its id and sha256 prefix. */
function pinText(value: unknown): string {
  if (Array.isArray(value)) return value.join(", ");
  if (value && typeof value === "object") {
    return Object.entries(value as Record<string, { id?: string; sha256?: string }>)
      .map(([name, model]) => `${name} = ${model.id ?? "?"} (sha256 ${String(model.sha256 ?? "").slice(0, 12)})`).join(", ");
  }
  return String(value);
}

/**
 * The PDF of a report; resolves with the whole PDF (it begins with "%PDF"). A published report (a
 * leaderboard's) comes without `cost`, its cells numbered (coordinator/reports/published-report.ts).
 */
export async function renderReportPdf(report: Omit<Report, "cost"> & { cost?: Report["cost"] }, now: Date, options: PdfRenderOptions = {}): Promise<Buffer> {
  const pdf = startPdf({ size: "A4", margin: 48, info: { Title: `Assay report ${report.run_id}`, Author: "Assay", CreationDate: now } }, options);
  const { doc } = pdf;
  const pause = () => pdf.pause();
  /** One paragraph, bounded, then a turn for the loop if this slice is used up. */
  const line = async (text: string, max = LINE_CHARS) => {
    doc.text(pdfText(text, max, RUN_CHARS));
    await pause();
  };

  doc.font("Helvetica-Bold").fontSize(16).text("Assay verification report");
  doc.font("Helvetica").fontSize(9).fillColor("#444444").text(`${report.run_kind} run ${report.run_id}; generated ${report.generated}`);
  doc.moveDown(0.5).fillColor("black").font("Helvetica-Oblique").fontSize(10).text(pdfText(report.citation, LINE_CHARS, RUN_CHARS));

  heading(doc, "Result");
  const r = report.result;
  doc.text(`n = ${r.n}; success rate ${r.success_rate.toFixed(3)}; 95% interval [${r.ci95[0].toFixed(3)}, ${r.ci95[1].toFixed(3)}] (${r.interval_method}).`);
  await line(`Pins: ${Object.entries(report.resolved_pins).map(([k, v]) => `${k} ${pinText(v)}`).join("; ")}.`);
  // A published report (a leaderboard's) leaves the customer's cost out.
  if (report.cost) doc.text(`Meters: ${report.cost.robot_hours} robot-hours, ${report.cost.environment_hours} environment-hours; cost $${report.cost.cost_usd.toFixed(2)}.`);
  await drawCompareHeadline(doc, report.comparison, line);
  doc.moveDown(0.6);

  const rows: ChartRow[] = report.units.length > 0
    ? report.units.map((u) => ({ label: u.key, rate: u.result }))
    : [{ label: "task success", rate: r }, ...Object.entries(report.stages).map(([name, rate]) => ({ label: `stage: ${name}`, rate }))];
  await drawRateChart(doc, report.units.length > 0 ? "Success rate per unit (dot) with 95% interval" : "Success and stage rates (dot) with 95% interval", rows, pause);

  heading(doc, "Cells");
  const cells = report.cells;
  // The headline's sentences, word for word as the console and the CLI show them (runs/headline-statement.ts).
  if (cells.statement) for (const sentence of cells.statement) await line(sentence);
  else {
    // A result issued before the beta-binomial headline.
    await line(`${r.n} episodes on ${cells.clusters} cell(s); interval ${r.interval_method}; on these cells alone: `
      + `[${pct(cells.ci95_these_cells[0])}, ${pct(cells.ci95_these_cells[1])}] (Wilson).`);
  }
  for (const c of cells.by_cell) await line(`  ${c.cell}: ${c.successes}/${c.n} (${pct(c.success_rate)})`);

  heading(doc, "Failure clusters");
  const clusters = Object.entries(report.failure_clusters);
  await line(clusters.length ? clusters.map(([name, count]) => `${name}: ${count}`).join("; ") : "none");

  heading(doc, "Perturbation schedule as realized");
  const s = report.perturbation_schedule;
  await line(`Set ${s.perturbation_rev}; requested ${JSON.stringify(s.requested)}.`);
  doc.text(`Lighting: ${Object.entries(s.summary.lighting).map(([k, v]) => `${k} ${v}`).join(", ") || "n/a"}. `
    + `Distractor sets: ${Object.entries(s.summary.distractors).map(([k, v]) => `${k} ${v}`).join(", ") || "n/a"}.`);
  doc.text(`${s.realized.length} episodes; per-episode layout seeds and offsets are in the JSON report.`);

  if (Object.keys(report.stages).length && report.units.length > 0) {
    heading(doc, "Stages");
    for (const [name, rate] of Object.entries(report.stages)) await line(`${name}: ${pct(rate.success_rate)} [${pct(rate.ci95[0])}, ${pct(rate.ci95[1])}], n=${rate.n}`);
  }

  heading(doc, "Instructions");
  const { sampled, held_out: heldOut, mode } = report.instructions;
  doc.text(`Instruction set of this run: ${mode === "held_out" ? "held-out paraphrases" : "sampled instructions"}.`);
  doc.text(sampled.n
    ? `Sampled: ${pct(sampled.success_rate)} [${pct(sampled.ci95[0])}, ${pct(sampled.ci95[1])}], n=${sampled.n}`
    : "No sampled instruction recorded.");
  for (const [instruction, rate] of Object.entries(sampled.by_instruction)) await line(`  "${pdfText(instruction, INSTRUCTION_CHARS, RUN_CHARS)}": ${pct(rate.success_rate)} [${pct(rate.ci95[0])}, ${pct(rate.ci95[1])}], n=${rate.n}`);
  doc.text(heldOut.n
    ? `Held out (reported apart): ${pct(heldOut.success_rate)} [${pct(heldOut.ci95[0])}, ${pct(heldOut.ci95[1])}], n=${heldOut.n}`
    : "Held-out paraphrases: none ran in this run (they are never sampled during iteration).");
  for (const [instruction, rate] of Object.entries(heldOut.by_instruction)) await line(`  "${pdfText(instruction, INSTRUCTION_CHARS, RUN_CHARS)}": ${pct(rate.success_rate)} [${pct(rate.ci95[0])}, ${pct(rate.ci95[1])}], n=${rate.n}`);

  heading(doc, "Interventions");
  const iv = report.interventions;
  doc.text(`Mode ${iv.mode}; ${iv.count} intervention(s) in ${iv.episodes_intervened} episode(s), ${iv.assisted_successes} of them successes with help. `
    + `Unassisted (the result above; an intervened episode counts as a failure of the policy): ${pct(iv.unassisted.success_rate)} `
    + `[${pct(iv.unassisted.ci95[0])}, ${pct(iv.unassisted.ci95[1])}] (n=${iv.unassisted.n}). Assisted (successes a human helped counted): `
    + `${pct(iv.assisted.success_rate)} [${pct(iv.assisted.ci95[0])}, ${pct(iv.assisted.ci95[1])}] (n=${iv.assisted.n}).`);
  if (iv.events.length > 0) {
    const shown = iv.events.slice(0, 40).map((e) => `#${e.index} ${e.kind} at ${e.t_s === null ? "?" : `${e.t_s.toFixed(1)} s`}`);
    doc.text(`At: ${shown.join("; ")}${iv.events.length > 40 ? `; ${iv.events.length - 40} more in the JSON report` : ""}.`);
  }

  if (report.operator_time) {
    heading(doc, "Operator time");
    for (const sentence of operatorTimeText(report.operator_time)) await line(sentence);
  }

  heading(doc, "Out of scope (declared by the task, verbatim)");
  if (report.out_of_scope.length === 0) doc.text("none declared");
  for (const declared of report.out_of_scope) await line(`- ${declared}`);

  if (report.units.length > 0) {
    heading(doc, "Unit citations");
    doc.fontSize(8);
    for (const u of report.units) await line(u.citation);
  }

  return pdf.end();
}
