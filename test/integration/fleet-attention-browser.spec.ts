/**
 * The Fleet page in headless Chromium while a simulated cell in operator reset mode waits for its scene
 * (issue 26 item 6): the waiting cell's card comes first, says what it needs and for how long, and the
 * summary counts it; the screenshot docs/images/fleet-waiting.png is for docs/operators.md.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { README_RUN_BODY } from "../fixtures.js";
import { ConsoleTab } from "../support/console-tab.js";
import { openBrowserTabs, type BrowserTabs } from "../support/shared-browser.js";
import { runEnd, startTestService, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

const DOCS_IMAGES = join(import.meta.dirname, "..", "..", "docs", "images");
type Json = Record<string, any>;

describe("fleet page lists cells waiting on a person first (real browser, simulated cells in operator reset mode)", function () {
  this.timeout(180_000);
  let service: TestService;
  let browser: BrowserTabs;
  let operator: string;

  before(async () => {
    service = await startTestService({ cells: ["so101-b", "so101-c"], simEngine: "kinematic", simResets: "operator" });
    operator = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin", "runs:read", "streams:read"], new Date())).secret;
    browser = await openBrowserTabs();
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it("shows the waiting cell first with what it needs and how long it has waited", async () => {
    const tab = await ConsoleTab.open(browser, service.coordinator.baseUrl, () => [TEST_ADMIN_KEY, operator]);
    const { page } = tab;
    await page.setViewport({ width: 1280, height: 900 });
    await tab.signIn(operator);
    await tab.goto("/fleet");
    assert.equal(await tab.settled(), "Fleet · Assay");

    const created = await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 1 } });
    assert.equal(created.status, 201, await created.clone().text());
    const runId = ((await created.json()) as Json).id as string;
    const ended = runEnd(service, runId);

    // The page refreshes every 5 s; the waiting cell's card moves first and says so.
    const waiting = await page.waitForFunction(() => {
      const first = document.querySelector(".cells > article") as HTMLElement | null;
      return first?.classList.contains("needs") && /Set the scene for episode #0 — waiting \d+ s/.test(first.innerText) ? first.querySelector("h2")!.innerText : false;
    }, { timeout: 60_000 });
    const cell = (await waiting.jsonValue()) as string;
    const others = await page.$$eval(".cells > article", (cards) => cards.slice(1).map((c) => c.classList.contains("needs")));
    assert.deepEqual(others, [false], "only the waiting cell is marked");
    await tab.waitForText("1 waiting on a person");
    await tab.shot(DOCS_IMAGES, "fleet-waiting", ["Fleet", cell, "Waiting for a person to set the scene", "Set the scene", "Open the station"]);

    // The person answers; the card goes back to the ordinary list.
    const view = (await (await service.api(`/v1/cells/${cell}`, { headers: { authorization: `Bearer ${operator}` } })).json()) as Json;
    const confirmed = await service.api(`/v1/cells/${cell}/scene-ready`, { method: "POST", json: { episode_id: view.attention.episode_id }, headers: { authorization: `Bearer ${operator}` } });
    assert.equal(confirmed.status, 200, await confirmed.clone().text());
    assert.equal((await ended).run.status, "completed");
    await page.waitForFunction(() => document.querySelectorAll(".cells > article.needs").length === 0, { timeout: 30_000 });
    tab.assertClean();
    await tab.close();
  });
});
