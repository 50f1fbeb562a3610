/**
 * The operator station in headless Chromium against a real simulated cell in operator reset mode
 * (issue 26 items 1 and 7): a technician opens #/station, sees the cell waiting for its scene with the
 * live top camera and the targets drawn over it (screenshot docs/images/station-reset.png for
 * docs/operators.md), presses "Scene ready", marks the previous episode invalid with a reason, and
 * confirms the remaining resets; the run completes with the right n and lists the invalid episode.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { README_RUN_BODY } from "../fixtures.js";
import { button, ConsoleTab } from "../support/console-tab.js";
import { openBrowserTabs, type BrowserTabs } from "../support/shared-browser.js";
import { runEnd, startTestService, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

const CELL = "so101-b";
const DOCS_IMAGES = join(import.meta.dirname, "..", "..", "docs", "images");
type Json = Record<string, any>;

describe("operator station in a real browser (simulated cell in operator reset mode)", function () {
  this.timeout(240_000);
  let service: TestService;
  let browser: BrowserTabs;
  let tab: ConsoleTab;
  let operator: string;

  before(async () => {
    service = await startTestService({ cells: [CELL], simEngine: "kinematic", simResets: "operator" });
    operator = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin", "runs:read", "streams:read"], new Date())).secret;
    browser = await openBrowserTabs();
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  /** Waits until the cell's card asks for a reset other than `previous`; returns its "<episode>/<since>". */
  const nextReset = async (previous: string): Promise<string> => {
    const handle = await tab.page.waitForFunction((cell: string, prev: string) => {
      const card = document.querySelector(`article[data-cell="${cell}"]`) as HTMLElement | null;
      const now = card?.dataset.attention ?? "";
      return now !== "" && now !== prev ? now : false;
    }, { timeout: 120_000 }, CELL, previous);
    return (await handle.jsonValue()) as string;
  };

  it("confirms a reset, marks the previous episode invalid, and the run completes with it re-run", async () => {
    tab = await ConsoleTab.open(browser, service.coordinator.baseUrl, () => [TEST_ADMIN_KEY, operator]);
    const { page } = tab;
    await page.setViewport({ width: 1024, height: 1100 }); // a tablet held upright
    await tab.signIn(operator);
    await tab.goto("/station");
    assert.equal(await tab.settled(), "Station · Assay");
    await tab.waitForText("No cell needs anyone");

    const created = await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 2 } });
    assert.equal(created.status, 201, await created.clone().text());
    const runId = ((await created.json()) as Json).id as string;
    const ended = runEnd(service, runId);

    // The first reset: the live camera with the targets drawn over it, and the buttons.
    const first = await nextReset("");
    await page.waitForFunction((cell: string) => {
      const card = document.querySelector(`article[data-cell="${cell}"]`)!;
      const img = card.querySelector("img.camera") as HTMLImageElement | null;
      return img !== null && img.naturalWidth === 640 && card.querySelectorAll(".scene-overlay .target").length > 0;
    }, { timeout: 60_000 }, CELL);
    await tab.shot(DOCS_IMAGES, "station-reset", ["Station", CELL, "Set the scene, then press Scene ready", "cube", "within 5 mm", "Scene ready", "Abort episode"]);
    await page.click(button("Scene ready"));

    // The second reset: the previous episode is offered for invalidation; the technician marks it.
    const second = await nextReset(first);
    await tab.waitForText("Previous episode: #0");
    // Every field a person fills in says what it is for, to a screen reader as well (a label or aria-label).
    const unnamed = await page.$$eval(`article[data-cell="${CELL}"] input, article[data-cell="${CELL}"] select, article[data-cell="${CELL}"] textarea`, (fields) =>
      fields.filter((f) => !f.getAttribute("aria-label") && !(f.id && document.querySelector(`label[for="${f.id}"]`)) && !f.closest("label")).map((f) => f.outerHTML));
    assert.deepEqual(unnamed, [], "fields without a name");
    await page.select(`#reason-${CELL}`, "scene_wrong");
    await page.type(`#note-${CELL}`, "cube set on the wrong side");
    await page.click(button("Mark previous episode invalid"));
    await tab.waitForText("marked invalid (The scene was set wrong); it runs again.");
    await tab.shot(DOCS_IMAGES, "station-invalidated", ["Episode #0 of run", "marked invalid (The scene was set wrong)", "episode #1", "Scene ready"]);

    // The rest: scene ready for episode 2 and for episode 1 again.
    await page.click(button("Scene ready"));
    const third = await nextReset(second);
    assert.equal(third.split("/")[0], first.split("/")[0], "the invalidated episode is the one run again");
    await page.click(button("Scene ready"));

    const { run } = await ended;
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
    const result = (await (await service.api(`/v1/runs/${runId}/result`)).json()) as Json;
    assert.equal(result.n, 2);
    assert.equal(result.invalidated.length, 1);
    assert.equal(result.invalidated[0].episode_id, first.split("/")[0]);
    assert.equal(result.invalidated[0].reason, "scene_wrong");
    assert.equal(result.invalidated[0].note, "cube set on the wrong side");
    assert.equal(result.operator_time.resets, 3);
    await tab.waitForText("No cell needs anyone");
    tab.assertClean();
    await tab.close();
  });
});
