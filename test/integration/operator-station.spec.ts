/**
 * The operator station's API against a real simulated cell in operator reset mode (issue 26 items 1,
 * 6 and 7 for resets): each reset waits for a person; the test plays that person through the API the
 * station's buttons call. One episode is marked invalid (it runs again and is not counted), one reset
 * is aborted (the attempt goes back to pending), and the result's n, invalidated list and operator
 * time are checked; then the simulated operator runs a small run unattended.
 */
import assert from "node:assert/strict";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { SimOperator } from "../../simulators/fleet/sim-operator.js";
import { README_RUN_BODY } from "../fixtures.js";
import { runEnd, startTestService, type TestService } from "./helpers.js";
import { stationClient } from "../support/station-client.js";

const CELL = "so101-b";
type Json = Record<string, any>;

describe("operator station: resets confirmed through the API on a simulated cell in operator mode", function () {
  this.timeout(240_000);
  let service: TestService;
  let operatorKey: string;
  const { asOperator, cell, until } = stationClient(() => service, () => operatorKey, CELL);

  before(async () => {
    service = await startTestService({ cells: [CELL], simEngine: "kinematic", simResets: "operator" });
    operatorKey = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin", "runs:read", "streams:read"], new Date())).secret;
  });

  after(async () => {
    await service?.stop();
  });

  it("waits for the person, re-runs the invalidated episode, counts only valid attempts and reports operator time", async () => {
    const created = await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 3 } });
    assert.equal(created.status, 201, await created.clone().text());
    const runId = ((await created.json()) as Json).id as string;
    const ended = runEnd(service, runId);

    // The first reset: the cell says what it needs, in the list and in its own view.
    const first = await until("the first reset", (c) => c.attention?.kind === "reset");
    assert.equal(first.state, "awaiting_reset");
    assert.equal(first.attention.run_id, runId);
    const cube = first.attention.scene.objects.cube;
    assert.equal(cube.object, "cube");
    assert.equal(cube.position_m.length, 3);
    assert.equal(cube.tolerance_m, 0.005, "pick-cube@v1's tol_mm 5");
    assert.equal(first.attention.scene.cameras.top.model, "orthographic", "the top camera's calibration travels with the scene");
    const listed = ((await (await asOperator("/v1/cells")).json()) as Json).data.find((c: Json) => c.id === CELL);
    assert.equal(listed.attention.episode_id, first.attention.episode_id);
    assert.equal(first.previous_episode, null);

    // Only the operator account answers cells: a customer's admin key is refused.
    const customer = await service.api(`/v1/cells/${CELL}/scene-ready`, { method: "POST", json: {} });
    assert.equal(customer.status, 403);
    assert.equal(((await customer.json()) as Json).error.code, "insufficient_scope");

    // A stale screen is refused and says why; the right episode is confirmed.
    const stale = await asOperator(`/v1/cells/${CELL}/scene-ready`, { method: "POST", json: { episode_id: "ep_not_this_one" } });
    assert.equal(stale.status, 422);
    assert.match(((await stale.json()) as Json).error.message, /waits for the scene of episode .*not "ep_not_this_one"/);
    const confirmed = await asOperator(`/v1/cells/${CELL}/scene-ready`, { method: "POST", json: { episode_id: first.attention.episode_id } });
    assert.equal(confirmed.status, 200, await confirmed.clone().text());
    assert.deepEqual(await confirmed.json(), { object: "operator_answer", cell_id: CELL, episode_id: first.attention.episode_id, action: "scene_ready" });

    // The second reset waits while the person realises the first scene was wrong and marks it invalid.
    const second = await until("the second reset", (c) => c.attention?.kind === "reset" && c.attention.episode_id !== first.attention.episode_id);
    assert.equal(second.previous_episode.id, first.attention.episode_id);
    assert.equal(second.previous_episode.run_open, true);
    const badReason = await asOperator(`/v1/cells/${CELL}/invalidate-previous`, { method: "POST", json: { reason: "cat_on_table" } });
    assert.equal(badReason.status, 422);
    assert.match(((await badReason.json()) as Json).error.message, /reason must be one of "scene_wrong", "hardware_fault", "person_in_cell"/);
    const invalidated = await asOperator(`/v1/cells/${CELL}/invalidate-previous`, {
      method: "POST", json: { reason: "scene_wrong", note: "cube on the wrong side", episode_id: first.attention.episode_id },
    });
    assert.equal(invalidated.status, 200, await invalidated.clone().text());
    const invalid = (await invalidated.json()) as Json;
    assert.equal(invalid.episode_id, first.attention.episode_id);
    assert.equal(invalid.attempt, 1);
    assert.ok(invalid.outcome === "success" || invalid.outcome === "failure");
    const again = await asOperator(`/v1/cells/${CELL}/invalidate-previous`, { method: "POST", json: { reason: "scene_wrong", episode_id: first.attention.episode_id } });
    assert.equal(again.status, 422, "a double tap does not invalidate another episode");

    // Abort the second episode during its reset: it goes back to pending and is run again.
    const aborted = await asOperator(`/v1/cells/${CELL}/abort`, { method: "POST", json: { episode_id: second.attention.episode_id, note: "gripper cable caught" } });
    assert.equal(aborted.status, 200, await aborted.clone().text());

    // From here the person confirms every reset until the run ends.
    let done = false;
    const confirmAll = (async () => {
      let last = "";
      while (!done) {
        const c = await cell();
        const key = c.attention ? `${c.attention.episode_id}/${c.attention.since}` : "";
        if (c.attention?.kind === "reset" && key !== last) {
          last = key;
          await asOperator(`/v1/cells/${CELL}/scene-ready`, { method: "POST", json: { episode_id: c.attention.episode_id } });
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const { run } = await ended;
    done = true;
    await confirmAll;
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));

    const result = (await (await service.api(`/v1/runs/${runId}/result`)).json()) as Json;
    assert.equal(result.n, 3, "the invalid attempt is not counted");
    assert.equal(result.invalidated.length, 1);
    assert.deepEqual(
      { episode_id: result.invalidated[0].episode_id, attempt: result.invalidated[0].attempt, cell: result.invalidated[0].cell, reason: result.invalidated[0].reason, note: result.invalidated[0].note },
      { episode_id: first.attention.episode_id, attempt: 1, cell: CELL, reason: "scene_wrong", note: "cube on the wrong side" },
    );
    // Resets that waited for the person: episode 1 (invalid), 2 (aborted while waiting), 1 again, 2 again and 3.
    assert.equal(result.operator_time.resets, 5);
    assert.ok(result.operator_time.reset_s_total > 0);
    // Both figures are rounded to 0.1 s from the same unrounded total.
    assert.ok(Math.abs(result.operator_time.reset_s_per_episode - result.operator_time.reset_s_total / 3) <= 0.1, JSON.stringify(result.operator_time));

    const episodes = ((await (await service.api(`/v1/runs/${runId}/episodes`)).json()) as Json).data as Json[];
    const rerun = episodes.find((e) => e.id === first.attention.episode_id)!;
    assert.equal(rerun.attempts, 2);
    assert.deepEqual(rerun.interruptions.map((i: Json) => [i.reason, i.invalidated?.reason ?? null]), [["invalidated", "scene_wrong"]]);
    // The re-run's own recording replaced the invalid attempt's.
    assert.ok(rerun.mcap_url, "the re-run's recording is listed");
    const recording = await service.api(rerun.mcap_url);
    assert.equal(recording.status, 200);
    const aborted2 = episodes.find((e) => e.id === second.attention.episode_id)!;
    assert.deepEqual(aborted2.interruptions.map((i: Json) => i.reason), ["operator_abort"]);
    const usage = (await (await service.api(`/v1/usage?period=${new Date().toISOString().slice(0, 7)}`)).json()) as Json;
    assert.ok(usage.operator_reset_s >= result.operator_time.reset_s_total - 0.2, JSON.stringify(usage));
  });

  it("the simulated operator confirms every reset through the same API, unattended", async () => {
    const operator = new SimOperator({
      baseUrl: service.coordinator.baseUrl, apiKey: operatorKey, seed: 11, delayMs: { min: 20, max: 120 }, errorRate: 0,
      setSceneWrong: (cellId) => service.fleet!.misplaceNextScene(cellId),
    });
    operator.start();
    try {
      const created = await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 2 } });
      assert.equal(created.status, 201, await created.clone().text());
      const { run } = await runEnd(service, ((await created.json()) as Json).id);
      assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
      const result = (await (await service.api(`/v1/runs/${run.id}/result`)).json()) as Json;
      assert.equal(result.n, 2);
      assert.equal(result.operator_time.resets, 2);
      assert.equal(operator.tally.confirmed, 2);
      assert.equal(result.invalidated, undefined);
    } finally {
      await operator.stop();
    }
  });
});
