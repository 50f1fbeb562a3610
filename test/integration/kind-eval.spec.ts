/**
 * Suites, kind `eval`, CI gates and verification reports end to end on the simulated fleet.
 */
import assert from "node:assert/strict";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, type TestService } from "./helpers.js";

const policy = (image: string) => ({
  type: "container",
  image,
  action_space: { type: "joint_position", dim: 6 },
  observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] },
});

async function json(response: Response, status: number): Promise<Record<string, any>> {
  assert.equal(response.status, status, await response.clone().text());
  return (await response.json()) as Record<string, any>;
}

describe("suites, eval, gates and reports on a simulated fleet", function () {
  this.timeout(400_000);
  let service: TestService;

  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  it("lists the frozen suites", async () => {
    const list = await json(await service.api("/v1/suites"), 200);
    const suite = list.data.find((s: any) => s.id === "tabletop-basics@1");
    assert.ok(suite, JSON.stringify(list));
    assert.equal(suite.object, "suite");
    assert.deepEqual(suite.tasks.map((t: any) => t.task), ["pick-cube@v1"]);
    assert.deepEqual(suite.environments, ["tabletop@1"]);
    assert.equal(typeof suite.perturbation_schedules[0].seed, "number");
    assert.ok(suite.frozen && suite.scoring.metric === "success_rate");
    await json(await service.api("/v1/suites/tabletop-basics"), 200);
    const missing = await json(await service.api("/v1/suites/nope@1"), 404);
    assert.equal(missing.error.code, "not_found");
  });

  it("validates eval's fields: unknown suite, a perturbation, leaderboard without opt-in", async () => {
    const body = { kind: "eval", suite: "tabletop-basics@1", robots: ["so101@3.11"], policy: policy("assay/ref-policy:expert") };
    assert.equal((await json(await service.api("/v1/runs", { method: "POST", json: { ...body, suite: "nope@1" } }), 404)).error.code, "not_found");
    assert.match((await json(await service.api("/v1/runs", { method: "POST", json: { ...body, perturbation: { seed: 1 } } }), 422)).error.message, /suite fixes/);
    assert.equal((await json(await service.api("/v1/runs", { method: "POST", json: { ...body, publish: "leaderboard" } }), 403)).error.code, "publish_forbidden");
    assert.match((await json(await service.api("/v1/runs", { method: "POST", json: { ...body, robots: undefined } }), 422)).error.message, /requires robots/);
  });

  it("gates a release: the first check passes and becomes the baseline, the next is judged against it", async () => {
    const gate = await json(await service.api("/v1/gates", {
      method: "POST",
      json: { suite: "tabletop-basics@1", repo: "acme/picker", ref_pattern: "refs/heads/main", policy: policy("assay/ref-policy:expert"), robots: ["so101@3.11"], baseline: "last_pass" },
    }), 201);
    assert.equal(gate.object, "gate");
    assert.match(gate.id, /^gate_/);
    const wrongRef = await json(await service.api(`/v1/gates/${gate.id}/checks`, { method: "POST", json: { ref: "refs/heads/dev" } }), 422);
    assert.match(wrongRef.error.message, /does not match/);

    const first = await json(await service.api(`/v1/gates/${gate.id}/checks`, { method: "POST", json: { ref: "refs/heads/main", commit: "a1b2c3d" } }), 201);
    assert.equal(first.status, "pending");
    const { run } = await runEnd(service, first.run_id);
    assert.equal(run.kind, "eval");
    assert.equal(run.status, "completed");
    assert.equal(run.result.suite, "tabletop-basics@1");
    assert.equal(run.result.units.length, 1);
    assert.equal(run.result.units[0].result.n, 12);
    assert.equal(run.result.scores[0].robot, "so101@3.11");
    assert.equal(run.result.scores[0].n, 12);
    const decided = await json(await service.api(`/v1/gates/${gate.id}/checks/${first.id}`), 200);
    assert.equal(decided.status, "passed");
    assert.equal(decided.regression, null);
    assert.equal(decided.baseline_run_id, null);

    const second = await json(await service.api(`/v1/gates/${gate.id}/checks`, {
      method: "POST", json: { ref: "refs/heads/main", commit: "b2c3d4e", policy: policy("assay/ref-policy:novice") },
    }), 201);
    await runEnd(service, second.run_id);
    const verdict = await json(await service.api(`/v1/gates/${gate.id}/checks/${second.id}`), 200);
    assert.equal(verdict.baseline_run_id, first.run_id);
    assert.ok(verdict.regression, JSON.stringify(verdict));
    assert.equal(verdict.status, verdict.regression.regressed ? "failed" : "passed");
    assert.equal(verdict.regression.units.length, 1);

    // The eval's report: per-unit citation, realized schedule from the suite.
    const report = await json(await service.api(`/v1/runs/${first.run_id}/report`), 200);
    assert.equal(report.run_kind, "eval");
    assert.equal(report.perturbation_schedule.requested[0].seed, 1001);
    assert.equal(report.perturbation_schedule.realized.length, 12);
  });

  it("reports a kind run: citation, stages, instructions, out-of-scope verbatim, and a PDF; pilots have no report", async () => {
    const created = await json(await service.api("/v1/runs", {
      method: "POST",
      json: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", episodes: 3, policy: policy("assay/ref-policy:expert"), perturbation: { lighting: ["dim", "bright"], seed: 5 } },
    }), 201);
    const early = await service.api(`/v1/runs/${created.id}/report`);
    if (early.status !== 200) assert.equal(early.status, 404);
    await runEnd(service, created.id);
    const report = await json(await service.api(`/v1/runs/${created.id}/report`), 200);
    assert.equal(report.object, "report");
    assert.equal(report.kind, "verification");
    assert.equal(report.run_id, created.id);
    assert.deepEqual(Object.keys(report.result).sort(), ["ci95", "interval_method", "n", "success_rate"]);
    assert.equal(report.result.n, 3);
    // The citation a paper prints (docs/papers.md): the run, its date, the frozen task revision, robot and environment, the rate with n and interval, the interval's method.
    assert.match(report.citation, new RegExp(`^Assay evaluation ${created.id} \\(\\d{4}-\\d{2}-\\d{2}\\): task pick-cube@v1 \\(frozen revision\\); robot so101@3\\.11; environment tabletop@1; success \\d+\\.\\d% \\[\\d+\\.\\d%, \\d+\\.\\d%\\] \\(n = 3\\); 95% intervals, beta-binomial posterior over cells\\.$`));
    assert.equal(report.resolved_pins.robot, "so101@3.11");
    const task = await json(await service.api("/v1/tasks/pick-cube@v1"), 200);
    assert.deepEqual(report.out_of_scope, task.envelope.out_of_scope);
    assert.equal(report.perturbation_schedule.realized.length, 3);
    for (const e of report.perturbation_schedule.realized) assert.ok(["dim", "bright"].includes(e.lighting), JSON.stringify(e));
    assert.equal(report.instructions.held_out.n, 0);
    assert.deepEqual(report.instructions.held_out.by_instruction, {});
    assert.ok(report.instructions.sampled.n <= 3);
    assert.equal(typeof report.stages, "object");
    assert.equal(report.interventions.mode, "none");
    assert.equal(report.interventions.count, 0);
    assert.equal(report.interventions.unassisted.n, 3);
    assert.deepEqual(report.interventions.assisted, report.interventions.unassisted);
    assert.equal(report.cells.by_cell.reduce((sum: number, c: any) => sum + c.n, 0), 3);
    assert.equal(report.pdf_url, `${service.coordinator.baseUrl}/v1/runs/${created.id}/report?format=pdf`);
    const pdf = await service.api(`/v1/runs/${created.id}/report?format=pdf`);
    assert.equal(pdf.status, 200);
    assert.equal(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString(), "%PDF-");
    assert.equal((await json(await service.api(`/v1/runs/${created.id}/report?format=docx`), 422)).error.code, "contract_validation_failed");

    const draft = await json(await service.api("/v1/tasks", {
      method: "POST",
      json: { name: "report-pilot-check", initial_conditions: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0], tol_mm: 5 } }, success_predicates: [{ lifted: "pose(cube).z > 0.06 for 1.0s" }] },
    }), 201);
    const pilot = await json(await service.api(`/v1/tasks/${draft.id}/pilot`, { method: "POST", json: { robot: "so101@3.11", episodes: 1 } }), 200);
    const refused = await json(await service.api(`/v1/runs/${pilot.run_id}/report`), 404);
    assert.match(refused.error.message, /pilot/);
  });
});
