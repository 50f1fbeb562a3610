/**
 * Money end to end: a real coordinator (HTTP on port 0, gRPC, SQLite in a temp dir) and a scripted
 * cell agent over real gRPC. Quotes, a queue window running out, a max_budget_usd stop mid-run
 * with its partial result, a completed run's webhook, a hard monthly budget halting running work,
 * and usage adding up exactly to the runs' results.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { roundCents, roundHours } from "../../coordinator/runs/meters.js";
import { betaBinomialRate } from "../../coordinator/stats/beta-binomial-rate.js";
import { TEST_ADMIN_KEY, waitForRunEnd } from "./helpers.js";
import { ScriptedAgent } from "../support/scripted-agent.js";
import { startReceiver, type Receiver } from "./webhook-receiver.js";
import { testStoreOptions } from "../support/test-database.js";

const RUN_BODY = {
  kind: "run",
  robot: "so101@3.11",
  environment: "tabletop@1",
  task: "pick-cube@v1",
  episodes: 5,
  policy: {
    type: "container",
    image: "assay/ref-policy:expert",
    action_space: { type: "joint_position", dim: 6 },
    observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] },
  },
};
/** so101@3.10 sits on so101-a, which no test connects: such runs stay queued. */
const UNSERVED_BODY = { ...RUN_BODY, robot: "so101@3.10", episodes: 20 };

type Json = Record<string, any>;

describe("money: quotes, budgets, usage (integration)", function () {
  this.timeout(60_000);
  let dir: string;
  let coordinator: RunningCoordinator;
  let agent: ScriptedAgent;
  let receiver: Receiver;

  const api = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${TEST_ADMIN_KEY}`);
    if (init.json !== undefined) headers.set("content-type", "application/json");
    return fetch(coordinator.baseUrl + path, { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
  };
  const json = async (res: Response, status: number): Promise<Json> => {
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body));
    return body;
  };
  const untilStatus = async (runId: string, status: string) => {
    const end = await waitForRunEnd(coordinator.baseUrl, TEST_ADMIN_KEY, runId);
    assert.equal(end.status, status, JSON.stringify(end.events));
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-money-"));
    coordinator = await startCoordinator(compileCoordinatorOptions({
      port: 0, grpcPort: 0, dataDir: dir, apiKey: TEST_ADMIN_KEY, ...(await testStoreOptions(dir)),
      rateLimits: { general: { perS: 1000, burst: 1000 }, submit: { perS: 1000, burst: 1000 } },
      queueWindowsMs: { burst: 300 }, queueCheckIntervalMs: 50,
      webhooks: { retryBaseMs: 20, pollMs: 20 },
      webhooksAllowLoopback: true,
    }));
    agent = new ScriptedAgent(coordinator.grpcAddress, await coordinator.enrollCell("so101-b", "so101"), "so101-b");
    await agent.connect();
    receiver = await startReceiver(() => 200);
    await json(await api("/v1/webhooks", { method: "POST", json: { url: receiver.url, events: ["run.completed", "episode.failed"] } }), 201);
  });

  after(async () => {
    agent?.close();
    await coordinator?.stop();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("quotes a run body (both meters, upper-bound estimates) and checks the quote a submission names", async () => {
    const quote = await json(await api("/v1/quote", { method: "POST", json: UNSERVED_BODY }), 200);
    assert.equal(quote.object, "quote");
    assert.match(quote.id, /^quote_/);
    assert.equal(Date.parse(quote.expires) - Date.parse(quote.created), 15 * 60_000);
    assert.equal(quote.n, 20);
    // 20 x (20 s max duration + 10 s reset allowance) = 600 s; (18 + 4) $/h x 1.0 (standard).
    assert.equal(quote.robot_hours, 0.166667);
    assert.equal(quote.environment_hours, 0.166667);
    assert.equal(quote.cost_usd, 3.67);
    assert.deepEqual(quote.price, {
      tier: "soak", environment_class: "standard", priority: "standard", robot_hour_usd: 18, environment_hour_usd: 4,
      priority_multiplier: 1, episode_estimate_s: 30, max_duration_s: 20, reset_allowance_s: 10,
    });
    assert.deepEqual(quote.pins, { robot: "so101@3.10", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" });
    // Quoting stores no run.
    assert.equal((await json(await api("/v1/runs"), 200)).data.length, 0);

    const other = await json(await api("/v1/runs", { method: "POST", json: { ...UNSERVED_BODY, episodes: 21, quote_id: quote.id } }), 422);
    assert.equal(other.error.code, "contract_validation_failed");
    assert.match(other.error.message, /different run body/);
    const unknown = await json(await api("/v1/runs", { method: "POST", json: { ...UNSERVED_BODY, quote_id: "quote_nope" } }), 422);
    assert.equal(unknown.error.code, "contract_validation_failed");

    const run = await json(await api("/v1/runs", { method: "POST", json: { ...UNSERVED_BODY, quote_id: quote.id } }), 201);
    assert.equal(run.status, "queued");
    assert.ok(await coordinator.halt(run.id, "queue_timeout", "test cleanup"));

    await coordinator.db.prepare("UPDATE quotes SET expires = ? WHERE id = ?").run(new Date(Date.now() - 1000).toISOString(), quote.id);
    const expired = await json(await api("/v1/runs", { method: "POST", json: { ...UNSERVED_BODY, quote_id: quote.id } }), 409);
    assert.equal(expired.error.code, "quote_expired");
  });

  it("halts a run that waited past its tier's queue window with queue_timeout", async () => {
    const run = await json(await api("/v1/runs", { method: "POST", json: { ...UNSERVED_BODY, priority: "burst" } }), 201);
    await untilStatus(run.id, "stopped");
    const view = await json(await api(`/v1/runs/${run.id}`), 200);
    assert.equal(view.status_detail.code, "queue_timeout");
    const result = await json(await api(`/v1/runs/${run.id}/result`), 408);
    assert.equal(result.error.code, "queue_timeout");
    assert.equal(result.error.partial_result.n, 0);
  });

  it("stops a run at max_budget_usd mid-run and keeps the partial result of the episodes that ran", async () => {
    const run = await json(await api("/v1/runs", { method: "POST", json: { ...RUN_BODY, max_budget_usd: 0.4 } }), 201);
    const stopped = untilStatus(run.id, "stopped");
    // An episode may cost up to $0.18 (30 s at $22/h): after one ($0.15 metered) a second fits,
    // after two ($0.29) a third does not.
    await agent.play("success");
    const failed = await agent.play("failure");
    await stopped;

    const view = await json(await api(`/v1/runs/${run.id}`), 200);
    assert.equal(view.status, "stopped");
    assert.equal(view.status_detail.code, "budget_exceeded");
    assert.match(view.status_detail.message, /max_budget_usd of \$0\.40/);
    assert.equal(view.result.n, 2);
    assert.equal(view.result.success_rate, 0.5);
    assert.deepEqual(view.result.ci95, betaBinomialRate(view.result.cells.by_cell.map((c: { successes: number; n: number }) => ({ k: c.successes, n: c.n }))).ci);
    assert.equal(view.result.robot_hours, 0.013333);
    assert.equal(view.result.cost_usd, 0.29);
    assert.ok(view.result.cost_usd <= 0.4);

    const body = await json(await api(`/v1/runs/${run.id}/result`), 402);
    assert.equal(body.error.code, "budget_exceeded");
    assert.equal(body.error.run_id, run.id);
    assert.deepEqual(body.error.partial_result, view.result);

    const statuses = await coordinator.db.prepare("SELECT status, COUNT(*) AS n FROM episodes WHERE run_id = ? GROUP BY status ORDER BY status").all(run.id);
    assert.deepEqual(statuses, [{ status: "cancelled", n: 3 }, { status: "done", n: 2 }]);
    assert.equal(agent.pending().filter((m) => m.assignEpisode).length, 0);

    const [event] = await receiver.waitFor((r) => r.some((x) => JSON.parse(x.rawBody).type === "episode.failed"));
    const payload = JSON.parse(receiver.received.find((x) => JSON.parse(x.rawBody).type === "episode.failed")!.rawBody);
    assert.ok(event);
    assert.deepEqual(payload.data, { run_id: run.id, episode_id: failed.episodeId, index: 1, cluster: "grasp_slip", duration_s: 20 });
  });

  it("completes a run within its budget and sends run.completed with the result", async () => {
    const run = await json(await api("/v1/runs", { method: "POST", json: { ...RUN_BODY, episodes: 2, max_budget_usd: 5 } }), 201);
    const completed = untilStatus(run.id, "completed");
    await agent.play("success");
    await agent.play("success");
    await completed;
    const view = await json(await api(`/v1/runs/${run.id}`), 200);
    assert.deepEqual(await json(await api(`/v1/runs/${run.id}/result`), 200), view.result);
    await receiver.waitFor((r) => r.some((x) => JSON.parse(x.rawBody).type === "run.completed"));
    const event = JSON.parse(receiver.received.find((x) => JSON.parse(x.rawBody).type === "run.completed")!.rawBody);
    assert.equal(event.object, "event");
    assert.equal(event.data.run.id, run.id);
    assert.deepEqual(event.data.run.result, view.result);
  });

  it("a hard monthly budget halts running work (cancelling the held episode) and rejects new runs", async () => {
    assert.deepEqual(await json(await api("/v1/budgets", { method: "PUT", json: { monthly_usd: 100, hard: true } }), 200), { monthly_usd: 100, hard: true });
    const run = await json(await api("/v1/runs", { method: "POST", json: { ...RUN_BODY, episodes: 3 } }), 201);
    await agent.play("success");
    const held = await agent.next((m) => m.assignEpisode);
    await agent.started(held);

    // $0.29 + $0.29 + $0.15 used this month: a $0.50 hard budget is reached.
    assert.deepEqual(await json(await api("/v1/budgets", { method: "PUT", json: { monthly_usd: 0.5, hard: true, remaining_usd: 123 } }), 200), { monthly_usd: 0.5, hard: true });
    const cancel = await agent.next((m) => m.cancelEpisode);
    assert.equal(cancel.episodeId, held.episodeId);
    assert.match(cancel.reason, /^monthly_budget_exceeded: /);
    let view = await json(await api(`/v1/runs/${run.id}`), 200);
    assert.equal(view.status, "stopped");
    assert.equal(view.status_detail.code, "monthly_budget_exceeded");
    assert.equal(view.result.n, 1);

    // The cell finished the episode anyway: its robot time is recorded, the run stays stopped.
    await agent.finished(held, "success");
    view = await json(await api(`/v1/runs/${run.id}`), 200);
    assert.equal(view.status, "stopped");
    assert.equal(view.result.n, 2);
    assert.equal(view.result.cost_usd, 0.29);

    const rejected = await json(await api("/v1/runs", { method: "POST", json: RUN_BODY }), 402);
    assert.equal(rejected.error.code, "monthly_budget_exceeded");
    assert.match(rejected.error.message, /PUT \/v1\/budgets/);
  });

  it("usage of the month adds up exactly to the runs' results", async () => {
    const runs = (await json(await api("/v1/runs?limit=100"), 200)).data as Json[];
    const metered = runs.filter((r) => r.result && r.result.robot_hours > 0);
    assert.equal(metered.length, 3);
    const sum = (field: string) => metered.reduce((total, r) => total + r.result[field], 0);
    const period = new Date().toISOString().slice(0, 7);
    const usage = await json(await api(`/v1/usage?period=${period}`), 200);
    assert.deepEqual(usage, {
      object: "usage",
      period,
      robot_hours: { verify: 0, soak: roundHours(sum("robot_hours")) },
      env_hours: { bare: 0, standard: roundHours(sum("environment_hours")), replica: 0, "instrumented-replica": 0 },
      usd_total: roundCents(sum("cost_usd")),
      operator_reset_s: 0,
      operator_label_s: 0,
      budget: { monthly_usd: 0.5, hard: true, remaining_usd: 0 },
    });
    assert.equal(usage.usd_total, 0.87);
    assert.equal(usage.robot_hours.soak, 0.039999);

    assert.equal((await json(await api("/v1/usage"), 422)).error.code, "contract_validation_failed");
    assert.equal((await json(await api("/v1/usage?period=2026-13"), 422)).error.code, "contract_validation_failed");
    const empty = await json(await api("/v1/usage?period=2001-01"), 200);
    assert.equal(empty.usd_total, 0);
  });
});
