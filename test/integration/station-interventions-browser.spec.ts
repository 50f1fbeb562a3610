/**
 * Interventions at the operator station in headless Chromium against a real simulated cell in operator
 * mode (issue 26 items 5 and 7): a run with `interventions: "on_stall"` and the novice policy, whose
 * stalled episode pauses and asks for help. The technician sees what happened and what to do on the
 * cell's card (screenshot docs/images/station-intervene.png for docs/operators.md), presses Intervene
 * (the card then offers Done, the cell is `intervening`), writes what they did and presses Done; the
 * episode goes on and is recorded as helped by the operator. The simulated operator confirms the
 * resets and helps with later stalls.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { SimOperator } from "../../simulators/fleet/sim-operator.js";
import { README_RUN_BODY } from "../fixtures.js";
import { button, ConsoleTab } from "../support/console-tab.js";
import { openBrowserTabs, type BrowserTabs } from "../support/shared-browser.js";
import { runEnd, startTestService, TEST_ADMIN_KEY, type TestService } from "./helpers.js";

const CELL = "so101-b";
const DOCS_IMAGES = join(import.meta.dirname, "..", "..", "docs", "images");
type Json = Record<string, any>;
/** As interventions.spec.ts: dim light and look-alike blocks make the novice miss and stall. */
const PERTURBATION = { layout_jitter_mm: 10, lighting: ["nominal", "dim"], distractors: "color-blocks@1", seed: 20251122 };

describe("operator station interventions in a real browser (simulated cell in operator mode)", function () {
  this.timeout(240_000);
  let service: TestService;
  let browser: BrowserTabs;
  let tab: ConsoleTab;
  let operator: string;
  let resets: SimOperator | undefined;

  before(async () => {
    service = await startTestService({ cells: [CELL], simEngine: "kinematic", simResets: "operator" });
    operator = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin", "runs:read", "streams:read"], new Date())).secret;
    browser = await openBrowserTabs();
  });
  after(async () => {
    await resets?.stop();
    await browser?.close();
    await service?.stop();
  });

  /** Resolves when the cell's card shows an intervention in `phase`; returns its "<episode>/<since>". */
  const interventionCard = async (phase: "offered" | "holding"): Promise<string> => {
    const handle = await tab.page.waitForFunction((cell: string, p: string) => {
      const card = document.querySelector(`article[data-cell="${cell}"]`) as HTMLElement | null;
      const panel = card?.querySelector(".station-intervene") as HTMLElement | null;
      if (card?.dataset.attentionKind !== "intervene" || !panel || panel.hidden) return false;
      const button = panel.querySelector(`button[data-action="${p === "offered" ? "intervene" : "intervene-done"}"]`) as HTMLElement | null;
      return button && !(button.parentElement as HTMLElement).hidden ? card.dataset.attention : false;
    }, { timeout: 120_000 }, CELL, phase);
    return (await handle.jsonValue()) as string;
  };

  it("shows the paused episode, Intervene holds it, Done lets it go on and the episode records the help", async () => {
    tab = await ConsoleTab.open(browser, service.coordinator.baseUrl, () => [TEST_ADMIN_KEY, operator]);
    const { page } = tab;
    await page.setViewport({ width: 1024, height: 1100 });
    await tab.signIn(operator);
    await tab.goto("/station");
    assert.equal(await tab.settled(), "Station · Assay");
    await tab.waitForText("No cell needs anyone");

    resets = new SimOperator({
      baseUrl: service.coordinator.baseUrl, apiKey: operator, seed: 13, delayMs: { min: 10, max: 40 }, errorRate: 0, interventions: false,
      setSceneWrong: (cellId) => service.fleet!.misplaceNextScene(cellId),
    });
    resets.start();
    const body = {
      ...README_RUN_BODY, episodes: 2, perturbation: PERTURBATION, interventions: "on_stall",
      policy: { ...README_RUN_BODY.policy, image: "assay/ref-policy:novice" },
    };
    const created = await service.api("/v1/runs", { method: "POST", json: body });
    assert.equal(created.status, 201, await created.clone().text());
    const runId = ((await created.json()) as Json).id as string;
    const ended = runEnd(service, runId);

    const wait = await interventionCard("offered");
    const episodeId = wait.split("/")[0]!;
    await tab.waitForText("The episode is paused and needs your help");
    await tab.waitForText("The policy stalled: nothing moved for 5 s");
    await tab.waitForText("Paused for a person's help");
    // The live camera shows the cell the person is about to step into.
    await page.waitForFunction((cell: string) => {
      const img = document.querySelector(`article[data-cell="${cell}"] img.camera`) as HTMLImageElement | null;
      return img !== null && img.naturalWidth === 640;
    }, { timeout: 60_000 }, CELL);
    await tab.shot(DOCS_IMAGES, "station-intervene", ["Station", CELL, "The episode is paused and needs your help", "Put each task object back on its planned pose", "Intervene"]);
    await page.click(button("Intervene"));
    await tab.waitForText("The arm is held: help the episode, then press Done.");
    assert.equal(await interventionCard("holding"), wait, "the same wait, now holding");
    await page.type(`#intervene-note-${CELL}`, "slid the cube back");
    await page.click(button("Done"));
    await tab.waitForText("Done: the episode goes on, marked as helped.");

    // The rest unattended: the simulated operator confirms resets and helps with later stalls.
    await resets.stop();
    resets = new SimOperator({
      baseUrl: service.coordinator.baseUrl, apiKey: operator, seed: 13, delayMs: { min: 10, max: 40 }, errorRate: 0,
      setSceneWrong: (cellId) => service.fleet!.misplaceNextScene(cellId),
    });
    resets.start();
    const { run } = await ended;
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
    const episodes = ((await (await service.api(`/v1/runs/${runId}/episodes`)).json()) as { data: Json[] }).data;
    const helped = episodes.find((e) => e.id === episodeId)!;
    assert.equal(helped.intervened, true);
    assert.equal(helped.interventions[0].by, "operator");
    assert.match(helped.interventions[0].detail, /slid the cube back/);
    await tab.waitForText("No cell needs anyone");
    tab.assertClean();
    await tab.close();
  });
});
