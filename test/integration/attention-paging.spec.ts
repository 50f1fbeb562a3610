/**
 * People are paged (issue 26 item 6) against a real simulated cell in operator reset mode: a reset left
 * waiting past a small `attentionPageMs` raises exactly one `cell.attention_needed` to a webhook receiver
 * of the operator account, and none to a customer's endpoint subscribed to the same event; the run's
 * report then carries the person's time.
 */
import assert from "node:assert/strict";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { README_RUN_BODY } from "../fixtures.js";
import { eventually } from "../support/eventually.js";
import { runEnd, startTestService, type TestService } from "./helpers.js";
import { startReceiver, type Receiver } from "./webhook-receiver.js";

const CELL = "so101-b";
type Json = Record<string, any>;

describe("paging: a cell waiting on a person raises cell.attention_needed to the operator account", function () {
  this.timeout(120_000);
  let service: TestService;
  let operatorKey: string;
  let ops: Receiver;
  let customer: Receiver;
  const asOperator = (path: string, init: RequestInit & { json?: unknown } = {}) =>
    service.api(path, { ...init, headers: { authorization: `Bearer ${operatorKey}` } });
  const events = (receiver: Receiver, type: string) =>
    receiver.received.map((r) => JSON.parse(r.rawBody) as Json).filter((e) => e.type === type);

  before(async () => {
    service = await startTestService({ cells: [CELL], simEngine: "kinematic", simResets: "operator", attentionPageMs: 300 });
    operatorKey = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin", "runs:read", "streams:read"], new Date())).secret;
    ops = await startReceiver(() => 200);
    customer = await startReceiver(() => 200);
  });

  after(async () => {
    await service?.stop();
    await ops?.close();
    await customer?.close();
  });

  it("pages the operator account once per wait, never a customer, and the report counts the person's time", async () => {
    const opsEndpoint = await asOperator("/v1/webhooks", { method: "POST", json: { url: ops.url, events: ["cell.attention_needed"] } });
    assert.equal(opsEndpoint.status, 201, await opsEndpoint.clone().text());
    // The customer subscribes to the event too: it still never receives the fleet's cell events.
    const customerEndpoint = await service.api("/v1/webhooks", { method: "POST", json: { url: customer.url, events: ["cell.attention_needed", "run.completed"] } });
    assert.equal(customerEndpoint.status, 201, await customerEndpoint.clone().text());

    const created = await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 1 } });
    assert.equal(created.status, 201, await created.clone().text());
    const runId = ((await created.json()) as Json).id as string;
    const ended = runEnd(service, runId);

    // Nobody answers the reset: past 300 ms the operator account is paged.
    await ops.waitFor((received) => received.some((r) => (JSON.parse(r.rawBody) as Json).type === "cell.attention_needed"));
    const [page] = events(ops, "cell.attention_needed");
    const cell = await eventually("the cell's attention", async () => {
      const body = (await (await asOperator(`/v1/cells/${CELL}`)).json()) as Json;
      return body.attention?.kind === "reset" ? body : undefined;
    }, { intervalMs: 50 });
    assert.equal(cell.state, "awaiting_reset");
    assert.deepEqual(Object.keys(page.data).sort(), ["cell", "episode_id", "kind", "needs", "since", "waiting_s"]);
    assert.equal(page.data.cell, CELL);
    assert.equal(page.data.kind, "reset");
    assert.equal(page.data.episode_id, cell.attention.episode_id);
    assert.equal(page.data.since, cell.attention.since);
    assert.match(page.data.needs, /set the scene/);
    assert.ok(page.data.waiting_s >= 0.3, `waiting_s ${page.data.waiting_s} counts from when the cell began waiting`);

    // The person answers; the run completes, and the customer's run.completed arrives after the page was queued.
    const confirmed = await asOperator(`/v1/cells/${CELL}/scene-ready`, { method: "POST", json: { episode_id: cell.attention.episode_id } });
    assert.equal(confirmed.status, 200, await confirmed.clone().text());
    const end = await ended;
    assert.equal(end.status, "completed");
    await customer.waitFor((received) => received.some((r) => (JSON.parse(r.rawBody) as Json).type === "run.completed"));
    assert.deepEqual(events(customer, "cell.attention_needed"), [], "a customer's endpoint never receives the fleet's cell events");

    // Exactly one page for the one wait: one event in the outbox, one delivery, to the operator's endpoint.
    const outbox = await service.coordinator.db.prepare(
      `SELECT e.account_id, d.endpoint_id FROM webhook_events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id WHERE e.type = 'cell.attention_needed'`,
    ).all() as Array<{ account_id: string; endpoint_id: string }>;
    assert.deepEqual(outbox, [{ account_id: CATALOG_ACCOUNT_ID, endpoint_id: ((await opsEndpoint.json()) as Json).id }]);
    assert.equal(events(ops, "cell.attention_needed").length, 1);

    // The report carries the person's time on the reset.
    const report = await service.api(`/v1/runs/${runId}/report`);
    assert.equal(report.status, 200, await report.clone().text());
    const operatorTime = ((await report.json()) as Json).operator_time;
    assert.equal(operatorTime.episodes, 1);
    assert.equal(operatorTime.reset.count, 1);
    assert.ok(operatorTime.reset.s_total >= 0.3, `reset seconds ${operatorTime.reset.s_total} include the wait that paged`);
    assert.equal(operatorTime.reset.s_mean, operatorTime.reset.s_total);
    assert.equal(operatorTime.label.count, 0);
    const pdf = await service.api(`/v1/runs/${runId}/report?format=pdf`);
    assert.equal(pdf.status, 200);
    assert.equal(pdf.headers.get("content-type"), "application/pdf");
  });
});
