import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import sharp from "sharp";
import { renderShippingLabel } from "../../coordinator/kits/label-pdf.js";
import type { KitRecord } from "../../coordinator/store/kits-repo.js";
import type { PdfWork } from "../../coordinator/pdf/pdf-document.js";
import { pdfText } from "../../coordinator/pdf/pdf-text.js";
import { sfntOfWoff } from "../../coordinator/pdf/woff-font.js";
import { publishedReport } from "../../coordinator/reports/published-report.js";
import { RenderCache } from "../../coordinator/reports/render-cache.js";
import type { Report } from "../../coordinator/reports/report.js";
import type { ReportExtras } from "../../coordinator/reports/report-extras.js";
import { renderReportPdf } from "../../coordinator/reports/report-pdf.js";

const NOW = new Date("2026-11-27T12:00:00.000Z");
const rate = (successes: number, n: number) => ({ n, success_rate: successes / n, ci95: [0.2, 0.8] as [number, number], interval_method: "wilson" });

function kit(items: number, descChars: number): KitRecord {
  return {
    id: "kit_Ab12Cd34Ef56", account_id: "acct_lab", name: "mug-set", status: "registered", created: NOW.toISOString(),
    status_history: [], tracking: null, items: Array.from({ length: items }, (_, i) => ({ desc: `${i}${"x".repeat(descChars - 1)}`, qty: 1 })),
  } as unknown as KitRecord;
}

function report(outOfScope: string[], cells = ["so101-b", "so101-c"]): Report {
  return {
    object: "report", run_id: "run_Zz9", kind: "verification", run_kind: "run", result: rate(7, 10),
    resolved_pins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
    citation: "Assay run run_Zz9 (2026-11-27): pick-cube@v1 on so101@3.11 in tabletop@1, n=10, success 0.70 [0.40, 0.89] (Wilson 95%).",
    pdf_url: "http://127.0.0.1/v1/runs/run_Zz9/report?format=pdf", generated: NOW.toISOString(),
    failure_clusters: { grasp_slip: 3 },
    perturbation_schedule: { perturbation_rev: "assay-perturb@1", requested: {}, summary: { lighting: {}, distractors: {} }, realized: [] },
    stages: {}, instructions: { mode: "sampled", sampled: { ...rate(7, 10), by_instruction: {} }, held_out: { ...rate(0, 1), n: 0, by_instruction: {} } },
    out_of_scope: outOfScope, units: [],
    interventions: { mode: "none", episodes_intervened: 0, count: 0, assisted_successes: 0, events: [], unassisted: rate(7, 10), assisted: rate(7, 10) },
    cells: { by_cell: cells.map((cell) => ({ cell, n: 5, successes: 3, success_rate: 0.6 })), clusters: cells.length, design_effect: 1, effective_n: 10, ci95_these_cells: [0.4, 0.89] },
    cost: { robot_hours: 0.1, environment_hours: 0.1, cost_usd: 1.5 },
    // A result stored before the beta-binomial headline: its cells carry no statement (the report's fallback path).
  } as unknown as Report;
}

const work = (): PdfWork => ({ measuredChars: 0, slices: 0 });

/** `n` characters without spaces that do not repeat in short periods (pdfkit memoizes equal words). */
function unbroken(n: number): string {
  let x = 20261127;
  let text = "";
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    text += String.fromCharCode(97 + ((x >>> 16) % 26));
  }
  return text;
}

describe("PDF rendering: bounded text, linear work, public reports without internal ids", () => {
  it("pdfText cuts at the limit with an ellipsis and breaks long unbroken runs into lines", () => {
    assert.equal(pdfText("red mug", 200), "red mug");
    assert.equal(pdfText("a".repeat(10), 8), "aaaaa...");
    assert.equal(pdfText(`mug ${"b".repeat(70)} end`, 200, 32), `mug ${"b".repeat(32)}\n${"b".repeat(32)}\n${"b".repeat(6)} end`);
  });

  it("a label's layout work does not depend on how long a stored description is", async () => {
    const legal = work();
    const huge = work();
    await renderShippingLabel(kit(1, 2000), NOW, { work: legal });
    // A row stored before the bounds: 900,000 characters cost what the displayed 200 cost.
    await renderShippingLabel(kit(1, 900_000), NOW, { work: huge });
    assert.equal(huge.measuredChars, legal.measuredChars);
  });

  it("a label's layout work grows linearly with its items", async () => {
    const half = work();
    const full = work();
    await renderShippingLabel(kit(50, 2000), NOW, { work: half });
    await renderShippingLabel(kit(100, 2000), NOW, { work: full });
    const ratio = full.measuredChars / half.measuredChars;
    assert.ok(ratio > 1.8 && ratio < 2.2, `100 items measured ${full.measuredChars} characters, 50 items ${half.measuredChars} (ratio ${ratio.toFixed(2)})`);
  });

  it("a report's layout work grows linearly with the length of an unbroken out-of-scope line", async () => {
    const short = work();
    const long = work();
    await renderReportPdf(report([unbroken(1000)]), NOW, { work: short });
    await renderReportPdf(report([unbroken(2000)]), NOW, { work: long });
    const base = work();
    await renderReportPdf(report(["y"]), NOW, { work: base });
    const ratio = (long.measuredChars - base.measuredChars) / (short.measuredChars - base.measuredChars);
    assert.ok(ratio > 1.8 && ratio < 2.2, `2000 characters measured ${long.measuredChars - base.measuredChars}, 1000 measured ${short.measuredChars - base.measuredChars} (ratio ${ratio.toFixed(2)})`);
  });

  it("a report's layout work and size do not grow with its episodes: 1,000 episodes render like 10", async () => {
    const jpeg = await sharp({ create: { width: 240, height: 180, channels: 3, background: { r: 90, g: 90, b: 90 } } }).jpeg().toBuffer();
    const sized = (episodes: number) => {
      const r = report(["outdoor use"]);
      r.result = { ...r.result, n: episodes };
      r.perturbation_schedule.realized = Array.from({ length: episodes }, (_, i) => ({ index: i, outcome: i % 2 ? "failure" : "success", layout_seed: i }));
      const row = { label: "expert", run_id: "run_Zz9", kind: "run", task: "pick-cube@v1", robot: "so101@3.11", environment: "tabletop@1", policy: "expert",
        n: episodes, successes: episodes / 2, success_rate: 0.5, ci95: [0.4, 0.6] as [number, number], interval_method: "beta-binomial-posterior", date: "2026-11-27" };
      const extras: ReportExtras = {
        title: "expert on pick-cube@v1", subtitle: "Evaluation run_Zz9, completed 2026-11-27", citation: "Assay evaluation run_Zz9 (2026-11-27): expert", rows: [row], unitHeading: "Run",
        population: null, kindStatements: [], funnel: { episodes, steps: [{ stage: "grasped", reached: episodes - 1, of: episodes }], successes: episodes / 2 },
        // The filmstrip is bounded by its choice (FILMSTRIP_EPISODES), whatever the run's size.
        filmstrip: Array.from({ length: 4 }, (_, i) => ({ index: 2 * i + 1, cluster: "grasp_slip", cell: "so101-b", frames: [0, 1, 2].map((k) => ({ t_s: k, jpeg: new Uint8Array(jpeg) })) })),
        methods: { paragraph: "Methods.", references: ["Wilson EB (1927). Probable inference. J. Am. Statist. Assoc. 22:209-212."] },
      };
      return { r, extras };
    };
    const small = work();
    const large = work();
    const a = sized(10);
    const b = sized(1000);
    const smallPdf = await renderReportPdf(a.r, NOW, { work: small }, a.extras);
    const largePdf = await renderReportPdf(b.r, NOW, { work: large }, b.extras);
    assert.ok(Math.abs(large.measuredChars - small.measuredChars) < 0.05 * small.measuredChars, `1,000 episodes measured ${large.measuredChars} characters, 10 measured ${small.measuredChars}`);
    assert.ok(largePdf.length < smallPdf.length * 1.05, `1,000 episodes: ${largePdf.length} bytes; 10: ${smallPdf.length}`);
  });

  it("a published report numbers its cells and carries no cell id and no cost", async () => {
    const published = publishedReport(report(["outdoor use"]));
    assert.deepEqual(published.cells.by_cell.map((c) => c.cell), ["cell 1", "cell 2"]);
    assert.equal("cost" in published, false);
    const text = JSON.stringify(published);
    assert.equal(text.includes("so101-b") || text.includes("so101-c"), false, text);
  });

  it("a WOFF face unpacks to the TrueType tables it wraps: every table's checksum as recorded (OpenType spec)", () => {
    const woff = readFileSync(createRequire(import.meta.url).resolve("@fontsource/dejavu-sans/files/dejavu-sans-latin-400-normal.woff"));
    const sfnt = sfntOfWoff(woff);
    assert.equal(sfnt.readUInt32BE(0), 0x00010000, "a TrueType sfnt");
    const numTables = sfnt.readUInt16BE(4);
    assert.equal(numTables, woff.readUInt16BE(12));
    const tags: string[] = [];
    for (let i = 0; i < numTables; i++) {
      const record = 12 + i * 16;
      const tag = sfnt.toString("latin1", record, record + 4);
      const [checksum, offset, length] = [sfnt.readUInt32BE(record + 4), sfnt.readUInt32BE(record + 8), sfnt.readUInt32BE(record + 12)];
      const table = Buffer.alloc((length + 3) & ~3);
      sfnt.copy(table, 0, offset, offset + length);
      // head's checksum is taken with its checkSumAdjustment as zero.
      if (tag === "head") table.writeUInt32BE(0, 8);
      let sum = 0;
      for (let at = 0; at < table.length; at += 4) sum = (sum + table.readUInt32BE(at)) >>> 0;
      assert.equal(sum, checksum, `table ${tag}`);
      tags.push(tag);
    }
    assert.deepEqual(tags, [...tags].sort(), "tables in tag order");
    for (const needed of ["cmap", "glyf", "head", "hmtx", "loca"]) assert.ok(tags.includes(needed), needed);
    assert.throws(() => sfntOfWoff(Buffer.from("not a font at all, just words here....................")), /not a WOFF 1\.0 font/);
  });

  it("the render cache renders a key once, shares a render in flight, evicts the oldest and forgets failures", async () => {
    const cache = new RenderCache(2);
    let renders = 0;
    const render = (text: string) => async () => {
      renders++;
      return Buffer.from(text);
    };
    const [a1, a2] = await Promise.all([cache.get("a", render("A")), cache.get("a", render("A"))]);
    assert.equal(renders, 1);
    assert.equal(a1, a2);
    await cache.get("b", render("B"));
    await cache.get("c", render("C"));
    assert.equal(cache.size, 2);
    await cache.get("a", render("A"));
    assert.equal(renders, 4, "a was evicted and rendered again");
    await assert.rejects(cache.get("bad", async () => {
      throw new Error("render failed");
    }));
    await cache.get("bad", render("ok"));
    assert.equal(renders, 5);
  });
});
