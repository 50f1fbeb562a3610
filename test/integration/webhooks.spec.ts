/**
 * Webhooks end to end: endpoints registered over /v1, events from the durable outbox delivered as
 * signed POSTs to a real receiver on loopback, retried with backoff until a 2xx, and resumed by a
 * restarted coordinator on the same data dir.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { DEFAULT_ACCOUNT_ID } from "../../coordinator/store/accounts-repo.js";
import { enqueueEvent } from "../../coordinator/webhooks/outbox.js";
import { verifySignature } from "../../coordinator/webhooks/signature.js";
import { TEST_ADMIN_KEY } from "./helpers.js";
import { startReceiver, type Receiver } from "./webhook-receiver.js";
import { testStoreOptions } from "../support/test-database.js";
import { transact } from "../../coordinator/store/tx.js";

type Json = Record<string, any>;

describe("webhooks (integration)", function () {
  this.timeout(30_000);
  let dir: string;
  let coordinator: RunningCoordinator | undefined;
  let receiver: Receiver | undefined;

  const start = async () => {
    coordinator = await startCoordinator(compileCoordinatorOptions({
      port: 0, grpcPort: 0, dataDir: dir, apiKey: TEST_ADMIN_KEY, webhooks: { retryBaseMs: 10, retryCapMs: 40, pollMs: 10 }, ...(await testStoreOptions(dir)),
      // The receiver listens on loopback.
      webhooksAllowLoopback: true,
    }));
    return coordinator;
  };
  const api = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${TEST_ADMIN_KEY}`);
    if (init.json !== undefined) headers.set("content-type", "application/json");
    return fetch(coordinator!.baseUrl + path, { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
  };
  const json = async (res: Response, status: number): Promise<Json> => {
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body));
    return body;
  };
  const idOf = (rawBody: string) => (JSON.parse(rawBody) as { id: string }).id;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "assay-webhooks-"));
  });

  afterEach(async () => {
    await coordinator?.stop();
    await receiver?.close();
    coordinator = undefined;
    receiver = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("registers, lists and deletes endpoints; the secret is shown once", async () => {
    await start();
    const created = await json(await api("/v1/webhooks", { method: "POST", json: { url: "https://hooks.example/assay", events: ["run.completed", "estop.triggered"], description: "CI" } }), 201);
    assert.equal(created.object, "webhook_endpoint");
    assert.match(created.id, /^we_/);
    assert.match(created.secret, /^whsec_[A-Za-z0-9]{32}$/);
    assert.deepEqual(created.events, ["run.completed", "estop.triggered"]);
    const list = await json(await api("/v1/webhooks"), 200);
    assert.deepEqual(list.data.map((e: Json) => [e.id, e.secret]), [[created.id, undefined]]);

    for (const bad of [{ url: "ftp://x", events: ["run.completed"] }, { url: "https://x", events: [] }, { url: "https://x", events: ["run.started"] }, { url: "https://x", events: ["run.completed"], extra: 1 }]) {
      assert.equal((await json(await api("/v1/webhooks", { method: "POST", json: bad }), 422)).error.code, "contract_validation_failed");
    }
    const deleted = await json(await api(`/v1/webhooks/${created.id}`, { method: "DELETE" }), 200);
    assert.equal(deleted.deleted, true);
    assert.deepEqual((await json(await api("/v1/webhooks"), 200)).data, []);
    assert.equal((await json(await api(`/v1/webhooks/${created.id}/deliveries`), 404)).error.code, "not_found");
  });

  it("retries a receiver that fails five times; the event is delivered, signed, and acknowledged exactly once", async () => {
    receiver = await startReceiver((attempt) => (attempt <= 5 ? 500 : 200));
    const c = await start();
    const endpoint = await json(await api("/v1/webhooks", { method: "POST", json: { url: receiver.url, events: ["estop.triggered", "regression.detected"] } }), 201);
    const eventId = await transact(c.db, (tx) => enqueueEvent(tx, DEFAULT_ACCOUNT_ID, "estop.triggered", { cell: "so101-b", run_id: null }));
    await receiver.waitFor((r) => r.some((x) => x.status === 200));

    // A second event proves the first is not sent again once acknowledged.
    const second = await enqueueEvent(c.db, DEFAULT_ACCOUNT_ID, "regression.detected", { gate: "g1" });
    await receiver.waitFor((r) => r.some((x) => idOf(x.rawBody) === second));
    const first = receiver.received.filter((x) => idOf(x.rawBody) === eventId);
    assert.deepEqual(first.map((x) => x.status), [500, 500, 500, 500, 500, 200]);
    for (const delivery of first) {
      assert.equal(delivery.headers["assay-event-id"], eventId);
      assert.equal(delivery.headers["assay-event-type"], "estop.triggered");
      assert.ok(verifySignature(endpoint.secret, String(delivery.headers["assay-signature"]), delivery.rawBody, Date.now() / 1000));
      assert.ok(!verifySignature(endpoint.secret, String(delivery.headers["assay-signature"]), delivery.rawBody + " ", Date.now() / 1000));
    }
    const payload = JSON.parse(first[5].rawBody);
    assert.deepEqual({ ...payload, created: undefined }, { id: eventId, object: "event", type: "estop.triggered", created: undefined, data: { cell: "so101-b", run_id: null } });

    const log = await json(await api(`/v1/webhooks/${endpoint.id}/deliveries`), 200);
    const row = log.data.find((d: Json) => d.event_id === eventId);
    assert.equal(row.status, "delivered");
    assert.equal(row.attempts, 6);
    assert.equal(row.last_status, 200);
    assert.equal(row.next_attempt, null);
    assert.ok(row.delivered_at);
  });

  it("delivers events left undelivered by a stopped coordinator after it restarts on the same data dir", async () => {
    let up = false;
    receiver = await startReceiver(() => (up ? 204 : 503));
    let c = await start();
    const endpoint = await json(await api("/v1/webhooks", { method: "POST", json: { url: receiver.url, events: ["threshold.crossed"] } }), 201);
    const eventId = await enqueueEvent(c.db, DEFAULT_ACCOUNT_ID, "threshold.crossed", { run_id: "run_x" });
    await receiver.waitFor((r) => r.length >= 2);
    await c.stop();
    coordinator = undefined;
    const before = receiver.received.length;

    up = true;
    c = await start();
    await receiver.waitFor((r) => r.some((x) => x.status === 204));
    assert.ok(receiver.received.slice(before).every((x) => idOf(x.rawBody) === eventId));
    const log = await json(await api(`/v1/webhooks/${endpoint.id}/deliveries`), 200);
    assert.equal(log.data[0].status, "delivered");
    // An attempt cut short by the stop counts even if the receiver never saw it.
    assert.ok(log.data[0].attempts >= receiver.received.length);
  });
});
