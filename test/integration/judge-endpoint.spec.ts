/**
 * The judge endpoint (issue 26 item 3) on a real simulated cell in operator mode: a task judged by a
 * person (operator.success) run with a simulated judge (simulators/judge/sim-judge.ts) at a configured
 * error rate, and the simulated operator as the person. Checks the submission's checks (the task must
 * be judged by a person; the judge is pre-flighted), then a run whose every episode is audited: the
 * result's confusion counts are exactly the judge's verdicts against the world's truth (the operator
 * labels without error), and Cohen's kappa's 95% interval holds the kappa the configured error rate
 * implies. Then a run where the judge decides alone, is unsure, and fails once: those go to a person.
 */
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { SimOperator } from "../../simulators/fleet/sim-operator.js";
import { SimJudge } from "../../simulators/judge/sim-judge.js";
import { README_RUN_BODY } from "../fixtures.js";
import { runEnd, startTestService, type TestService } from "./helpers.js";

const CELL = "so101-b";
const log = process.env.ASSAY_TEST_LOG ? (line: string) => console.log(line) : undefined;
const JUDGE_ERROR_RATE = 0.25;
type Json = Record<string, any>;

// Success (every stage reached, as the simulated world judges it) needs the cube lifted and on the
// left half of the table: the layout's y draw makes about half the episodes succeed, so both answers occur.
// Episodes of a task judged by a person run until the robot has stood idle for 5 s (the idle end) or
// max_duration_s runs out (no instrument ends them early), so the runs are kept small.
const JUDGED_TASK = {
  name: "pick-cube-left-judged",
  initial_conditions: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0], tol_mm: 5, randomize: { y_mm: 40 } } },
  success_predicates: [{ judged: "operator.success" }],
  stages: [{ lifted: "pose(cube).z > 0.06" }, { left: "pose(cube).y > 0.0" }],
  instructions: { sampled_per_episode: ["pick up the cube"] },
};

describe("judge endpoint: a success classifier checked against people (simulated cell, simulated judge)", function () {
  this.timeout(600_000);
  let service: TestService;
  let operator: SimOperator;
  /** What a test wants told of each label request the operator sees (the station API's words). */
  let onLabelRequest: ((attention: Json) => void) | undefined;
  let judge: SimJudge;
  let judgeUrl: string;
  let rev: string;
  let operatorKey: string;
  const json = async (response: Response, status: number): Promise<Json> => {
    const body = (await response.json()) as Json;
    assert.equal(response.status, status, JSON.stringify(body));
    return body;
  };
  const runBody = (extra: Json) => ({
    ...README_RUN_BODY, task: rev, perturbation: { seed: 20261127 }, ...extra,
  });

  before(async () => {
    service = await startTestService({ cells: [CELL], simEngine: "kinematic", simResets: "operator", simLabelTimeoutS: 120 });
    operatorKey = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin", "runs:read", "streams:read"], new Date())).secret;
    operator = new SimOperator({
      baseUrl: service.coordinator.baseUrl, apiKey: operatorKey, seed: 7, delayMs: { min: 150, max: 300 }, errorRate: 0,
      onLabelRequest: (cellId, attention) => cellId === CELL && onLabelRequest?.(attention),
      setSceneWrong: (cellId) => service.fleet!.misplaceNextScene(cellId), groundTruth: (cellId) => service.fleet!.groundTruth(cellId), log,
    });
    operator.start();
    judge = new SimJudge({ seed: 11, errorRate: JUDGE_ERROR_RATE, groundTruth: (cellId) => service.fleet!.groundTruth(cellId), log });
    judgeUrl = await judge.start();
    // A frozen revision, so the runs below have fixed episode seeds (a pilot's seed is random).
    const task = await json(await service.api("/v1/tasks", { method: "POST", json: JUDGED_TASK }), 201);
    const pilot = await json(await service.api(`/v1/tasks/${task.id}/pilot`, { method: "POST", json: { robot: "so101@latest", episodes: 1 } }), 200);
    await runEnd(service, pilot.run_id);
    rev = (await json(await service.api(`/v1/tasks/${task.id}/freeze`, { method: "POST" }), 200)).rev;
  });

  after(async () => {
    await operator?.stop();
    await judge?.stop();
    await service?.stop();
  });

  it("refuses a judge for a task no person judges, a judge that does not answer, and a malformed judge field", async () => {
    const instruments = await json(await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, judge: { url: judgeUrl } } }), 422);
    assert.equal(instruments.error.code, "contract_validation_failed");
    assert.match(instruments.error.message, /judge: task pick-cube@v1 has no success predicate judged by a person \(operator\.success\)/);

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const deadUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/judge`;
    await new Promise((resolve) => closed.close(resolve));
    const dead = await json(await service.api("/v1/runs", { method: "POST", json: runBody({ episodes: 2, judge: { url: deadUrl } }) }), 422);
    assert.equal(dead.error.code, "contract_validation_failed");
    assert.match(dead.error.message, /judge: pre-flight of ".*" failed: could not reach the judge at .*: connection refused/);

    judge.failNext(1);
    const failing = await json(await service.api("/v1/runs", { method: "POST", json: runBody({ episodes: 2, judge: { url: judgeUrl } }) }), 422);
    assert.match(failing.error.message, /answered HTTP 503;/);
    assert.equal(failing.error.message.includes("on purpose"), false, "the body a URL answered is not echoed to the customer");

    const threshold = await json(await service.api("/v1/runs", { method: "POST", json: runBody({ episodes: 2, judge: { url: judgeUrl, confidence_threshold: 2 } }) }), 422);
    assert.equal(threshold.error.code, "contract_validation_failed");
    assert.match(threshold.error.message, /judge\.confidence_threshold/);
    assert.match(threshold.error.message, /from 0 to 1/);
  });

  it("reports kappa against the simulated operator on the audit sample, within its interval of the configured error rate", async () => {
    const episodes = 8;
    const before = judge.verdicts.length;
    const created = await json(await service.api("/v1/runs", {
      method: "POST", json: runBody({ episodes, judge: { url: judgeUrl, audit_fraction: 1, confidence_threshold: 0.5 } }),
    }), 201);
    // What the station is told while a label waits: why a person judges (audit), never what the judge said.
    // Each label request as the simulated operator read it from the station API before judging it.
    const scenes: Json[] = [];
    onLabelRequest = (attention) => scenes.push(attention.scene);
    const { run } = await runEnd(service, created.id, { deadlineMs: 540_000 }).finally(() => (onLabelRequest = undefined));
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
    assert.ok(scenes.length > 0, "a label wait was seen");
    for (const scene of scenes) {
      assert.equal(scene.review, "audit");
      assert.equal(JSON.stringify(scene).includes("confidence"), false, "the station is not told the judge's verdict");
    }
    const result = await json(await service.api(`/v1/runs/${created.id}/result`), 200);
    const verdicts = judge.verdicts.slice(before);
    assert.equal(verdicts.length, episodes, "the judge saw every episode once");

    // Every episode was audited: the person (no errors) decided each one, and the judge's verdicts are compared.
    assert.equal(result.n, episodes);
    assert.equal(result.labels.judged_by, "human");
    assert.equal(result.labels.labelled, episodes);
    const section = result.labels.judge;
    assert.equal(section.asked, episodes);
    assert.equal(section.audited, episodes);
    assert.equal(section.decided, 0);
    assert.equal(section.failed, 0);
    const expected = { both_success: 0, judge_success_human_failure: 0, judge_failure_human_success: 0, both_failure: 0 };
    for (const v of verdicts) {
      if (v.success && v.truth) expected.both_success++;
      else if (v.success) expected.judge_success_human_failure++;
      else if (v.truth) expected.judge_failure_human_success++;
      else expected.both_failure++;
    }
    assert.deepEqual(section.agreement.confusion, expected);
    assert.equal(section.agreement.n, episodes);
    assert.equal(section.agreement.method, "cohen-kappa-fleiss-cohen-everitt-1969");

    // The kappa a judge wrong with probability e implies against a person who is never wrong, at the
    // realized share of successes pi: po = 1 - e; the judge says success with q = pi(1 - e) + (1 - pi)e.
    const pi = verdicts.filter((v) => v.truth).length / verdicts.length;
    assert.ok(pi > 0 && pi < 1, `both outcomes occur (share of successes ${pi})`);
    const e = JUDGE_ERROR_RATE;
    const q = pi * (1 - e) + (1 - pi) * e;
    const pe = q * pi + (1 - q) * (1 - pi);
    const expectedKappa = (1 - e - pe) / (1 - pe);
    const [lo, hi] = section.agreement.kappa_ci95 as [number, number];
    assert.ok(lo <= section.agreement.cohen_kappa && section.agreement.cohen_kappa <= hi, JSON.stringify(section.agreement));
    assert.ok(lo <= expectedKappa && expectedKappa <= hi, `kappa ${section.agreement.cohen_kappa} [${lo}, ${hi}] should hold ${expectedKappa.toFixed(3)} (e = ${e}, pi = ${pi.toFixed(3)})`);

    // Each episode shows the judge's verdict beside the person's label that decided it.
    const listed = (await json(await service.api(`/v1/runs/${created.id}/episodes`), 200)).data as Json[];
    assert.ok(listed.every((ep) => ep.judged_by === "human" && ep.judge.audit === true && typeof ep.judge.success === "boolean"), JSON.stringify(listed[0]));
  });

  it("lets the judge decide confident verdicts alone, and sends unsure ones and a failing judge's to a person", async () => {
    const episodes = 3;
    const before = judge.verdicts.length;
    const created = await json(await service.api("/v1/runs", {
      method: "POST", json: runBody({ episodes, perturbation: { seed: 77 }, judge: { url: judgeUrl, audit_fraction: 0, confidence_threshold: 0.78 } }),
    }), 201);
    judge.failNext(1); // the first episode's call fails (HTTP 503) mid-run: a person judges it
    const { run } = await runEnd(service, created.id, { deadlineMs: 300_000 });
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
    const result = await json(await service.api(`/v1/runs/${created.id}/result`), 200);
    const verdicts = judge.verdicts.slice(before);
    const unsure = verdicts.filter((v) => v.confidence < 0.78).length;
    assert.equal(result.n, episodes);
    assert.equal(result.labels.judge.failed, 1);
    assert.equal(result.labels.judge.audited, 0);
    assert.equal(result.labels.judge.low_confidence, unsure);
    assert.equal(result.labels.judged, episodes - 1 - unsure, "the judge decided its confident verdicts alone");
    assert.equal(result.labels.labelled, 1 + unsure, "a person judged the failed call and the unsure verdicts");
    assert.equal(result.labels.judge.agreement.n, 0, "nothing audited: no agreement figure from a biased sample");
    assert.equal(result.labels.judged_by, result.labels.judged === episodes ? "judge" : "mixed");
    const listed = (await json(await service.api(`/v1/runs/${created.id}/episodes`), 200)).data as Json[];
    const failed = listed.filter((ep) => ep.judge?.error);
    assert.equal(failed.length, 1);
    assert.match(failed[0].judge.error, /answered HTTP 503/);
    assert.equal(failed[0].judged_by, "human");
    assert.equal(listed.filter((ep) => ep.judged_by === "judge").length, result.labels.judged, "the episodes the judge decided alone say so");
  });
});
