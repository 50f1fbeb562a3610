/**
 * The PDF report says what the JSON says (issue 28, item 1): a compare's report carries its headline
 * (`comparison`), and the PDF prints the sentence, the test and each side's rate near the top, before the
 * chart. The text is read back from the PDF itself (test/support/pdf-drawn-text.ts: the content streams'
 * strings decoded through the embedded font's ToUnicode map), independently of pdfkit.
 */
import assert from "node:assert/strict";
import type { Report } from "../../coordinator/reports/report.js";
import { renderReportPdf } from "../../coordinator/reports/report-pdf.js";
import { compareHeadline } from "../../coordinator/runs/compare-headline.js";
import { pdfDrawnText } from "../support/pdf-drawn-text.js";

/** The PDF's drawn text in drawing order, lines joined by spaces. */
const pdfShownText = (pdf: Buffer): string => pdfDrawnText(pdf).replace(/\s+/g, " ");

const rate = (successes: number, n: number) => ({ n, success_rate: successes / n, ci95: [0.2, 0.8] as [number, number], interval_method: "wilson" });

describe("compare headline on the PDF report", () => {
  it("prints the comparison's sentence, test and sides before the chart, word for word as result.headline", async () => {
    const headline = compareHeadline({
      units: [
        { key: "policy:expert", policy_name: "expert", robot: "so101@3.11", result: { n: 20, success_rate: 1, ci95: [0.84, 1] } },
        { key: "policy:novice", policy_name: "novice", robot: "so101@3.11", result: { n: 20, success_rate: 0.7, ci95: [0.4, 0.86] } },
      ],
      comparison: {
        a: "expert", b: "novice", paired: true, claim: "model", diff: 0.3, ci: [0.1153, 0.4611], ci_level: 0.95, method: "paired-cell-random-effects-posterior",
        probability_a_greater: 0.997, these_cells: { diff: 0.3, ci: [0.1012, 0.5159], ci_level: 0.95, method: "newcombe-paired" }, mcnemar: { b: 6, c: 0, n_discordant: 6, p_value: 0.03125 },
      },
    })!;
    const report = {
      object: "report", run_id: "run_Cmp1", kind: "verification", run_kind: "compare", result: rate(20, 20),
      resolved_pins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
      citation: "Assay run run_Cmp1", pdf_url: "http://127.0.0.1/v1/runs/run_Cmp1/report?format=pdf", generated: "2026-11-28T00:00:00.000Z",
      failure_clusters: {}, perturbation_schedule: { perturbation_rev: "assay-perturb@1", requested: {}, summary: { lighting: {}, distractors: {} }, realized: [] },
      stages: {}, instructions: { mode: "sampled", sampled: { ...rate(20, 20), by_instruction: {} }, held_out: { ...rate(0, 1), n: 0, by_instruction: {} } },
      out_of_scope: [], units: [],
      interventions: { mode: "none", episodes_intervened: 0, count: 0, assisted_successes: 0, events: [], unassisted: rate(20, 20), assisted: rate(20, 20) },
      cells: { by_cell: [], clusters: 0, design_effect: 1, effective_n: 20, ci95_these_cells: [0.84, 1] },
      comparison: headline,
      cost: { robot_hours: 0.1, environment_hours: 0.1, cost_usd: 1.5 },
    } as unknown as Report;
    const text = pdfShownText(await renderReportPdf(report, new Date("2026-11-28T00:00:00.000Z")));
    const at = text.indexOf(`Comparison: expert - novice ${headline.sentence}`);
    assert.ok(at > 0, text.slice(0, 800));
    for (const line of headline.lines.slice(1)) assert.ok(text.includes(line), `missing: ${line}`);
    assert.ok(at < text.indexOf("with 95% interval"), "the comparison comes before the chart");
    // A report without a comparison has no such section.
    const plain = pdfShownText(await renderReportPdf({ ...report, comparison: undefined }, new Date("2026-11-28T00:00:00.000Z")));
    assert.equal(plain.includes("Comparison:"), false);
  });
});
