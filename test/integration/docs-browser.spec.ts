/**
 * The API reference page in headless Chromium, without a key (issue 28 item 6): Swagger UI, served
 * from this coordinator alone, renders /v1/openapi.json and shows the operations; the page has no
 * console error (a CSP refusal would be one), no uncaught exception and no request off the
 * coordinator. The console's header links to the docs and the reference.
 */
import assert from "node:assert/strict";
import { ConsoleTab, link } from "../support/console-tab.js";
import { openBrowserTabs, type BrowserTabs } from "../support/shared-browser.js";
import { startTestService, type TestService } from "./helpers.js";

describe("docs and API reference in a real browser (headless Chromium, no key)", function () {
  this.timeout(120_000);
  let service: TestService;
  let browser: BrowserTabs;
  const tabs: ConsoleTab[] = [];
  before(async () => {
    service = await startTestService();
    browser = await openBrowserTabs();
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
  });
  afterEach(async () => {
    for (const tab of tabs.splice(0)) {
      tab.assertClean();
      await tab.close();
    }
  });

  async function openTab(): Promise<ConsoleTab> {
    const tab = await ConsoleTab.open(browser, service.coordinator.baseUrl, () => []);
    tabs.push(tab);
    return tab;
  }

  it("renders the OpenAPI document's operations on /docs/api-reference", async () => {
    const tab = await openTab();
    await tab.page.goto(`${service.coordinator.baseUrl}/docs/api-reference`);
    await tab.page.waitForSelector(".opblock-summary-path", { timeout: 60_000 });
    // Every operation of the document, as "METHOD path", and what the page shows.
    const doc = (await (await service.api("/v1/openapi.json", { headers: { authorization: "" } })).json()) as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`)).sort();
    const shown = (await tab.page.$$eval(".opblock", (nodes) => nodes.map((n) => `${n.querySelector(".opblock-summary-method")?.textContent} ${n.querySelector(".opblock-summary-path")?.getAttribute("data-path")}`))).sort();
    assert.ok(documented.length > 70);
    assert.deepEqual(shown, documented);
    const text = await tab.text();
    assert.match(text, /Assay API/);
    assert.match(text, /0\.5\.0/);
    // An operation opens to its parameters and responses.
    await tab.page.click("#operations-runs-getRun .opblock-summary-control");
    await tab.waitForText("run_id");
  });

  it("is reached from the console's header and the docs' contents", async () => {
    const tab = await openTab();
    await tab.goto("/leaderboards");
    await tab.settled();
    await Promise.all([tab.page.waitForNavigation(), tab.page.click(link("Docs"))]);
    assert.equal(new URL(tab.page.url()).pathname, "/docs");
    await tab.waitForText("Errors");
    await Promise.all([tab.page.waitForNavigation(), tab.page.click("main " + link("Errors"))]);
    assert.equal(new URL(tab.page.url()).pathname, "/docs/errors");
    await tab.waitForText("invalid_api_key");
    await Promise.all([tab.page.waitForNavigation(), tab.page.click("header " + link("API reference"))]);
    assert.equal(new URL(tab.page.url()).pathname, "/docs/api-reference");
    await tab.page.waitForSelector(".opblock-summary-path", { timeout: 60_000 });
  });
});
