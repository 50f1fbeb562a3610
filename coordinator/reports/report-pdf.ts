/**
 * The report as a PDF (A4, DejaVu Sans embedded; issue 28 item 4), a document a researcher can
 * attach to a paper:
 *
 * 1. Summary page: the title (the run's name, else its policies on its task), the kind and run id,
 *    the headline rate with n and its 95% interval, the kind's own sentences (a compare's difference:
 *    `drawKindSection`, the hook for kind-specific content), the pins, the citation, the per-unit
 *    table and a chart of the rates with their intervals, the meters.
 * 2. What happened: the stage funnel, failure clusters, a filmstrip of failures (first, middle and
 *    last top-camera frame), per-cell counts with the headline's sentences.
 * 3. Conditions: the perturbation schedule as realized, instructions, interventions, operator time,
 *    the task's out-of-scope declarations (verbatim), unit citations.
 * 4. Methods: how the rates were estimated, with references.
 *
 * A published report (a leaderboard's) and a report rendered without extras print what the Report
 * alone holds. Rendered in slices (coordinator/pdf/pdf-document.ts) with every text bounded
 * (pdf-text.ts): long unbroken runs are broken into lines, labels and instructions cut with "..."
 * (the JSON report has them whole). Bounded for any run size: the table has a row per unit, the
 * filmstrip at most FILMSTRIP_EPISODES episodes, per-cell counts one line per cell.
 */
import { PDF_FONTS, startPdf, type Doc, type PdfRenderOptions } from "../pdf/pdf-document.js";
import { drawTable } from "../pdf/pdf-table.js";
import { pdfText } from "../pdf/pdf-text.js";
import type { RateSummary } from "../runs/result-summary.js";
import type { Report } from "./report.js";
import type { ReportExtras } from "./report-extras.js";
import { operatorTimeText } from "./operator-time-section.js";
import { drawCompareHeadline } from "./compare-headline-section.js";
import { intervalWords, kindWords } from "./paper-names.js";
import { requestedPerturbationWords } from "./perturbation-words.js";
import { kindTraitsOf } from "../kinds/registry.js";

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
  doc.font(PDF_FONTS.bold).fontSize(11).fillColor("black").text(title, left, doc.y);
  const top = doc.y + 6;
  const height = rows.length * rowH;
  const xOf = (p: number) => axisX + p * axisW;
  doc.lineWidth(0.5).strokeColor("#bbbbbb");
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    doc.moveTo(xOf(tick), top).lineTo(xOf(tick), top + height).stroke();
    doc.font(PDF_FONTS.regular).fontSize(7).fillColor("#666666").text(tick.toFixed(2), xOf(tick) - 8, top + height + 2, { width: 16, align: "center", lineBreak: false });
  }
  for (const [i, row] of rows.entries()) {
    const y = top + i * rowH + rowH / 2;
    doc.font(PDF_FONTS.regular).fontSize(8).fillColor("black").text(pdfText(row.label, LABEL_CHARS, LABEL_CHARS), left, y - 4, { width: labelW - 6, ellipsis: true, lineBreak: false, height: 10 });
    const [lo, hi] = row.rate.ci95;
    doc.lineWidth(1.5).strokeColor("#1f4e9a").moveTo(xOf(lo), y).lineTo(xOf(hi), y).stroke();
    doc.lineWidth(1).moveTo(xOf(lo), y - 4).lineTo(xOf(lo), y + 4).stroke();
    doc.moveTo(xOf(hi), y - 4).lineTo(xOf(hi), y + 4).stroke();
    doc.circle(xOf(row.rate.success_rate), y, 3).fillColor("#1f4e9a").fill();
    doc.font(PDF_FONTS.regular).fontSize(7).fillColor("black")
      .text(`${pct(row.rate.success_rate)} (n=${row.rate.n})`, axisX + axisW + 6, y - 4, { width: 64, lineBreak: false });
    await pause();
  }
  doc.x = left;
  doc.y = top + height + 18;
}

function heading(doc: Doc, text: string): void {
  doc.moveDown(0.6).font(PDF_FONTS.bold).fontSize(11).fillColor("black").text(text, doc.page.margins.left);
  doc.font(PDF_FONTS.regular).fontSize(9);
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

const pctI = (rate: Pick<RateSummary, "ci95">) => `[${pct(rate.ci95[0])}, ${pct(rate.ci95[1])}]`;

/** The title when no extras say it: the task and policies of the units, never the run's id twice. */
function fallbackTitle(report: Pick<Report, "run_kind" | "units" | "resolved_pins">): string {
  const policies = [...new Set(report.units.map((u) => u.policy_name).filter((p): p is string => Boolean(p)))];
  const tasks = [...new Set(report.units.length ? report.units.map((u) => u.task) : [String(report.resolved_pins.task ?? "")])].join(", ");
  return policies.length ? `${policies.join(kindTraitsOf(report.run_kind)?.comparesPolicies ? " vs " : ", ")} on ${tasks}` : `${kindWords(report.run_kind).replace(/^./, (c) => c.toUpperCase())} of ${tasks}`;
}

/**
 * The kind's own section on the summary page: the sentences that state its answer (a compare's
 * difference and test, a transfer's gap), verbatim from the Result. The hook where a kind-specific
 * section goes: draw it here, between the headline and the pins.
 */
async function drawKindSection(doc: Doc, statements: readonly string[], line: (text: string) => Promise<void>): Promise<void> {
  if (statements.length === 0) return;
  doc.moveDown(0.3).font(PDF_FONTS.regular).fontSize(10).fillColor("black");
  for (const statement of statements) await line(statement);
}

/** The stage funnel as bars: of the counted episodes, how many reached each stage, then succeeded. */
async function drawFunnel(doc: Doc, funnel: ReportExtras["funnel"], pause: () => Promise<void>): Promise<void> {
  const left = doc.page.margins.left;
  const labelW = 150;
  const barW = 260;
  const rowH = 15;
  const steps = [...funnel.steps.map((s) => ({ label: s.stage, k: s.reached, n: s.of })), { label: "success (policy alone)", k: funnel.successes, n: funnel.episodes }];
  if (doc.y + steps.length * rowH > doc.page.height - doc.page.margins.bottom) doc.addPage();
  const top = doc.y + 2;
  for (const [i, step] of steps.entries()) {
    const y = top + i * rowH;
    const share = funnel.episodes > 0 ? step.k / funnel.episodes : 0;
    doc.font(PDF_FONTS.regular).fontSize(8.5).fillColor("black").text(pdfText(step.label, LABEL_CHARS, LABEL_CHARS), left, y + 2, { width: labelW - 6, lineBreak: false, ellipsis: true, height: rowH });
    doc.rect(left + labelW, y + 2, barW, rowH - 5).fillColor("#e8edf5").fill();
    if (share > 0) doc.rect(left + labelW, y + 2, barW * share, rowH - 5).fillColor("#1f4e9a").fill();
    doc.fillColor("black").text(`${step.k} of ${funnel.episodes} (${pct(share)})${step.n !== funnel.episodes ? `; ${step.n} recorded the stage` : ""}`, left + labelW + barW + 8, y + 2, { width: 150, lineBreak: false, height: rowH });
    await pause();
  }
  doc.x = left;
  doc.y = top + steps.length * rowH + 6;
}

/** Key frames of failures: per episode a caption, then its frames side by side with their times. */
async function drawFilmstrip(doc: Doc, filmstrip: ReportExtras["filmstrip"], pause: () => Promise<void>): Promise<void> {
  const left = doc.page.margins.left;
  const frameW = 150;
  const gap = 10;
  for (const episode of filmstrip) {
    const frameH = Math.round(frameW * 0.75);
    if (doc.y + frameH + 30 > doc.page.height - doc.page.margins.bottom) doc.addPage();
    doc.font(PDF_FONTS.bold).fontSize(8.5).fillColor("black")
      .text(`Episode ${episode.index}: ${episode.cluster ?? "failure"}${episode.cell ? `, cell ${episode.cell}` : ""}`, left, doc.y);
    const top = doc.y + 3;
    for (const [i, frame] of episode.frames.entries()) {
      const x = left + i * (frameW + gap);
      doc.image(Buffer.from(frame.jpeg), x, top, { fit: [frameW, frameH] });
      doc.font(PDF_FONTS.regular).fontSize(7.5).fillColor("#444444").text(`${["first", "middle", "last"][i] ?? ""} frame, t = ${frame.t_s.toFixed(1)} s`, x, top + frameH + 2, { width: frameW, lineBreak: false });
      await pause();
    }
    doc.x = left;
    doc.y = top + frameH + 16;
  }
}

/**
 * The PDF of a report; resolves with the whole PDF (it begins with "%PDF"). A published report (a
 * leaderboard's) comes without `cost`, its cells numbered (coordinator/reports/published-report.ts).
 * `extras` (report-extras.ts) adds the title, table, funnel, filmstrip and methods; without them the
 * PDF prints what the Report holds.
 */
export async function renderReportPdf(report: Omit<Report, "cost"> & { cost?: Report["cost"] }, now: Date, options: PdfRenderOptions = {}, extras?: ReportExtras): Promise<Buffer> {
  const title = extras?.title ?? fallbackTitle(report);
  const pdf = startPdf({ size: "A4", margin: 48, info: { Title: pdfText(title, 200, 200), Author: "Assay", Subject: `Assay ${kindWords(report.run_kind)} ${report.run_id}`, CreationDate: now } }, { ...options, embedFont: true });
  const { doc } = pdf;
  const pause = () => pdf.pause();
  /** One paragraph, bounded, then a turn for the loop if this slice is used up. */
  const line = async (text: string, max = LINE_CHARS) => {
    doc.text(pdfText(text, max, RUN_CHARS));
    await pause();
  };
  const r = report.result;

  // 1. Summary.
  doc.font(PDF_FONTS.bold).fontSize(18).fillColor("black").text(pdfText(title, 200, RUN_CHARS));
  const subtitle = extras?.subtitle ?? `${kindWords(report.run_kind).replace(/^./, (c) => c.toUpperCase())} ${report.run_id}`;
  doc.font(PDF_FONTS.regular).fontSize(9).fillColor("#444444").text(`Assay report. ${subtitle}; generated ${report.generated.slice(0, 16).replace("T", " ")} UTC.`);
  doc.moveDown(0.8).fillColor("black").font(PDF_FONTS.bold).fontSize(12)
    .text(`Success rate ${pct(r.success_rate)} ${pctI(r)}, n = ${r.n}`);
  const population = extras?.population ? `; the headline is of ${extras.population}` : report.units.length > 1 ? "; the headline's population is named in the JSON report (result.population)" : "";
  doc.font(PDF_FONTS.regular).fontSize(9).fillColor("#444444").text(pdfText(`95% interval, ${intervalWords(r.interval_method)}${population}.`, LINE_CHARS, RUN_CHARS));
  await drawKindSection(doc, extras?.kindStatements ?? [], line);
  // A compare's or transfer's answer: its difference, interval and test (result.headline), as the console and CLI say it.
  await drawCompareHeadline(doc, report.comparison, line);

  heading(doc, "Pins");
  for (const [k, v] of Object.entries(report.resolved_pins)) await line(`${k === "perturbation_rev" ? "perturbation set" : k === "task" ? "task (frozen revision)" : k}: ${pinText(v)}`);
  // A published report (a leaderboard's) leaves the customer's cost out.
  if (report.cost) doc.text(`Meters: ${report.cost.robot_hours} robot-hours, ${report.cost.environment_hours} environment-hours; cost $${report.cost.cost_usd.toFixed(2)}.`);

  heading(doc, "Cite as");
  doc.font(PDF_FONTS.italic).fontSize(9);
  await line(extras?.citation ?? report.citation);
  doc.font(PDF_FONTS.regular);

  if (extras && extras.rows.length > 0) {
    heading(doc, "Success rate per unit");
    await drawTable(doc, [
      { title: extras.unitHeading, width: 200 }, { title: "n", width: 45, align: "right" }, { title: "Successes", width: 65, align: "right" },
      { title: "Success rate", width: 80, align: "right" }, { title: "95% interval", width: 109, align: "center" },
    ], extras.rows.map((row) => [row.label, String(row.n), String(row.successes), pct(row.success_rate), pctI(row)]), pause);
  }

  const rows: ChartRow[] = extras && extras.rows.length > 1
    ? extras.rows.map((row) => ({ label: row.label, rate: row }))
    : report.units.length > 0
      ? report.units.map((u) => ({ label: u.key, rate: u.result }))
      : [{ label: "task success", rate: r }, ...Object.entries(report.stages).map(([name, rate]) => ({ label: `stage: ${name}`, rate }))];
  doc.moveDown(0.6);
  await drawRateChart(doc, rows.length > 1 && (extras?.rows.length ?? 0) > 1 ? "Success rate (dot) with 95% interval" : "Success and stage rates (dot) with 95% interval (stages: Wilson)", rows, pause);

  // 2. What happened.
  doc.addPage();
  if (extras) {
    heading(doc, "Stage funnel");
    if (extras.funnel.steps.length === 0) await line("The task recorded no stages for these episodes.");
    else await drawFunnel(doc, extras.funnel, pause);
  } else if (Object.keys(report.stages).length && report.units.length > 0) {
    heading(doc, "Stages");
    for (const [name, rate] of Object.entries(report.stages)) await line(`${name}: ${pct(rate.success_rate)} ${pctI(rate)}, n=${rate.n}`);
  }

  heading(doc, "Failure clusters");
  const clusters = Object.entries(report.failure_clusters);
  await line(clusters.length ? clusters.map(([name, count]) => `${name}: ${count}`).join("; ") : "none");

  if (extras && extras.filmstrip.length > 0) {
    heading(doc, "Failures, frame by frame (top camera)");
    await drawFilmstrip(doc, extras.filmstrip, pause);
  }

  heading(doc, "Cells");
  const cells = report.cells;
  // The headline's sentences, word for word as the console and the CLI show them (runs/headline-statement.ts).
  if (cells.statement) for (const sentence of cells.statement) await line(sentence);
  else {
    // A result issued before the beta-binomial headline.
    await line(`${r.n} episodes on ${cells.clusters} cell(s); interval ${r.interval_method}; on these cells alone: `
      + `[${pct(cells.ci95_these_cells[0])}, ${pct(cells.ci95_these_cells[1])}] (Wilson).`);
  }
  if (cells.by_cell.length > 0) {
    doc.moveDown(0.3);
    await drawTable(doc, [
      { title: "Cell", width: 200 }, { title: "Episodes", width: 70, align: "right" }, { title: "Successes", width: 70, align: "right" }, { title: "Success rate", width: 80, align: "right" },
    ], cells.by_cell.map((c) => [c.cell, String(c.n), String(c.successes), pct(c.success_rate)]), pause);
  }

  // 3. Conditions.
  heading(doc, "Perturbation schedule as realized");
  const s = report.perturbation_schedule;
  await line(`Set ${s.perturbation_rev}; requested: ${requestedPerturbationWords(s.requested)}.`);
  doc.text(`Lighting: ${Object.entries(s.summary.lighting).map(([k, v]) => `${k} ${v}`).join(", ") || "n/a"}. `
    + `Distractor sets: ${Object.entries(s.summary.distractors).map(([k, v]) => `${k} ${v}`).join(", ") || "n/a"}.`);
  doc.text(`${s.realized.length} episodes; per-episode layout seeds and offsets are in the JSON report.`);

  // Without extras the stages are in the chart (one unit) or under "Stages" above.
  if (extras && Object.keys(report.stages).length) {
    heading(doc, "Stage rates (Wilson 95%)");
    for (const [name, rate] of Object.entries(report.stages)) await line(`${name}: ${pct(rate.success_rate)} ${pctI(rate)}, n=${rate.n}`);
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

  // 4. Methods.
  if (extras) {
    heading(doc, "Methods");
    await line(extras.methods.paragraph);
    heading(doc, "References");
    doc.fontSize(8);
    for (const reference of extras.methods.references) await line(reference);
  }

  return pdf.end();
}
