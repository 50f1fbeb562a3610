/**
 * Issue 26's "Done when", in headless Chromium against a real simulated cell configured as a lab
 * without motion capture (simWithout mocap, resets confirmed by a person, success judged by the
 * operator): the run completes from the station alone (Scene ready, labels with progress, one
 * previous episode marked invalid), with the right n, the invalidated episode re-run and listed, the
 * progress score reported and the operator's time in the result; the run's page says who judged.
 * The same lab's task judged by instruments (pick-cube@v1 reads mocap) is refused at submission,
 * naming what is missing. Screenshots go to docs/images/ for docs/operators.md.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { README_RUN_BODY } from "../fixtures.js";
import { button, ConsoleTab } from "../support/console-tab.js";
import { openBrowserTabs, type BrowserTabs } from "../support/shared-browser.js";
import { runEnd, startTestService, TEST_ADMIN_KEY, type TestService } from "./helpers.js";
import { eventually } from "../support/eventually.js";

const CELL = "so101-b";
const DOCS_IMAGES = join(import.meta.dirname, "..", "..", "docs", "images");
type Json = Record<string, any>;

// Nothing here reads mocap: a person judges success.
const LAB_TASK = {
  name: "pick-cube-lab",
  initial_conditions: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0], tol_mm: 5 } },
  success_predicates: [{ judged: "operator.success" }],
  instructions: { sampled_per_episode: ["pick up the cube"] },
};

describe("a lab without motion capture runs an evaluation from the station alone (issue 26, done when)", function () {
  this.timeout(600_000);
  let service: TestService;
  let browser: BrowserTabs;
  let tab: ConsoleTab;
  let operator: string;

  before(async () => {
    service = await startTestService({ cells: [CELL], simEngine: "kinematic", simResets: "operator", simWithout: { [CELL]: ["mocap"] } });
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
    }, { timeout: 240_000 }, CELL, kind, previous);
    return (await handle.jsonValue()) as string;
  };

  it("refuses the instrument-judged task on this lab's cell, naming the missing instrument", async () => {
    // The coordinator knows what the cell lacks once its agent has said hello (instruments reported); before the
    // first hello it cannot refuse, so wait for it as a person would see the cell come online in the fleet page.
    await eventually(`${CELL} connected with its instruments reported`, async () => {
      const cell = (await (await service.api(`/v1/cells/${CELL}`, { headers: { authorization: `Bearer ${operator}` } })).json()) as Json;
      return cell.connected === true && Array.isArray(cell.instruments);
    });
    const refused = await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 2 } });
    const body = (await refused.json()) as Json;
    assert.equal(refused.status, 422, JSON.stringify(body));
    assert.equal(body.error.code, "contract_validation_failed");
    assert.match(body.error.message, /mocap/);
    assert.match(body.error.message, new RegExp(CELL));
  });

  it("confirms scenes, labels with progress and invalidates one episode at the station; the result has n, the re-run, progress and operator time", async () => {
    tab = await ConsoleTab.open(browser, service.coordinator.baseUrl, () => [TEST_ADMIN_KEY, operator]);
    const { page } = tab;
    await page.setViewport({ width: 1024, height: 1100 });
    await tab.signIn(operator);
    await tab.goto("/station");
    assert.equal(await tab.settled(), "Station · Assay");
    await tab.waitForText("No cell needs anyone");

    const task = (await (await service.api("/v1/tasks", { method: "POST", json: LAB_TASK })).json()) as Json;
    assert.ok(task.id, JSON.stringify(task));
    const pilotResponse = await service.api(`/v1/tasks/${task.id}/pilot`, { method: "POST", json: { robot: "so101@latest", episodes: 2 } });
    assert.equal(pilotResponse.status, 200, await pilotResponse.clone().text());
    const runId = ((await pilotResponse.json()) as Json).run_id as string;
    const ended = runEnd(service, runId, { deadlineMs: 540_000 });
    const setProgress = (value: string) => page.$eval(`#progress-${CELL}`, (el, v) => { (el as HTMLInputElement).value = v as string; }, value);

    // Episode 1: scene ready, then judged a success at progress 80.
    const reset1 = await next("reset", "");
    await page.click(button("Scene ready"));
    const label1 = await next("label", reset1);
    await setProgress("80");
    await page.click(button("Success"));
    await tab.waitForText("Episode labelled a success, progress 80.");

    // Before episode 2's scene: the technician notices episode 1's scene was wrong and marks it invalid.
    const reset2 = await next("reset", label1);
    await tab.waitForText("Previous episode: #0");
    await page.select(`#reason-${CELL}`, "scene_wrong");
    await page.type(`#note-${CELL}`, "cube on the wrong side");
    await page.click(button("Mark previous episode invalid"));
    await tab.waitForText("marked invalid (The scene was set wrong); it runs again.");
    await page.click(button("Scene ready"));
    const label2 = await next("label", reset2);
    await setProgress("30");
    await page.click(button("Failure"));
    await tab.waitForText("Episode labelled a failure, progress 30.");

    // Episode 1 again.
    const reset3 = await next("reset", label2);
    assert.equal(reset3.split("/")[0], reset1.split("/")[0], "the invalidated episode is the one run again");
    await page.click(button("Scene ready"));
    await next("label", reset3);
    await setProgress("70");
    // The live top camera on the finished scene (no mocap: the person looks).
    await page.waitForFunction((cell: string) => {
      const img = document.querySelector(`article[data-cell="${cell}"] img.camera`) as HTMLImageElement | null;
      return img !== null && img.naturalWidth > 0;
    }, { timeout: 60_000 }, CELL);
    await tab.shot(DOCS_IMAGES, "lab-without-mocap-label", ["Station", CELL, "Judge the episode: did it succeed?", "Progress (0-100)", "Success", "Failure"]);
    await page.click(button("Success"));
    await tab.waitForText("Episode labelled a success, progress 70.");

    const { run } = await ended;
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
    const result = (await (await service.api(`/v1/runs/${runId}/result`)).json()) as Json;
    assert.equal(result.n, 2, "the invalid attempt is not counted");
    assert.equal(result.success_rate, 0.5);
    assert.equal(result.invalidated.length, 1);
    assert.equal(result.invalidated[0].episode_id, reset1.split("/")[0]);
    assert.equal(result.invalidated[0].reason, "scene_wrong");
    assert.equal(result.invalidated[0].outcome, "success", "the invalid attempt's outcome is kept in the list");
    assert.equal(result.labels.judged_by, "human");
    assert.equal(result.labels.progress.n, 2);
    assert.equal(result.labels.progress.mean, 50);
    assert.ok(result.labels.progress.ci95, JSON.stringify(result.labels.progress));
    assert.equal(result.operator_time.resets, 3, "three scenes were set by the person");
    assert.ok(result.operator_time.reset_s_total > 0 && result.labels.label_s_total > 0, JSON.stringify({ operator_time: result.operator_time, labels: result.labels }));
    const episodes = ((await (await service.api(`/v1/runs/${runId}/episodes`)).json()) as Json).data as Json[];
    const rerun = episodes.find((e) => e.id === reset1.split("/")[0]);
    assert.equal(rerun?.attempts, 2, "the invalidated episode ran twice");
    assert.equal(rerun?.label.progress, 70);

    tab.assertClean();
    await tab.close();

    // The run's page (the customer's key: the run is theirs) says who judged, with the progress score.
    const customer = await ConsoleTab.open(browser, service.coordinator.baseUrl, () => [TEST_ADMIN_KEY, operator]);
    await customer.page.setViewport({ width: 1024, height: 900 });
    await customer.signIn(TEST_ADMIN_KEY);
    await customer.goto(`/runs/${runId}`);
    await customer.waitForText("Judged by people at the operator station: 2 labelled by people");
    await customer.waitForText("mean progress 50");
    await customer.shot(DOCS_IMAGES, "lab-without-mocap-result", ["Result", "Judged by people at the operator station", "mean progress 50", "Operator time: 3 resets waited for a person", "; labelling ", "Marked invalid at the station and run again (not counted): #0 attempt 1 (the scene was set wrong)"]);
    customer.assertClean();
    await customer.close();
  });
});
