/**
 * Paper-ready outputs (issue 28 item 4): the table (CSV, LaTeX), the figure (SVG, PNG) and the
 * citations (BibTeX, one line) of a compare whose policy names hold LaTeX's special characters, and of
 * a selection of runs, against golden files in test/unit/golden/ (ASSAY_UPDATE_GOLDEN=1 rewrites them
 * after a deliberate change; read the diff). There is no LaTeX on these machines, so the LaTeX is
 * checked as text: every special character escaped, booktabs rules, a caption and a label.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import sharp from "sharp";
import { figurePng, figureSize, figureSvg, PNG_SCALE } from "../../coordinator/reports/paper-figure.js";
import { methodsText } from "../../coordinator/reports/methods-text.js";
import { paperRowsOfRun, paperRowsOfSelection, runNameOf, type PaperSource } from "../../coordinator/reports/paper-rows.js";
import { latexEscape, tableCsv, tableLatex } from "../../coordinator/reports/paper-table.js";
import { bibtexEntry, citationText, paperTitle } from "../../coordinator/reports/paper-words.js";
import { stageFunnelOf } from "../../coordinator/reports/stage-funnel.js";
import type { RunRecord } from "../../coordinator/store/runs-repo.js";

const GOLDEN = join(import.meta.dirname, "golden");

function golden(name: string, actual: string): void {
  const path = join(GOLDEN, name);
  if (process.env.ASSAY_UPDATE_GOLDEN === "1") writeFileSync(path, actual);
  assert.equal(actual, readFileSync(path, "utf8"), `${name} differs from its golden file (ASSAY_UPDATE_GOLDEN=1 rewrites it)`);
}

const cells = (successes: number, n: number) => ({ by_cell: [{ cell: "so101-b", n, successes, success_rate: successes / n }], clusters: 1 });
const unit = (policy: string, successes: number, n: number, ci95: [number, number]) => ({
  key: `policy:${policy}`, robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", policy_name: policy,
  result: { n, success_rate: successes / n, ci95, interval_method: "beta-binomial-posterior", cells: cells(successes, n) },
});

function compareRun(overrides: Partial<RunRecord> = {}): RunRecord {
  const a = unit("expert_v2 & co", 19, 20, [0.7812, 0.9941]);
  const b = unit("novice #3 50%", 9, 20, [0.2519, 0.6655]);
  return {
    id: "run_Cmp0001", accountId: "acct_lab", kind: "compare", status: "completed", created: "2026-11-26T10:00:00.000Z", completed: "2026-11-27T09:30:00.000Z",
    request: { policies: {} }, resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
    plan: {} as RunRecord["plan"], result: { ...a.result, units: [a, b], comparison: { method: "paired-cell-random-effects-posterior", mcnemar: { p_value: 0.01 } } },
    statusCode: null, statusMessage: null, idempotencyKey: null, priority: "standard", episodesTotal: 40, units: [], kindState: null,
    ...overrides,
  } as RunRecord;
}

function plainRun(id: string, name: string | undefined, successes: number, n: number): RunRecord {
  return {
    ...compareRun(), id, kind: "run", request: { policy: {}, policy_name: "expert", ...(name ? { name } : {}) },
    result: { n, success_rate: successes / n, ci95: [0.5, 0.95], interval_method: "beta-binomial-posterior", cells: cells(successes, n) },
  } as RunRecord;
}

const sourceOf = (run: RunRecord): PaperSource => ({ run, name: runNameOf(run), rows: paperRowsOfRun(run) });

describe("paper outputs: tables, figure, citations", () => {
  it("a compare has one row per arm, labelled by policy, with n, successes and the interval", () => {
    const rows = paperRowsOfRun(compareRun());
    assert.deepEqual(rows.map((r) => [r.label, r.n, r.successes, r.ci95]), [["expert_v2 & co", 20, 19, [0.7812, 0.9941]], ["novice #3 50%", 20, 9, [0.2519, 0.6655]]]);
  });

  it("rows per kind: a matrix's cells by robot and environment, an eval's robots, one headline row for verify", () => {
    const cell = (robot: string, environment: string, successes: number) => ({ ...unit("expert", successes, 10, [0.2, 0.9]), key: `${robot}/${environment}`, robot, environment });
    const matrix = compareRun({ kind: "matrix", result: { ...cell("so101@3.11", "tabletop@1", 5).result, units: [cell("so101@3.11", "tabletop@1", 5), cell("koch@1.2", "tabletop@1", 7), cell("so101@3.11", "kitchen@2", 3)] } });
    assert.deepEqual(paperRowsOfRun(matrix).map((r) => [r.label, r.successes]), [["so101@3.11, tabletop@1", 5], ["koch@1.2, tabletop@1", 7], ["so101@3.11, kitchen@2", 3]]);
    const scores = [{ robot: "so101@3.11", tasks: 2, n: 20, success_rate: 0.75, ci95: [0.5, 0.9], interval_method: "beta-binomial-posterior" },
      { robot: "koch@1.2", tasks: 2, n: 20, success_rate: 0.5, ci95: [0.3, 0.7], interval_method: "beta-binomial-posterior" }];
    const evalRun = compareRun({ kind: "eval", request: { policy_name: "expert" }, result: { n: 20, success_rate: 0.75, ci95: [0.5, 0.9], interval_method: "beta-binomial-posterior", suite: "tabletop-basics@1", scores, units: [] } });
    assert.deepEqual(paperRowsOfRun(evalRun).map((r) => [r.label, r.task, r.n, r.successes]), [["so101@3.11", "tabletop-basics@1", 20, 15], ["koch@1.2", "tabletop-basics@1", 20, 10]]);
    const verify = compareRun({ kind: "verify", request: {}, result: { n: 8, success_rate: 0.5, ci95: [0.2, 0.8], interval_method: "beta-binomial-posterior", units: [cell("so101@3.11", "tabletop@1", 4), cell("koch@1.2", "tabletop@1", 1)] } });
    assert.deepEqual(paperRowsOfRun(verify).map((r) => [r.label, r.robot, r.n]), [["expert", "so101@3.11", 8]]);
  });

  it("CSV: a header and a row per arm, a field with a comma or quote quoted", () => {
    const run = compareRun();
    golden("compare-table.csv", tableCsv(paperRowsOfRun(run)));
    const csv = tableCsv([{ ...paperRowsOfRun(run)[0], label: 'say "hi", then' }]);
    assert.match(csv, /,"say ""hi"", then",/);
  });

  it("LaTeX: booktabs, a caption and a label, percentages with one decimal, _ & % # escaped", () => {
    const tex = tableLatex(paperRowsOfRun(compareRun()), { caption: "expert_v2 & co vs novice #3 50% on pick-cube@v1.", labelId: "run_Cmp0001", unitHeading: "Policy" });
    golden("compare-table.tex", tex);
    for (const needle of ["\\toprule", "\\midrule", "\\bottomrule", "\\caption{", "\\label{tab:assay-run-cmp0001}", "expert\\_v2 \\& co & 20 & 19 & 95.0\\% & [78.1\\%, 99.4\\%] \\\\", "novice \\#3 50\\%"]) {
      assert.ok(tex.includes(needle), `${needle} in\n${tex}`);
    }
    // No special character is left bare outside a command: strip the escapes and look for what remains.
    const body = tex.split("\n").filter((l) => !l.startsWith("%")).join("\n");
    const bare = body.replace(/\\[_&%#$]|\\textbackslash\{\}|& (?=\S)|&$/gm, "").replace(/ & /g, " ");
    assert.doesNotMatch(bare.replace(/\\[a-z]+(\{[^}]*\})?/g, ""), /(?<!\\)[_%#]/);
    assert.equal(latexEscape("a_b & c% #1 {x} ~ ^ \\"), "a\\_b \\& c\\% \\#1 \\{x\\} \\textasciitilde{} \\textasciicircum{} \\textbackslash{}");
  });

  it("citation: one line naming the task revision, robot pins, environment, run id and date, without API words", () => {
    const text = citationText(sourceOf(compareRun()));
    golden("compare-citation.txt", `${text}\n`);
    assert.doesNotMatch(text, /\n/);
    assert.doesNotMatch(text, /run run|interval_method|beta-binomial-posterior|units\[\]/);
    for (const needle of ["pick-cube@v1 (frozen revision)", "so101@3.11", "tabletop@1", "run_Cmp0001", "2026-11-27", "95.0% [78.1%, 99.4%] (n = 20)"]) assert.ok(text.includes(needle), `${needle} in ${text}`);
    const named = citationText(sourceOf(plainRun("run_Named01", "Expert baseline", 18, 20)));
    assert.match(named, /^Assay evaluation run_Named01 \(2026-11-27\): Expert baseline; task pick-cube@v1/);
  });

  it("BibTeX: an @misc entry with title, author, year, month, note and url, LaTeX specials escaped", () => {
    const bib = bibtexEntry(sourceOf(compareRun()), "https://assay.example/v1/runs/run_Cmp0001/report");
    golden("compare-citation.bib", bib);
    assert.match(bib, /^@misc\{assay_Cmp0001,\n/);
    assert.match(bib, /title\s+= \{\{Assay comparison run\\_Cmp0001: expert\\_v2 \\& co vs novice \\#3 50\\% on pick-cube@v1\}\}/);
    assert.match(bib, /year\s+= 2026,\n\s+month\s+= nov,/);
    // Balanced braces: a BibTeX parser reads the entry to its end.
    let depth = 0;
    for (const c of bib.replace(/\\[{}]/g, "")) depth += c === "{" ? 1 : c === "}" ? -1 : 0;
    assert.equal(depth, 0);
  });

  it("a selection has a row per run, labelled by the run's name, else its policy", () => {
    const runs = [plainRun("run_A1", "Expert baseline", 18, 20), plainRun("run_B2", undefined, 12, 20), compareRun()];
    const rows = paperRowsOfSelection(runs);
    assert.deepEqual(rows.map((r) => [r.run_id, r.label, r.n, r.successes]), [["run_A1", "Expert baseline", 20, 18], ["run_B2", "expert", 20, 12], ["run_Cmp0001", "expert_v2 & co", 20, 19]]);
    golden("selection-table.csv", tableCsv(rows));
  });

  it("SVG: well-formed, one dot and one interval per row, labels and figures as text", async () => {
    const rows = paperRowsOfRun(compareRun());
    const svg = figureSvg(rows, paperTitle(sourceOf(compareRun())));
    golden("compare-figure.svg", svg);
    // Well-formed XML: the browser-grade parser in sharp (libxml2 through librsvg) accepts it, and tags balance.
    const tags = [...svg.matchAll(/<(\/?)([a-z]+)[^>]*?(\/?)>/g)].filter((m) => m[3] !== "/");
    const stack: string[] = [];
    for (const [, close, name] of tags) {
      if (close) assert.equal(stack.pop(), name);
      else stack.push(name);
    }
    assert.deepEqual(stack, []);
    assert.equal((svg.match(/<circle class="rate"/g) ?? []).length, rows.length);
    assert.ok(svg.includes(">expert_v2 &#38; co</text>") && svg.includes(">95.0% (n = 20)</text>") && svg.includes(">45.0% (n = 20)</text>"), svg);
    const meta = await sharp(Buffer.from(svg)).metadata();
    assert.equal(meta.format, "svg");
  });

  it("PNG: decodes to twice the SVG's size, with text drawn in the label column", async () => {
    const rows = paperRowsOfRun(compareRun());
    const png = await figurePng(figureSvg(rows, "expert vs novice"));
    const { width, height } = figureSize(rows.length);
    const meta = await sharp(png).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ["png", width * PNG_SCALE, height * PNG_SCALE]);
    // The label column (left of the axis) is white but for the labels: a font came out if it has dark pixels.
    const { data, info } = await sharp(png).extract({ left: 0, top: 40 * PNG_SCALE, width: 180 * PNG_SCALE, height: rows.length * 28 * PNG_SCALE }).greyscale().raw().toBuffer({ resolveWithObject: true });
    const dark = data.filter((v) => v < 100).length;
    assert.ok(dark > 200, `only ${dark} dark pixels of ${info.width * info.height} in the label column: no font rendered?`);
  });

  it("methods: the paragraph names only the methods used, with their references", () => {
    const methods = methodsText({ intervalMethods: ["beta-binomial-posterior"], differenceMethod: "paired-cell-random-effects-posterior", mcnemar: true });
    assert.match(methods.paragraph, /beta-binomial model of the cells \(Turner et al\. 2001\)/);
    assert.match(methods.paragraph, /McNemar test \(McNemar 1947\)/);
    assert.doesNotMatch(methods.paragraph, /Wilson|Holm/);
    assert.equal(methods.references.length, 5);
    assert.ok(methods.references.every((r) => /\(\d{4}[ab]?\)\./.test(r)));
  });

  it("stage funnel: reached counts per stage from the episodes, or the Result's own funnel when it has one", () => {
    const done = (stages: Record<string, boolean>, outcome: "success" | "failure") => ({ status: "done" as const, outcome, evaluation: { stages }, meta: null });
    const episodes = [done({ grasped: true, lifted: true }, "success"), done({ grasped: true, lifted: false }, "failure"), done({ grasped: false, lifted: false }, "failure")];
    assert.deepEqual(stageFunnelOf(null, episodes), { episodes: 3, steps: [{ stage: "grasped", reached: 2, of: 3 }, { stage: "lifted", reached: 1, of: 3 }], successes: 1 });
    const fromResult = stageFunnelOf({ stage_funnel: [{ stage: "reached", reached: 3, of: 3, stopped: 1 }, { stage: "grasped", reached: 2, of: 3, stopped: 1 }] }, episodes);
    assert.deepEqual(fromResult.steps.map((s) => [s.stage, s.reached]), [["reached", 3], ["grasped", 2]]);
  });
});
