/**
 * The console's runs list for named runs (issue 28, item 2), in headless Chromium on the shared
 * simulated fleet: the columns (name, policy, kind, task, robot, n, rate with its 95% interval,
 * status, created), the metadata and policy filters (kept in the address), "Compare these" for two
 * selected runs, the run page's name, policy name and metadata, and the new-run form's name fields. One run of two episodes
 * completes; the other is cancelled as soon as it is submitted (n 0: no rate shown).
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { README_RUN_BODY } from "../fixtures.js";
import { button, ConsoleTab } from "../support/console-tab.js";
import { openBrowserTabs, type BrowserTabs } from "../support/shared-browser.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

type Json = Record<string, any>;

describe("console runs list: named runs, filters and selection (simulated fleet, headless Chromium)", function () {
  this.timeout(180_000);
  let service: TestService;
  let browser: BrowserTabs;
  let tab: ConsoleTab;
  let shots: string;
  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  before(async () => {
    shots = process.env.ASSAY_CONSOLE_SHOTS ?? mkdtempSync(join(tmpdir(), "assay-runs-list-"));
    mkdirSync(shots, { recursive: true });
    browser = await openBrowserTabs();
    tab = await ConsoleTab.open(browser, service.coordinator.baseUrl, () => [TEST_ADMIN_KEY]);
  });
  after(async () => {
    await tab?.close();
    await browser?.close();
    if (!process.env.ASSAY_CONSOLE_SHOTS && shots) rmSync(shots, { recursive: true, force: true });
  });

  const submit = async (body: Json): Promise<Json> => {
    const res = await service.api("/v1/runs", { method: "POST", json: body });
    assert.equal(res.status, 201, await res.clone().text());
    return (await res.json()) as Json;
  };

  it("filters by metadata and policy, shows each run's columns, selects two to compare, and names the run on its page", async () => {
    const study = `study-${Date.now()}`;
    const expert = await submit({
      ...README_RUN_BODY, episodes: 2, perturbation: { seed: 7 }, name: "Expert, seed set A", policy_name: "expert", metadata: { study, arm: "expert" },
    });
    const novice = await submit({
      ...README_RUN_BODY, episodes: 2, policy: { ...README_RUN_BODY.policy, image: "assay/ref-policy:novice" }, metadata: { study, arm: "novice" },
    });
    assert.equal((await service.api(`/v1/runs/${novice.id}/cancel`, { method: "POST" })).status, 200);
    await runEnd(service, expert.id);
    const done = (await (await service.api(`/v1/runs/${expert.id}`)).json()) as Json;
    assert.equal(done.status, "completed");

    const { page } = tab;
    await tab.signIn(TEST_ADMIN_KEY);
    // A new run's form writes its name and policy name into the body it sends.
    await tab.goto("/runs/new");
    await tab.settled();
    await page.type("#run-name", "From the form");
    await page.type("#run-policy-name", "expert");
    const written = JSON.parse(await page.$eval("#run-body", (t) => (t as HTMLTextAreaElement).value)) as Json;
    assert.deepEqual([written.name, written.policy_name], ["From the form", "expert"]);

    await tab.goto("/runs");
    await tab.settled();
    await page.type("#filter-metadata", `study=${study}`);
    await page.keyboard.press("Enter");
    await page.waitForFunction((a: string, b: string) => {
      const rows = [...document.querySelectorAll("table.runs tbody tr")].map((tr) => tr.getAttribute("data-run"));
      return rows.length === 2 && rows[0] === b && rows[1] === a;
    }, {}, expert.id, novice.id);
    assert.equal(await page.evaluate(() => decodeURIComponent(location.hash)), `#/runs?metadata=study=${study}`);

    const headers = await page.$$eval("table.runs thead th", (ths) => ths.map((th) => (th as HTMLElement).innerText.trim()));
    assert.deepEqual(headers.slice(1), ["Run", "Policy", "Kind", "Task", "Robot", "n", "Rate (95% interval)", "Status", "Created"]);
    const cells = (id: string) => page.$eval(`tr[data-run="${id}"]`, (tr) => [...tr.children].slice(1).map((c) => (c as HTMLElement).innerText.trim()));
    const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
    const [lo, hi] = done.result.ci95 as [number, number];
    assert.deepEqual(await cells(expert.id), [
      `Expert, seed set A\n${expert.id}`, "expert", "run", "pick-cube@v1", "so101@3.11", "2", `${pct(done.result.success_rate)} [${pct(lo)}, ${pct(hi)}]`, "completed",
      await page.$eval(`tr[data-run="${expert.id}"] time`, (t) => (t as HTMLElement).innerText),
    ]);
    const noviceCells = await cells(novice.id);
    assert.deepEqual(noviceCells.slice(0, 8), [novice.id, "assay/ref-policy:novice", "run", "pick-cube@v1", "so101@3.11", "0", "—", "stopped"]);

    // A second filter narrows the list; the address keeps both.
    await page.type("#filter-policy_name", "expert");
    await page.keyboard.press("Enter");
    await page.waitForFunction((b: string) => !document.querySelector(`tr[data-run="${b}"]`), {}, novice.id);
    assert.equal(await page.$$eval("table.runs tbody tr", (rows) => rows.length), 1);
    assert.match(await page.evaluate(() => decodeURIComponent(location.hash)), /policy_name=expert/);
    await page.click("#filter-policy_name", { count: 3 });
    await page.keyboard.press("Backspace");
    await page.keyboard.press("Enter");
    await page.waitForSelector(`tr[data-run="${novice.id}"]`);

    // Compare these: enabled from two selected runs, it opens the compare view of both.
    const compare = button("Compare these");
    assert.equal(await page.$eval(compare, (b) => (b as HTMLButtonElement).disabled), true);
    await page.click(`[aria-label="Select Expert, seed set A"]`);
    assert.equal(await page.$eval(compare, (b) => (b as HTMLButtonElement).disabled), true, "one run is not a comparison");
    await tab.waitForText("1 selected: select one more to compare");
    await page.click(`[aria-label="Select ${novice.id}"]`);
    assert.equal(await page.$eval(compare, (b) => (b as HTMLButtonElement).disabled), false);
    await tab.shot(shots, "runs-named", ["Expert, seed set A", "expert", "2 selected"]);
    // The novice run was cancelled before any episode finished: the compare view asks the API (422) and says in
    // plain words why it cannot compare it. Awaited, so the answer never lands after the test has moved on.
    tab.expectFailedLoad(/^\/v1\/comparisons$/, 422);
    await page.click(compare);
    await page.waitForFunction(() => location.hash.startsWith("#/compare"));
    assert.equal(await page.evaluate(() => location.hash), `#/compare?runs=${expert.id},${novice.id}`);
    await page.waitForFunction((id) => new RegExp(`run ${id} (has no finished episode to compare yet|is \\w+ and has no result yet)`).test(document.body.innerText), {}, novice.id);

    // The run page says what the run is called, its policy's name and its metadata.
    await tab.goto(`/runs/${expert.id}`);
    assert.equal(await tab.settled(), `Expert, seed set A (${expert.id}) · Assay`);
    assert.equal(await page.$eval("h1", (el) => (el as HTMLElement).innerText), "Expert, seed set A");
    await tab.waitForText(`Run ${expert.id}`);
    const labels = await page.$eval(".run-labels", (el) => (el as HTMLElement).innerText);
    assert.match(labels, /Policy name\s+expert/);
    assert.match(labels, new RegExp(`study = ${study}`));
    assert.match(labels, /arm = expert/);
    tab.assertClean();
  });
});
