/**
 * Safety end to end: a real coordinator and a real cell-agent process on loopback. An endpoint
 * policy slower than its latency budget halts the run with policy_endpoint_timeout; a policy that
 * jumps is stopped by the safety envelope (failure cluster safety_limit) and the cell goes on; an e-stop
 * mid-run halts the run with estop_triggered keeping its partial result, enqueues the
 * estop.triggered webhook, and the cell takes no work until a technician resets it. The e-stop's
 * latency bound is estop-latency.spec.ts's (alone, in SOLO_FILES); none here is tight enough for a
 * busy machine to blur.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startEndpointPolicyServer, type EndpointPolicyServer } from "../../simulators/policies/endpoint-server.js";
import { README_RUN_BODY } from "../fixtures.js";
import { eventually } from "../support/eventually.js";
import { runEnd, startTestService, type TestService } from "./helpers.js";

type Json = Record<string, any>;
const CELL = "so101-b";

describe("safety (integration)", function () {
  this.timeout(180_000);
  let service: TestService;
  let endpoint: EndpointPolicyServer | undefined;

  const control = async (route: string): Promise<Json> => {
    const { port } = JSON.parse(readFileSync(join(service.dataDir, "cells", CELL, "agent", "control.json"), "utf8")) as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}${route}`, { method: "POST" });
    return (await response.json()) as Json;
  };
  const getRun = async (id: string): Promise<Json> => (await (await service.api(`/v1/runs/${id}`)).json()) as Json;
  const submit = async (body: object): Promise<string> => {
    const response = await service.api("/v1/runs", { method: "POST", json: body });
    const run = (await response.json()) as Json;
    assert.equal(response.status, 201, JSON.stringify(run));
    return run.id as string;
  };
  const episodes = async (runId: string) =>
    await service.coordinator.db.prepare("SELECT id, status, cell_id, interruptions FROM episodes WHERE run_id = ? ORDER BY idx").all(runId) as Array<{ id: string; status: string; cell_id: string | null; interruptions: string }>;
  const stoppedRun = async (id: string): Promise<Json> => {
    const { status, run } = await runEnd(service, id);
    assert.equal(status, "stopped", JSON.stringify(run.status_detail));
    return run;
  };

  before(async () => {
    service = await startTestService({ cells: [CELL] });
  });

  after(async () => {
    await endpoint?.close();
    await service?.stop();
  });

  it("halts a run with policy_endpoint_timeout when the endpoint policy keeps missing its latency budget", async () => {
    endpoint = await startEndpointPolicyServer({ model: "so101", delayMs: 80 });
    const runId = await submit({
      ...README_RUN_BODY, episodes: 3,
      policy: { type: "endpoint", url: endpoint.url, latency_budget_ms: 20, action_space: { type: "joint_position", dim: 6 }, observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] } },
    });
    const run = await stoppedRun(runId);
    assert.equal(run.status_detail.code, "policy_endpoint_timeout", JSON.stringify(run.status_detail));
    assert.match(run.status_detail.message, /latency_budget_ms/);
    const interrupted = await eventually("the interruption to be recorded", async () => {
      const hit = (await episodes(runId)).flatMap((e) => JSON.parse(e.interruptions) as Json[]).find((i) => i.reason === "policy_endpoint_timeout");
      return hit;
    });
    assert.match(interrupted.detail, /5 times in a row/);
    assert.ok((await episodes(runId)).every((e) => e.status !== "pending" && e.status !== "running"), JSON.stringify(await episodes(runId)));
    await endpoint.close();
    endpoint = undefined;
  });

  it("stops a policy that keeps pushing against the safety envelope with failure cluster safety_limit; the run completes and the cell takes the next run", async () => {
    endpoint = await startEndpointPolicyServer({ model: "so101", jumpRad: 1.5 });
    const runId = await submit({
      ...README_RUN_BODY, episodes: 2,
      policy: { type: "endpoint", url: endpoint.url, latency_budget_ms: 2000, action_space: { type: "joint_position", dim: 6 }, observation_contract: { cameras: ["top"], state: ["joint_positions"] } },
    });
    const { status, run } = await runEnd(service, runId);
    assert.equal(status, "completed", JSON.stringify(run.status_detail));
    const result = (await (await service.api(`/v1/runs/${runId}/result`)).json()) as Json;
    assert.equal(result.n, 2, JSON.stringify(result));
    assert.equal(result.success_rate, 0);
    assert.deepEqual(result.failure_clusters, { safety_limit: 2 });
    await endpoint.close();
    endpoint = undefined;
    // The cell was never stopped: it runs the next run.
    const next = await submit({ ...README_RUN_BODY, episodes: 1 });
    assert.equal((await runEnd(service, next, { deadlineMs: 120_000 })).status, "completed");
  });

  it("an e-stop mid-run stops the run with estop_triggered, keeps partial results, sends the webhook, and holds the cell until reset", async () => {
    const runId = await submit({ ...README_RUN_BODY, episodes: 20 });
    // Wait for at least one finished episode and the next one running on the cell.
    await eventually("one episode done and the next running", async () => {
      const rows = await episodes(runId);
      return rows.some((e) => e.status === "done") && rows.some((e) => e.status === "running") ? true : undefined;
    });
    const pressed = await control("/estop");
    assert.equal(pressed.pressed, true);

    const run = await stoppedRun(runId);
    assert.equal(run.status_detail.code, "estop_triggered");
    assert.match(run.status_detail.message, new RegExp(`^${CELL} emergency stop at .+; latency [0-9.]+ ms; partial results kept$`));

    // The interrupted episode is recorded as an interruption with reason estop, then cancelled with its run.
    await eventually("the estop interruption", async () => (await episodes(runId)).some((e) => (JSON.parse(e.interruptions) as Json[]).some((i) => i.reason === "estop" && i.cell === CELL)) || undefined);
    const rows = await eventually("no open episodes", async () => {
      const all = await episodes(runId);
      return all.every((e) => e.status === "done" || e.status === "cancelled") ? all : undefined;
    });
    const done = rows.filter((e) => e.status === "done").length;
    assert.ok(done >= 1);

    const result = await service.api(`/v1/runs/${runId}/result`);
    const body = (await result.json()) as Json;
    assert.equal(body.error.code, "estop_triggered", JSON.stringify(body));
    assert.equal(result.status, 409);
    assert.equal(body.error.partial_result.n, done, "n counts the episodes finished before the e-stop");

    const hooks = await service.coordinator.db.prepare("SELECT data FROM webhook_events WHERE type = 'estop.triggered'").all() as Array<{ data: string }>;
    assert.equal(hooks.length, 1);
    const hook = JSON.parse(hooks[0].data) as Json;
    assert.equal(hook.run_id, runId);
    assert.equal(hook.cell, CELL);
    assert.ok(hook.latency_ms >= 0 && hook.latency_ms < 1000, `latency ${hook.latency_ms}`);
    assert.ok(!Number.isNaN(Date.parse(hook.at)));

    // Released but not reset: the cell stays e-stopped and gets no work.
    await control("/estop/release");
    const next = await submit({ ...README_RUN_BODY, episodes: 2 });
    // An absence cannot be awaited: give the cell 2.5 heartbeat periods (1 s each) and the scheduler
    // as many safety passes to wrongly take the work, then check that it did not.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.ok((await episodes(next)).every((e) => e.status === "pending" && e.cell_id === null), JSON.stringify(await episodes(next)));
    assert.equal((await getRun(next)).status, "queued");

    // The technician's reset: the cell takes the work.
    const reset = await control("/reset");
    assert.equal(reset.state, "idle", JSON.stringify(reset));
    assert.equal((await runEnd(service, next, { deadlineMs: 120_000 })).status, "completed");
  });
});
