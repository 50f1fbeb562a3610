/**
 * Success judged by a person (issue 26 item 2, and the label half of items 6 and 7) against a real
 * simulated cell in operator mode: a task whose success predicate is `operator.success`. After each
 * episode the cell waits in `awaiting_label`; the test plays the person through POST
 * /v1/cells/{cell}/label (the station's buttons), leaves one episode unlabelled until the cell's label
 * timeout, and checks the result's n, judged_by, progress mean with its interval, the unlabelled list
 * and the labelling time. Then the simulated operator labels a run unattended from the world's truth.
 */
import assert from "node:assert/strict";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { SimOperator } from "../../simulators/fleet/sim-operator.js";
import { runEnd, startTestService, type TestService } from "./helpers.js";
import { stationClient } from "../support/station-client.js";

const CELL = "so101-b";
type Json = Record<string, any>;

const JUDGED_TASK = {
  name: "pick-cube-judged",
  initial_conditions: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0], tol_mm: 5 } },
  success_predicates: [{ judged: "operator.success" }],
  stages: [{ reached: "distance(gripper, cube) < 0.03" }, { grasped: "gripper.holding" }, { lifted: "pose(cube).z > 0.06" }],
};

describe("operator labels: success judged by a person on a simulated cell in operator mode", function () {
  this.timeout(240_000);
  let service: TestService;
  let operatorKey: string;
  let resets: SimOperator;
  const { asOperator, cell, until } = stationClient(() => service, () => operatorKey, CELL);
  const json = async (response: Response, status: number): Promise<Json> => {
    const body = (await response.json()) as Json;
    assert.equal(response.status, status, JSON.stringify(body));
    return body;
  };

  before(async () => {
    // A label timeout the unlabelled case can wait out; the labelled episodes are answered well within it.
    service = await startTestService({ cells: [CELL], simEngine: "kinematic", simResets: "operator", simLabelTimeoutS: 6 });
    operatorKey = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin", "runs:read", "streams:read"], new Date())).secret;
    // Resets are confirmed by the simulated operator (no truth given: it leaves the labels to the test).
    resets = new SimOperator({
      baseUrl: service.coordinator.baseUrl, apiKey: operatorKey, seed: 3, delayMs: { min: 10, max: 40 }, errorRate: 0,
      setSceneWrong: (cellId) => service.fleet!.misplaceNextScene(cellId),
    });
    resets.start();
  });

  after(async () => {
    await resets?.stop();
    await service?.stop();
  });

  it("refuses operator.success inside an expression or as a stage, naming the fix", async () => {
    const inside = await json(await service.api("/v1/tasks", { method: "POST", json: { ...JUDGED_TASK, name: "bad-judged", success_predicates: [{ both: "operator.success and gripper.holding" }] } }), 422);
    assert.equal(inside.error.code, "contract_validation_failed");
    assert.match(inside.error.message, /operator\.success must be a success predicate on its own/);
    const stage = await json(await service.api("/v1/tasks", { method: "POST", json: { ...JUDGED_TASK, name: "bad-judged-stage", stages: [{ judged: "operator.success" }] } }), 422);
    assert.match(stage.error.message, /cannot be a stage/);
  });

  it("waits for each label, finalises outcomes with it, lists the unlabelled episode and reports progress with its interval", async () => {
    const task = await json(await service.api("/v1/tasks", { method: "POST", json: JUDGED_TASK }), 201);
    const pilot = await json(await service.api(`/v1/tasks/${task.id}/pilot`, { method: "POST", json: { robot: "so101@latest", episodes: 3 } }), 200);
    const runId = pilot.run_id as string;
    const ended = runEnd(service, runId);

    // Episode 1: the cell waits for the person's judgement, says so, and names no policy.
    const first = await until("the first label request", (c) => c.attention?.kind === "label");
    assert.equal(first.state, "awaiting_label");
    assert.deepEqual(first.attention.scene.predicates, ["judged"]);
    assert.equal(JSON.stringify(first.attention).includes("ref-policy"), false, "the label request does not say which policy ran");
    const badProgress = await json(await asOperator(`/v1/cells/${CELL}/label`, { method: "POST", json: { success: true, progress: 150 } }), 422);
    assert.equal(badProgress.error.code, "contract_validation_failed");
    assert.match(badProgress.error.message, /progress must be a number from 0 to 100/);
    const stale = await json(await asOperator(`/v1/cells/${CELL}/label`, { method: "POST", json: { success: true, episode_id: "ep_not_this_one" } }), 422);
    assert.match(stale.error.message, /waits for the label of episode/);
    const labelled = await json(await asOperator(`/v1/cells/${CELL}/label`, {
      method: "POST", json: { success: true, progress: 90, note: "clean lift", episode_id: first.attention.episode_id },
    }), 200);
    assert.deepEqual(labelled, { object: "operator_answer", cell_id: CELL, episode_id: first.attention.episode_id, action: "label" });

    // Episode 2: judged a failure whatever the instruments saw.
    const second = await until("the second label request", (c) => c.attention?.kind === "label" && c.attention.episode_id !== first.attention.episode_id);
    await json(await asOperator(`/v1/cells/${CELL}/label`, { method: "POST", json: { success: false, progress: 40, episode_id: second.attention.episode_id } }), 200);

    // Episode 3: nobody answers; after the cell's label timeout the episode is unlabelled and the run completes.
    const third = await until("the third label request", (c) => c.attention?.kind === "label" && c.attention.episode_id !== second.attention.episode_id);
    const { run } = await ended;
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));

    const result = await json(await service.api(`/v1/runs/${runId}/result`), 200);
    assert.equal(result.n, 2, "the unlabelled episode is not counted");
    assert.equal(result.success_rate, 0.5);
    assert.equal(result.labels.judged_by, "human");
    assert.equal(result.labels.labelled, 2);
    assert.equal(result.labels.progress.n, 2);
    assert.equal(result.labels.progress.mean, 65);
    const [lo, hi] = result.labels.progress.ci95;
    assert.ok(lo < 65 && hi > 65 && lo >= 0 && hi <= 100, JSON.stringify(result.labels.progress));
    assert.deepEqual(result.labels.unlabelled.map((u: Json) => [u.episode_id, u.cell]), [[third.attention.episode_id, CELL]]);
    assert.ok(result.labels.unlabelled[0].waited_s >= 6, JSON.stringify(result.labels.unlabelled));
    assert.ok(result.labels.label_s_total >= 6, "the labelling time includes the unlabelled wait");

    const episodes = (await json(await service.api(`/v1/runs/${runId}/episodes`), 200)).data as Json[];
    const byId = new Map(episodes.map((e) => [e.id, e]));
    assert.equal(byId.get(first.attention.episode_id)?.outcome, "success");
    assert.equal(byId.get(second.attention.episode_id)?.outcome, "failure");
    assert.equal(byId.get(first.attention.episode_id)?.judged_by, "human");
    assert.equal(byId.get(first.attention.episode_id)?.label.progress, 90);
    assert.equal(byId.get(first.attention.episode_id)?.label.note, "clean lift");
    assert.equal(byId.has(third.attention.episode_id), false, "the unlabelled episode is listed in the result, not among the counted episodes");
    const usage = await json(await service.api(`/v1/usage?period=${new Date().toISOString().slice(0, 7)}`), 200);
    assert.ok(usage.operator_label_s >= result.labels.label_s_total - 0.2, JSON.stringify(usage));
    const after = await cell();
    assert.notEqual(after.state, "awaiting_label");
  });

  it("the simulated operator labels a run unattended from the simulated world's truth", async () => {
    const operator = new SimOperator({
      baseUrl: service.coordinator.baseUrl, apiKey: operatorKey, seed: 5, delayMs: { min: 10, max: 40 }, errorRate: 0,
      setSceneWrong: (cellId) => service.fleet!.misplaceNextScene(cellId), groundTruth: (cellId) => service.fleet!.groundTruth(cellId),
    });
    operator.start();
    try {
      const task = await json(await service.api("/v1/tasks", { method: "POST", json: { ...JUDGED_TASK, name: "pick-cube-judged-sim" } }), 201);
      const pilot = await json(await service.api(`/v1/tasks/${task.id}/pilot`, { method: "POST", json: { robot: "so101@latest", episodes: 2 } }), 200);
      const { run } = await runEnd(service, pilot.run_id);
      assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
      const result = await json(await service.api(`/v1/runs/${pilot.run_id}/result`), 200);
      assert.equal(result.n, 2);
      assert.equal(result.labels.judged_by, "human");
      assert.equal(result.labels.unlabelled.length, 0);
      assert.equal(operator.tally.labelled, 2);
      assert.equal(operator.tally.mislabelled, 0);
    } finally {
      await operator.stop();
    }
  });
});
