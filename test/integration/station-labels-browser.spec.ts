/**
 * Success labels at the operator station in headless Chromium against a real simulated cell in
 * operator mode (issue 26 items 2 and 7): a task judged by a person (operator.success); the technician
 * confirms each scene, then judges each finished episode on its card: progress, a note, Success or
 * Failure (screenshot docs/images/station-label.png for docs/operators.md). The run completes with
 * the people's outcomes, judged_by "human" and the mean progress.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { button, ConsoleTab } from "../support/console-tab.js";
import { openBrowserTabs, type BrowserTabs } from "../support/shared-browser.js";
import { runEnd, startTestService, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

const CELL = "so101-b";
const DOCS_IMAGES = join(import.meta.dirname, "..", "..", "docs", "images");
type Json = Record<string, any>;

const JUDGED_TASK = {
  name: "pick-cube-judged-station",
  initial_conditions: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0], tol_mm: 5 } },
  success_predicates: [{ judged: "operator.success" }],
  stages: [{ reached: "distance(gripper, cube) < 0.03" }, { grasped: "gripper.holding" }],
  instructions: { sampled_per_episode: ["pick up the cube"] },
};

describe("operator station labels in a real browser (simulated cell in operator mode)", function () {
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

  /** Waits until the cell's card asks for `kind` on a wait other than `previous`; returns its "<episode>/<since>". */
  const next = async (kind: "reset" | "label", previous: string): Promise<string> => {
    const handle = await tab.page.waitForFunction((cell: string, k: string, prev: string) => {
      const card = document.querySelector(`article[data-cell="${cell}"]`) as HTMLElement | null;
      const now = card?.dataset.attention ?? "";
      return now !== "" && now !== prev && card?.dataset.attentionKind === k ? now : false;
    }, { timeout: 120_000 }, CELL, kind, previous);
    return (await handle.jsonValue()) as string;
  };

  it("judges each episode with Success or Failure, progress and a note; the run reports the people's outcomes", async () => {
    tab = await ConsoleTab.open(browser, service.coordinator.baseUrl, () => [TEST_ADMIN_KEY, operator]);
    const { page } = tab;
    await page.setViewport({ width: 1024, height: 1100 });
    await tab.signIn(operator);
    await tab.goto("/station");
    assert.equal(await tab.settled(), "Station · Assay");
    await tab.waitForText("No cell needs anyone");

    const task = (await (await service.api("/v1/tasks", { method: "POST", json: JUDGED_TASK })).json()) as Json;
    assert.ok(task.id, JSON.stringify(task));
    const pilotResponse = await service.api(`/v1/tasks/${task.id}/pilot`, { method: "POST", json: { robot: "so101@latest", episodes: 2 } });
    assert.equal(pilotResponse.status, 200, await pilotResponse.clone().text());
    const runId = ((await pilotResponse.json()) as Json).run_id as string;
    const ended = runEnd(service, runId);

    /** The card's notice of what the person last did, or null when it shows none. */
    const notice = () => page.$eval(`article[data-cell="${CELL}"] .station-done`, (el) => ((el as HTMLElement).hidden ? null : el.textContent));
    const setProgress = (value: string) => page.$eval(`#progress-${CELL}`, (el, v) => { (el as HTMLInputElement).value = v as string; }, value);

    // Episode 1: scene, then the label card on the finished scene.
    const reset1 = await next("reset", "");
    await page.click(button("Scene ready"));
    const label1 = await next("label", reset1);
    await tab.waitForText("Judge the episode: did it succeed?");
    // The scene's notice was news while the episode ran; beside the label it is not.
    assert.equal(await notice(), null, "the label card still shows the reset's notice");
    await tab.waitForText("Instruction: “pick up the cube”");
    assert.equal((await page.$eval(`article[data-cell="${CELL}"]`, (el) => el.textContent ?? "")).includes(runId), false, "the label card names no run");
    await setProgress("80");
    await page.type(`#label-note-${CELL}`, "lifted cleanly");
    // The person judges on the live top camera: the card shows the finished scene (a frame of it) before the shot.
    await page.waitForFunction((cell: string) => {
      const img = document.querySelector(`article[data-cell="${cell}"] img.camera`) as HTMLImageElement | null;
      return img !== null && img.naturalWidth === 640;
    }, { timeout: 60_000 }, CELL);
    await tab.shot(DOCS_IMAGES, "station-label", ["Station", CELL, "Judge the episode: did it succeed?", "Progress (0-100)", "Success", "Failure"]);
    await page.click(button("Success"));
    await tab.waitForText("Episode labelled a success, progress 80.");

    // Episode 2: judged a failure. The label's notice stays on the next reset, the step that follows it.
    const reset2 = await next("reset", label1);
    assert.equal(await notice(), "Episode labelled a success, progress 80.");
    await page.click(button("Scene ready"));
    await next("label", reset2);
    assert.equal(await notice(), null, "the second label card shows an earlier notice");
    await tab.waitForText("Previous episode: #0");
    const card2 = await page.$eval(`article[data-cell="${CELL}"]`, (el) => el.textContent ?? "");
    assert.equal(card2.includes(runId), false, `the label card names no run, not even the previous episode's: ${card2}`);
    await setProgress("30");
    await page.click(button("Failure"));
    await tab.waitForText("Episode labelled a failure, progress 30.");

    const { run } = await ended;
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
    const result = (await (await service.api(`/v1/runs/${runId}/result`)).json()) as Json;
    assert.equal(result.n, 2);
    assert.equal(result.success_rate, 0.5);
    assert.equal(result.labels.judged_by, "human");
    assert.equal(result.labels.progress.mean, 55);
    assert.equal(result.labels.progress.n, 2);
    assert.ok(result.labels.label_s_total > 0);
    await tab.waitForText("No cell needs anyone");
    tab.assertClean();
    await tab.close();
  });
});
