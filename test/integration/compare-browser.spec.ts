/**
 * Compare first, in headless Chromium (issue 28, item 1): a paired compare's run page opens with the
 * difference, its interval and the claim it supports, before the rate of policy A alone; the episodes
 * table names each episode's policy, and a pair opens side by side with the seed both shared, both
 * outcomes and both videos playing. `#/compare?runs=a,b` puts two runs side by side with their rates,
 * intervals and n, the difference, and a warning when their pins differ. No fleet: the runs are
 * fixtures with real recordings, ended through the lifecycle (their Results are computed for real).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import ffmpeg from "@ffmpeg-installer/ffmpeg";
import { insertPendingArtifact, markArtifactStored } from "../../coordinator/store/artifacts-repo.js";
import { button, ConsoleTab } from "../support/console-tab.js";
import { openBrowserTabs, type BrowserTabs } from "../support/shared-browser.js";
import { insertFixtureRun } from "../support/fixture-run.js";
import { startTestService, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

type Json = Record<string, any>;
const COMPARE = "run_cmpbrowsercompare1";

describe("compare first: a compare's page and the compare page (headless Chromium)", function () {
  this.timeout(120_000);
  let service: TestService;
  let browser: BrowserTabs;
  let tab: ConsoleTab;

  before(async () => {
    service = await startTestService();
    const artifacts = join(service.dataDir, "artifacts");
    // One small camera: the failure grid shows each failure's last top-camera frame.
    const tiny = { cameras: [{ name: "top", width: 32, height: 24 }], steps: () => 2 };
    // fast wins every pair but the third (i = 4, 5: fast fails, slow succeeds); slow succeeds in pairs 2 and 3 only.
    await insertFixtureRun(service.coordinator, artifacts, COMPARE, { ...tiny, episodes: 12, compare: ["fast", "slow"], outcome: (i) => (i % 2 === 0 ? (i === 4 ? "failure" : "success") : i === 5 || i === 7 ? "success" : "failure") });
    await insertFixtureRun(service.coordinator, artifacts, "run_cmpbrowserexpert01", { ...tiny, episodes: 6, outcome: () => "success", request: { policy_name: "expert" } });
    await insertFixtureRun(service.coordinator, artifacts, "run_cmpbrowsernovice01", { ...tiny, episodes: 6, outcome: (i) => (i < 2 ? "success" : "failure"), request: { policy_name: "novice", perturbation: { lighting: ["dim"] } } });
    // Pair 1's two episodes (indexes 2 and 3, numbered from 0 as everywhere) get a short video each (a synthetic camera), so both can play side by side.
    const clip = join(service.dataDir, "clip.mp4");
    execFileSync(ffmpeg.path, ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10", "-t", "1", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-movflags", "+faststart", clip]);
    const bytes = readFileSync(clip);
    for (const index of [2, 3]) {
      const episodeId = `ep_${COMPARE.replace(/^run_/, "")}_${index}`;
      const dir = join(artifacts, COMPARE, episodeId);
      mkdirSync(dir, { recursive: true });
      copyFileSync(clip, join(dir, `${episodeId}.mp4`));
      await insertPendingArtifact(service.coordinator.db, { episodeId, runId: COMPARE, kind: "video", fileName: `${episodeId}.mp4`, bytes: statSync(clip).size, sha256: createHash("sha256").update(bytes).digest("hex") });
      await markArtifactStored(service.coordinator.db, episodeId, "video", new Date().toISOString());
    }
    browser = await openBrowserTabs();
    tab = await ConsoleTab.open(browser, service.coordinator.baseUrl, () => [TEST_ADMIN_KEY]);
    await tab.signIn(TEST_ADMIN_KEY);
  });
  after(async () => {
    await tab?.close();
    await browser?.close();
    await service?.stop();
  });

  it("a compare's page leads with the difference, its interval and the claim; each policy's rate with its interval follows", async () => {
    const run = (await (await service.api(`/v1/runs/${COMPARE}`)).json()) as Json;
    const headline = run.result.headline;
    await tab.goto(`/runs/${COMPARE}`);
    await tab.settled();
    await tab.waitForText(headline.sentence);
    const text = await tab.text();
    // First of the result: the comparison's heading and sentence come before the Result card's rate of policy A alone.
    assert.ok(text.indexOf("Comparison: fast - slow") < text.indexOf(headline.sentence));
    assert.ok(text.indexOf(headline.sentence) < text.indexOf("\nResult\n"), "the comparison comes before the Result card");
    const diff = `${headline.difference.diff > 0 ? "+" : ""}${Number((headline.difference.diff * 100).toFixed(1))} points`;
    assert.ok(text.includes(diff), `the page shows ${diff}`);
    const bar = await tab.page.$eval(".comparison .difference", (el) => el.getAttribute("aria-label"));
    assert.match(bar!, /^fast - slow: [+-]?\d+(\.\d)? points, 95% interval [+-]?\d+(\.\d)? to [+-]?\d+(\.\d)? \((first higher|no difference shown)\)$/);
    for (const arm of headline.arms) assert.ok(await tab.page.$(`.comparison [aria-label^="${arm.label}: success "]`), `a rate bar for ${arm.label}`);
    // The raw JSON is still there, collapsed.
    assert.equal(await tab.page.$eval("#h-kind + p + details", (el) => (el as HTMLDetailsElement).open), false);
    tab.assertClean();
  });

  it("the episodes table names each episode's policy; a pair opens side by side: one seed, both outcomes, both videos playing", async () => {
    await tab.page.waitForSelector("table.episodes tbody tr");
    const rows = await tab.page.$$eval("table.episodes tbody tr", (trs) => trs.map((tr) => [...tr.children].slice(0, 4).map((c) => (c as HTMLElement).innerText.trim())));
    assert.deepEqual(rows.slice(0, 4), [["#0", "fast", "Pair 0", "success"], ["#1", "slow", "Pair 0", "failure"], ["#2", "fast", "Pair 1", "success"], ["#3", "slow", "Pair 1", "failure"]]);
    await tab.page.click(button("Show pair 1 side by side"));
    await tab.page.waitForSelector(".pair-view:not([hidden]) figure video");
    const figures = await tab.page.$$eval(".pair-view figure", (fs) => fs.map((f) => f.querySelector("figcaption")!.textContent));
    assert.equal(figures.length, 2);
    assert.match(figures[0]!, /^fast success episode #2 on so101-c/);
    assert.match(figures[1]!, /^slow failure \(grasp_slip\) episode #3 on so101-c/);
    await tab.waitForText("Same initial conditions: layout seed 1001");
    // Both videos play, together: each has advanced past its start.
    await tab.page.waitForFunction(() => {
      const videos = [...document.querySelectorAll(".pair-view video")] as HTMLVideoElement[];
      return videos.length === 2 && videos.every((v) => !v.paused && v.currentTime > 0.1);
    }, { timeout: 30_000 });
    tab.assertClean();
  });

  it("#/compare puts two runs side by side: rates with intervals and n, the difference, a warning that their pins differ", async () => {
    const api = (await (await service.api("/v1/comparisons?runs=run_cmpbrowserexpert01,run_cmpbrowsernovice01")).json()) as Json;
    await tab.goto("/compare?runs=run_cmpbrowserexpert01,run_cmpbrowsernovice01");
    await tab.settled();
    await tab.waitForText(api.differences[0].sentence);
    const text = await tab.text();
    assert.ok(text.includes("Difference: expert - novice"));
    assert.ok(text.includes(api.warnings[0]), "the pins warning");
    assert.ok(text.indexOf(api.warnings[0]) < text.indexOf(api.differences[0].sentence), "the warning comes first");
    assert.ok(await tab.page.$('.rates [aria-label="expert: success 100.0%, n = 6, 95% interval 61.0% to 100.0% (Wilson)"]'), "expert's rate, n and Wilson interval");
    assert.ok(await tab.page.$('.rates [aria-label^="novice: success 33.3%, n = 6, 95% interval "]'), "novice's rate and n");
    const bar = await tab.page.$eval(".comparison .difference", (el) => el.getAttribute("aria-label"));
    const d = api.differences[0];
    const signed = (x: number) => `${x > 0 ? "+" : ""}${Number((x * 100).toFixed(1))}`;
    assert.equal(bar, `expert - novice: ${signed(d.diff)} points, 95% interval ${signed(d.ci[0])} to ${signed(d.ci[1])} (${d.shown === "a_higher" ? "first higher" : "no difference shown"})`);
    tab.assertClean();
  });
});
