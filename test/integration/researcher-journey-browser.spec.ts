/**
 * Issue 28's "Done when", as a researcher would do it, in headless Chromium on real simulated runs (the
 * shared fleet: an expert and a novice run of 3 short episodes each, same seeds): the runs list ->
 * tick both -> "Compare these" -> the difference with its interval -> the downloads for a paper (CSV,
 * LaTeX, SVG and PNG figure) -> the novice run -> a failure's videos, every camera playing -> the PDF
 * report, every page rendered by pdf.js (a screenshot and the text of each). Screenshots go to the
 * test's temp dir (kept in ASSAY_CONSOLE_SHOTS when set).
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "puppeteer-core";
import sharp from "sharp";
import { README_RUN_BODY } from "../fixtures.js";
import { BrowserDownloads } from "../support/browser-downloads.js";
import { button, ConsoleTab, launchBrowser, link } from "../support/console-tab.js";
import { eventually } from "../support/eventually.js";
import { renderPdfPages } from "../support/pdf-pages.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

type Json = Record<string, any>;

const EPISODES = 3;
/** Dim light and office clutter: the novice's colour rule fails where the expert's perception holds (docs/simulation.md). */
const PERTURBATION = { lighting: ["dim"], distractors: "office-clutter@1", seed: 20251122 };
const signed = (x: number) => `${x > 0 ? "+" : ""}${Number((x * 100).toFixed(1))}`;

describe("a researcher's journey: compare two runs, watch a failure, take the paper files and read the PDF (simulated fleet, headless Chromium)", function () {
  this.timeout(300_000);
  let service: TestService;
  let browser: Browser;
  let tab: ConsoleTab;
  let shots: string;
  let downloads: string;
  let saved: BrowserDownloads;
  const study = `journey-${process.pid}-${Date.now()}`;
  const ids = { expert: "", novice: "" };

  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  before(async () => {
    const submit = async (policy: "expert" | "novice", name: string) => {
      const res = await service.api("/v1/runs", {
        method: "POST",
        json: {
          ...README_RUN_BODY, episodes: EPISODES, perturbation: PERTURBATION, name, policy_name: policy, metadata: { study },
          policy: { ...README_RUN_BODY.policy, image: `assay/ref-policy:${policy}` },
        },
      });
      assert.equal(res.status, 201, await res.clone().text());
      return ((await res.json()) as Json).id as string;
    };
    ids.expert = await submit("expert", "Expert policy");
    ids.novice = await submit("novice", "Novice policy");
    for (const id of Object.values(ids)) assert.equal((await runEnd(service, id, { deadlineMs: 240_000 })).status, "completed");
    // Recordings and every camera's video are uploaded after each episode ends: the page reads them once stored.
    await eventually("the novice's recordings and videos stored", async () => {
      for (const kind of ["mcap", "video", "video:wrist"]) {
        const files = ((await (await service.api(`/v1/runs/${ids.novice}/episodes?artifact=${encodeURIComponent(kind)}`)).json()) as Json).data as Json[];
        if (files.length !== EPISODES || files.some((f) => f.status !== "stored")) return undefined;
      }
      return true;
    }, { deadlineMs: 60_000 });
    shots = process.env.ASSAY_CONSOLE_SHOTS ?? mkdtempSync(join(tmpdir(), "assay-journey-"));
    downloads = join(shots, "downloads");
    mkdirSync(downloads, { recursive: true });
    // A person's browser has a language Intl knows (the episode plots format their axes with it).
    browser = await launchBrowser({ lang: "en-US" });
    tab = await ConsoleTab.open(browser, service.coordinator.baseUrl, () => [TEST_ADMIN_KEY]);
    saved = await BrowserDownloads.open(tab.page, downloads);
  });

  after(async () => {
    await saved?.close();
    await tab?.close();
    await browser?.close();
    if (!process.env.ASSAY_CONSOLE_SHOTS && shots) rmSync(shots, { recursive: true, force: true });
  });

  /** Clicks a download button and waits until the browser has saved the whole file; its bytes. */
  const download = (name: string, fileName: string): Promise<Buffer> => saved.save(fileName, () => tab.page.click(button(name)));

  it("selects the expert and novice runs, compares them and sees the difference with its interval", async () => {
    const { page } = tab;
    await tab.signIn(TEST_ADMIN_KEY);
    await tab.goto(`/runs?metadata=${encodeURIComponent(`study=${study}`)}`);
    await tab.settled();
    await page.waitForFunction(() => document.querySelectorAll("table.runs tbody tr").length === 2);
    await page.click('[aria-label="Select Expert policy"]');
    await page.click('[aria-label="Select Novice policy"]');
    await tab.shot(shots, "1-runs-selected", ["Expert policy", "Novice policy", "2 selected"]);
    await page.click(button("Compare these"));
    await page.waitForFunction(() => location.hash.startsWith("#/compare"));
    await tab.settled();

    const api = (await (await service.api(`/v1/comparisons?runs=${ids.expert},${ids.novice}`)).json()) as Json;
    const d = api.differences[0];
    await tab.waitForText(d.sentence);
    const bar = await page.$eval(".comparison .difference", (el) => el.getAttribute("aria-label"));
    assert.equal(bar, `expert - novice: ${signed(d.diff)} points, 95% interval ${signed(d.ci[0])} to ${signed(d.ci[1])} (${d.shown === "a_higher" ? "first higher" : d.shown === "b_higher" ? "second higher" : "no difference shown"})`);
    // Each side's settings in words (not canonical JSON), and nothing runs past its card's edge.
    await tab.shot(shots, "2-compare", ["Difference: expert - novice", d.sentence, `${signed(d.diff)} points`, `95% interval ${signed(d.ci[0])} to ${signed(d.ci[1])}`, "Each side",
      "assay-perturb@1: distractors office-clutter@1; lighting dim; seed 20251122", "For a paper"]);
    const overflowing = await page.$$eval("section.card", (cards) => cards.filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => `${c.querySelector("h2")?.textContent}: ${c.scrollWidth} > ${c.clientWidth} px`));
    assert.deepEqual(overflowing, [], "every card holds its content");
    tab.assertClean();
  });

  it("downloads the CSV and LaTeX tables and the figure of the two runs", async () => {
    const stem = `assay-${ids.expert}-and-1-more`;
    const csv = (await download("Download: Table (CSV)", `${stem}-table.csv`)).toString("utf8");
    const rows = csv.trimEnd().split("\r\n");
    assert.equal(rows.length, 3, csv);
    assert.match(rows[0]!, /^run_id,unit,kind,task,robot,environment,policy,n,successes,success_rate,/);
    assert.match(rows[1]!, new RegExp(`^${ids.expert},Expert policy,run,pick-cube@v1,so101@3\\.11,tabletop@1,expert,${EPISODES},\\d,`));
    assert.match(rows[2]!, new RegExp(`^${ids.novice},Novice policy,run,pick-cube@v1,so101@3\\.11,tabletop@1,novice,${EPISODES},\\d,`));
    const tex = (await download("Download: Table (LaTeX)", `${stem}-table.tex`)).toString("utf8");
    assert.match(tex, /\\begin\{tabular\}[\s\S]*\\toprule[\s\S]*\\midrule[\s\S]*\\bottomrule[\s\S]*\\end\{tabular\}/);
    assert.match(tex, new RegExp(`Expert policy & ${EPISODES} & \\d & \\d+\\.\\d\\\\% & \\[\\d+\\.\\d\\\\%, \\d+\\.\\d\\\\%\\] \\\\\\\\`));
    assert.match(tex, new RegExp(`Novice policy & ${EPISODES} & \\d & \\d+\\.\\d\\\\% & \\[`));
    const svg = (await download("Download: Figure (SVG)", `${stem}-figure.svg`)).toString("utf8");
    assert.match(svg, /^<\?xml[^>]*\?>\s*<svg|^<svg/);
    assert.equal((svg.match(/<circle class="rate"/g) ?? []).length, 2, "one rate per run");
    assert.ok(svg.includes("Expert policy") && svg.includes("Novice policy"), "both runs labelled");
    const png = await download("Download: Figure (PNG)", `${stem}-figure.png`);
    const meta = await sharp(png).metadata();
    assert.equal(meta.format, "png");
    assert.ok((meta.width ?? 0) >= 640, `a figure ${meta.width} px wide`);
    writeFileSync(join(shots, "3-figure.png"), png);
    tab.assertClean();
  });

  it("opens the novice run from the comparison and a failure's videos: every camera plays", async () => {
    const { page } = tab;
    await tab.follow(link(ids.novice));
    await tab.waitForText("Failures");
    const failures = ((await (await service.api(`/v1/runs/${ids.novice}/episodes?outcome=failure`)).json()) as Json).data as Json[];
    assert.ok(failures.length > 0, "the novice fails in dim light among clutter");
    const ep = failures[0]!;
    const cameras = Object.keys(ep.videos);
    assert.deepEqual(cameras.sort(), ["top", "wrist"]);
    await page.waitForSelector(`ul.failure-grid .failure-card[data-episode="${ep.index}"]`);
    await page.click(`ul.failure-grid .failure-card[data-episode="${ep.index}"]`);
    await tab.waitForText(`Episode ${ep.index}: failure (${ep.failure_cluster})`);
    // Every camera's video, each decoded and playing.
    await page.waitForFunction((n: number) => {
      const videos = [...document.querySelectorAll(".player video.episode-video")] as HTMLVideoElement[];
      return videos.length === n && videos.every((v) => v.videoWidth > 0 && !v.paused && v.currentTime > 0);
    }, { timeout: 30_000 }, cameras.length);
    const shown = await page.$$eval(".player figure.camera", (figs) => figs.map((f) => ({ caption: f.querySelector("figcaption")!.textContent, width: (f.querySelector("video") as HTMLVideoElement).videoWidth })));
    assert.deepEqual(shown.map((s) => s.caption).sort(), cameras);
    await page.$eval(".player", (el) => el.scrollIntoView());
    await tab.shot(shots, "4-failure-videos", [`Episode ${ep.index}: failure (${ep.failure_cluster})`, "top", "wrist"]);
    tab.assertClean();
  });

  it("downloads the novice run's PDF report, whose every page renders and reads as it should", async () => {
    const pdf = await download("Download the report (PDF)", `${ids.novice}-report.pdf`);
    assert.equal(pdf.subarray(0, 5).toString("latin1"), "%PDF-");
    const pages = await renderPdfPages(browser, pdf);
    assert.ok(pages.length >= 2, `${pages.length} pages`);
    for (const [i, page] of pages.entries()) {
      writeFileSync(join(shots, `5-report-page-${i + 1}.png`), page.png);
      const stats = await sharp(page.png).greyscale().stats();
      assert.ok(stats.channels[0]!.min < 80, `page ${i + 1} has ink`);
      assert.ok(page.text.trim().length > 100, `page ${i + 1} has text: ${JSON.stringify(page.text)}`);
      // Text set without glyph gaps, no API jargon.
      assert.doesNotMatch(page.text, /@ \d|\d @|run run|undefined|NaN|\[object/, `page ${i + 1}: ${page.text}`);
    }
    const run = ((await (await service.api(`/v1/runs/${ids.novice}`)).json()) as Json);
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
    const [summary] = pages.map((p) => p.text);
    const all = pages.map((p) => p.text).join("\n");
    assert.match(summary!, /^Novice policy\n/);
    assert.ok(summary!.includes(`Success rate ${pct(run.result.success_rate)} [${pct(run.result.ci95[0])}, ${pct(run.result.ci95[1])}], n = ${EPISODES}`), summary);
    assert.match(all, /Stage funnel\n/);
    assert.match(all, /Failures, frame by frame \(top camera\)\nEpisode \d+: /);
    assert.match(all, /Methods\n/);
    // The JSON report cites the run the way the PDF does.
    const report = (await (await service.api(`/v1/runs/${ids.novice}/report`)).json()) as Json;
    // Compared without white space: the PDF wraps the line where it fits, after a space or a hyphen ("pick-|cube@v1").
    const squeezed = (text: string) => text.replace(/\s+/g, "");
    assert.ok(squeezed(summary!).includes(squeezed(report.citation)), `the PDF prints the JSON's citation: ${report.citation}\n${summary}`);
    tab.assertClean();
  });
});
