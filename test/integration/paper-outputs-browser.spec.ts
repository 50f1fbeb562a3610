/**
 * Paper-ready outputs over HTTP (issue 28 item 4), from a completed run with real MCAP recordings put
 * straight into the store (no fleet): the table, figure and citation files of a run and of a selection
 * (content types, attachment names, the error envelope for bad input, 404 for another account's run),
 * and the PDF report read as a reader reads it: every page rendered by pdf.js in headless Chromium, a
 * screenshot of each saved under the test's temp dir, and each page's extracted text checked for what
 * it should say, set without glyph gaps ("so101@3.11" intact).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { openBrowserTabs, type BrowserTabs } from "../support/shared-browser.js";
import { insertFixtureRun } from "../support/fixture-run.js";
import { renderPdfPages } from "../support/pdf-pages.js";
import { testStoreOptions } from "../support/test-database.js";
import { TEST_ADMIN_KEY } from "./helpers.js";

type Json = Record<string, any>;

describe("paper outputs: tables, figures, citations and the PDF report of completed runs", function () {
  this.timeout(120_000);
  let dir: string;
  let coordinator: RunningCoordinator;
  let browser: BrowserTabs;
  let otherKey: string;
  const get = (path: string, key = TEST_ADMIN_KEY) => fetch(new URL(path, coordinator.baseUrl), { headers: { authorization: `Bearer ${key}` } });
  const expectError = async (path: string, status: number, code: string, message: RegExp) => {
    const res = await get(path);
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(body.error.code, code);
    assert.match(body.error.message, message);
    assert.equal(typeof body.error.doc_url, "string");
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-paper-"));
    coordinator = await startCoordinator(compileCoordinatorOptions({ port: 0, grpcPort: 0, dataDir: dir, apiKey: TEST_ADMIN_KEY, ...(await testStoreOptions(dir)) }));
    const artifacts = join(dir, "artifacts");
    // Six episodes: successes at 0, 2, 4; failures (grasp_slip) at 1, 3, 5. Every episode grasped, the successes lifted.
    await insertFixtureRun(coordinator, artifacts, "run_paperNamed000000001", {
      episodes: 6, request: { name: "Expert baseline", policy_name: "expert" },
      evaluation: (i) => ({ stages: { grasped: true, lifted: i % 2 === 0 } }),
    });
    await insertFixtureRun(coordinator, artifacts, "run_paperPlain000000002", { episodes: 4, request: { policy_name: "novice" } });
    const now = new Date();
    await ensureAccount(coordinator.db, "acct_other", "Other", now.toISOString());
    otherKey = (await createApiKey(coordinator.db, "acct_other", ["runs:read"], now)).secret;
    browser = await openBrowserTabs();
  });
  after(async () => {
    await browser?.close();
    await coordinator?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a run's table, figure and citations download with their types and names", async () => {
    const csv = await get("/v1/runs/run_paperNamed000000001/paper/table.csv");
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get("content-type")!, /^text\/csv/);
    assert.equal(csv.headers.get("content-disposition"), 'attachment; filename="assay-run_paperNamed000000001-table.csv"');
    const csvText = await csv.text();
    // Every paper file carries the SHA-256 of its body, as stored files do, so a client checks each download.
    assert.equal(csv.headers.get("x-content-sha256"), createHash("sha256").update(csvText).digest("hex"));
    const lines = csvText.trimEnd().split("\r\n");
    assert.equal(lines.length, 2);
    assert.match(lines[1], /^run_paperNamed000000001,Expert baseline,run,pick-cube@v1,so101@3\.11,tabletop@1,expert,6,3,0\.5,/);

    const tex = await (await get("/v1/runs/run_paperNamed000000001/paper/table.tex")).text();
    assert.match(tex, /\\caption\{Expert baseline\. Assay evaluation run\\_paperNamed000000001, \d{4}-\d\d-\d\d; task pick-cube@v1/);
    assert.match(tex, /\\label\{tab:assay-run-papernamed000000001\}/);
    assert.match(tex, /Expert baseline & 6 & 3 & 50\.0\\% & \[\d+\.\d\\%, \d+\.\d\\%\] \\\\/);

    const citation = await (await get("/v1/runs/run_paperNamed000000001/paper/citation.txt")).text();
    assert.match(citation, /^Assay evaluation run_paperNamed000000001 \(\d{4}-\d\d-\d\d\): Expert baseline; task pick-cube@v1 \(frozen revision\); robot so101@3\.11; environment tabletop@1; success 50\.0% \[/);
    const bib = await get("/v1/runs/run_paperNamed000000001/paper/citation.bib");
    assert.match(bib.headers.get("content-type")!, /^application\/x-bibtex/);
    assert.match(await bib.text(), /^@misc\{assay_paperNamed000000001,/);

    const svg = await get("/v1/runs/run_paperNamed000000001/paper/figure.svg");
    assert.match(svg.headers.get("content-type")!, /^image\/svg\+xml/);
    assert.equal(((await svg.text()).match(/<circle class="rate"/g) ?? []).length, 1);
    const png = Buffer.from(await (await get("/v1/runs/run_paperNamed000000001/paper/figure.png")).arrayBuffer());
    const meta = await sharp(png).metadata();
    assert.deepEqual([meta.format, meta.width], ["png", 1280]);
  });

  it("a selection has a row per run in the order named; bad selections get the error envelope", async () => {
    const csv = await (await get("/v1/paper/table.csv?runs=run_paperPlain000000002,run_paperNamed000000001")).text();
    assert.deepEqual(csv.trimEnd().split("\r\n").slice(1).map((l) => l.split(",").slice(0, 2)), [["run_paperPlain000000002", "novice"], ["run_paperNamed000000001", "Expert baseline"]]);
    const bib = await (await get("/v1/paper/citation.bib?runs=run_paperPlain000000002,run_paperNamed000000001")).text();
    assert.equal((bib.match(/^@misc\{/gm) ?? []).length, 2);

    await expectError("/v1/paper/table.csv", 422, "contract_validation_failed", /query parameter runs is required/);
    await expectError(`/v1/paper/table.csv?runs=${Array.from({ length: 21 }, (_, i) => `run_${i}`).join(",")}`, 422, "contract_validation_failed", /names 21 runs; a selection holds at most 20/);
    await expectError("/v1/paper/table.csv?runs=run_paperPlain000000002,run_paperPlain000000002", 422, "contract_validation_failed", /twice/);
    await expectError("/v1/paper/table.csv?runs=run_paperPlain000000002,,x", 422, "contract_validation_failed", /single commas; got "run_paperPlain000000002,,x"/);
    await expectError("/v1/paper/table.docx?runs=run_paperPlain000000002", 404, "not_found", /no paper file "table.docx"; the files are table.csv, table.tex/);
    await expectError("/v1/runs/run_paperNamed000000001/paper/table.xls", 404, "not_found", /no paper file "table.xls"/);
    // Another account's runs are as unknown as missing ones, alone or in a selection.
    for (const path of ["/v1/runs/run_paperNamed000000001/paper/table.csv", "/v1/paper/table.csv?runs=run_paperNamed000000001"]) {
      const res = await get(path, otherKey);
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as Json).error.code, "not_found");
    }
  });

  it("the PDF report: every page renders in pdf.js, says what it should, and sets text without glyph gaps", async () => {
    const res = await get("/v1/runs/run_paperNamed000000001/report?format=pdf");
    assert.equal(res.status, 200);
    const pdf = Buffer.from(await res.arrayBuffer());
    assert.equal(res.headers.get("x-content-sha256"), createHash("sha256").update(pdf).digest("hex"));
    // The font is embedded (a FontFile2 stream), so every viewer draws the glyphs the layout measured.
    assert.ok(pdf.includes("/FontFile2"), "the PDF embeds its font");
    assert.ok((pdf.toString("latin1").match(/\/Subtype \/Image/g) ?? []).length >= 3, "the filmstrip's frames are in the PDF");

    const pages = await renderPdfPages(browser, pdf);
    assert.ok(pages.length >= 2 && pages.length <= 6, `${pages.length} pages`);
    for (const [i, page] of pages.entries()) {
      writeFileSync(join(dir, `report-page-${i + 1}.png`), page.png);
      if (process.env.ASSAY_KEEP_PAGES) writeFileSync(join(process.env.ASSAY_KEEP_PAGES, `report-page-${i + 1}.png`), page.png);
      const meta = await sharp(page.png).metadata();
      assert.equal(meta.width, page.widthPx);
      // A rendered page is not blank: some of its pixels are ink.
      const stats = await sharp(page.png).greyscale().stats();
      assert.ok(stats.channels[0].min < 80, `page ${i + 1} looks blank`);
    }
    const [summary, ...rest] = pages.map((p) => p.text);
    const all = pages.map((p) => p.text).join("\n");
    assert.match(summary, /^Expert baseline\n/);
    assert.match(summary, /Success rate 50\.0% \[\d+\.\d%, \d+\.\d%\], n = 6/);
    assert.ok(summary.includes("robot: so101@3.11"), summary);
    assert.ok(summary.includes("task (frozen revision): pick-cube@v1"), summary);
    // The citation wraps over lines; read it as one.
    assert.match(summary.replace(/\n/g, " "), /Assay evaluation run_paperNamed000000001 \(\d{4}-\d\d-\d\d\): Expert baseline; task pick-cube@v1 \(frozen revision\); robot so101@3\.11/);
    assert.match(summary, /Success rate per unit\nRun n Successes Success rate 95% interval\nExpert baseline 6 3 50\.0%/);
    const analysis = rest.join("\n");
    assert.match(analysis, /Stage funnel\ngrasped 6 of 6 \(100\.0%\)\nlifted 3 of 6 \(50\.0%\)\nsuccess \(policy alone\) 3 of 6 \(50\.0%\)/);
    assert.match(analysis, /Failures, frame by frame \(top camera\)\nEpisode 1: grasp_slip, cell cell-1\nfirst frame, t = 0\.0 s middle frame, t = 0\.\d s last frame, t = 0\.\d s\nEpisode 3: /);
    assert.match(analysis, /Cell Episodes Successes Success rate\ncell-0 3 3 100\.0%\ncell-1 3 0 0\.0%/);
    assert.match(analysis, /Methods\nEach episode's outcome is the policy's own/);
    assert.match(analysis, /References\n.*\(\d{4}[ab]?\)\./);
    // Text set without gaps: every pin reads as one word, and nothing says "run run".
    assert.doesNotMatch(all, /@ \d|\d @|run run/);
    assert.equal((all.match(/so101@3\.11/g) ?? []).length >= 2, true);
  });
});
