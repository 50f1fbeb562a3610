/**
 * Named runs over real HTTP (issue 28, item 2): `name` and `metadata` at submission and through
 * POST /v1/runs/{run_id}, the shown `policy_name`, and the runs list's filters (metadata[key]=value,
 * policy_name, task, robot, kind, status) with paging. No cells run anything here: a stub fleet
 * reports connected so101 cells so submissions validate, and runs stay queued (one is completed by
 * hand to show a list item's rate and interval).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { createApiApp } from "../../coordinator/api/app.js";
import { ensureAdminKey } from "../../coordinator/auth/bootstrap.js";
import { seedTasks } from "../../coordinator/tasks/task-catalog.js";
import type { ConnectedCell, FleetView } from "../../coordinator/cells/fleet-view.js";
import { createMetricsRegistry } from "../../coordinator/metrics.js";
import { RunEvents } from "../../coordinator/runs/run-events.js";
import type { Db } from "../../coordinator/store/database.js";
import { setRunResult, setRunStatus } from "../../coordinator/store/runs-repo.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";
import { README_RUN_BODY } from "../fixtures.js";
import { integrationEngine, openTestDatabase } from "../support/test-database.js";

const cell = (cellId: string): ConnectedCell => ({
  cellId, model: "so101", firmware: "3.11", environment: "tabletop@1",
  instruments: [{ kind: "joint_states", name: "" }, { kind: "camera", name: "top" }, { kind: "camera", name: "wrist" }, { kind: "gripper_state", name: "" }, { kind: "ft_wrist", name: "" }, { kind: "mocap", name: "" }, { kind: "estop", name: "" }],
  policyImages: ["assay/ref-policy:expert", "assay/ref-policy:novice"],
  state: "idle", dutyCyclePct: 0, connectedAt: "2026-11-01T00:00:00.000Z",
});

const policy = (image: string) => ({
  type: "container", image, action_space: { type: "joint_position", dim: 6 }, observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] },
});

type Json = Record<string, any>;

describe("named runs: name, metadata, policy_name and the runs list's filters (integration)", () => {
  let dir: string;
  let db: Db;
  let server: Server;
  let base: string;
  let admin: string;
  const fleet: FleetView = { connectedCells: async () => [cell("so101-a"), cell("so101-b")], assignedEpisodeOf: () => undefined };

  const call = async (path: string, init: { method?: string; json?: unknown } = {}) => {
    const res = await fetch(base + path, {
      method: init.method ?? "GET",
      headers: { authorization: `Bearer ${admin}`, ...(init.json !== undefined ? { "content-type": "application/json" } : {}) },
      body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const submit = async (body: unknown) => {
    const res = await call("/v1/runs", { method: "POST", json: body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body;
  };
  const list = async (query: string) => {
    const res = await call(`/v1/runs?${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  const ids = (page: Json) => (page.data as Json[]).map((r) => r.id);
  const refused = async (res: Promise<{ status: number; body: Json }>, pattern: RegExp) => {
    const { status, body } = await res;
    assert.equal(status, 422, JSON.stringify(body));
    assert.equal(body.error.code, "contract_validation_failed");
    assert.match(body.error.message, pattern);
    assert.doesNotMatch(JSON.stringify(body), /at .*\.ts:\d+/);
  };

  let expert: Json;
  let novice: Json;
  let compare: Json;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-named-"));
    db = await openTestDatabase(integrationEngine(), join(dir, "assay.sqlite"));
    await seedTasks(db);
    admin = (await ensureAdminKey(db)).secret!;
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.on("request", createApiApp({
      db, fleet, runEvents: new RunEvents(), scheduler: { kick() {} }, pins: loadFirmwarePins(),
      urls: { baseUrl: base, artifactUrl: `${base}/artifacts`, streamsUrl: "wss://streams.test", docsUrl: `${base}/docs` },
      objects: new DiskStore(join(dir, "artifacts")), metrics: createMetricsRegistry({ defaultMetrics: false }), log: () => {},
    }));
    expert = await submit({
      ...README_RUN_BODY, robot: "so101@3.11", episodes: 4, name: "Expert baseline", policy_name: "expert",
      metadata: { experiment: "grasp-v2", seed_set: "a", dropped: "" },
    });
    novice = await submit({ ...README_RUN_BODY, episodes: 4, policy: policy("assay/ref-policy:novice"), metadata: { experiment: "grasp-v2", seed_set: "b" } });
    compare = await submit({
      kind: "compare", robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", episodes: 4, paired: true,
      policies: { expert: policy("assay/ref-policy:expert"), novice: policy("assay/ref-policy:novice") }, name: "expert vs novice", metadata: { experiment: "grasp-v3" },
    });
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("accepts name and metadata at submission and shows them, with the shown policy_name, on the run", async () => {
    assert.equal(expert.name, "Expert baseline");
    assert.deepEqual(expert.metadata, { experiment: "grasp-v2", seed_set: "a" }, "a key sent as \"\" is not set");
    assert.equal(expert.policy_name, "expert");
    assert.equal(novice.name, null);
    assert.equal(novice.policy_name, "assay/ref-policy:novice", "without policy_name the image names the policy");
    assert.equal(compare.name, "expert vs novice");
    assert.deepEqual(compare.units.map((u: Json) => u.policy_name), ["expert", "novice"]);
    const got = await call(`/v1/runs/${expert.id}`);
    assert.equal(got.body.name, "Expert baseline");
    assert.deepEqual(got.body.metadata, { experiment: "grasp-v2", seed_set: "a" });
  });

  it("refuses metadata and names that break the rules, naming the key and the rule", async () => {
    const body = (extra: Json) => call("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 2, ...extra } });
    await refused(body({ metadata: { ["k".repeat(41)]: "v" } }), /^metadata key is 41 characters; keys are at most 40; got "k{41}"$/);
    await refused(body({ metadata: { "a[b]": "v" } }), /square bracket.*got "a\[b\]"/);
    await refused(body({ metadata: { lr: 0.001 } }), /^metadata\.lr must be a string of at most 500 characters.*got 0\.001$/);
    await refused(body({ metadata: { nested: { a: 1 } } }), /^metadata\.nested must be a string.*nested objects are not allowed/);
    await refused(body({ metadata: { note: "x".repeat(501) } }), /^metadata\.note must be a string of at most 500 characters.*got 501 characters/);
    await refused(body({ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) }), /^metadata has 51 keys; at most 50 are allowed/);
    await refused(body({ metadata: ["a"] }), /^metadata must be an object of string keys to string values/);
    await refused(body({ name: "two\nlines" }), /^name must be 1 to 100 characters on one line/);
    await refused(body({ name: "n".repeat(101) }), /^name must be 1 to 100 characters.*got 101 characters/);
    assert.equal((await list("limit=100")).data.length, 3, "a refused submission stores nothing");
  });

  it("updates metadata Stripe's way with POST /v1/runs/{run_id}: set, \"\" removes, others kept; and the name", async () => {
    const updated = await call(`/v1/runs/${novice.id}`, { method: "POST", json: { name: "Novice", metadata: { seed_set: "", owner: "ana" } } });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(updated.body.name, "Novice");
    assert.deepEqual(updated.body.metadata, { experiment: "grasp-v2", owner: "ana" });
    assert.equal(updated.body.status, "queued", "labels change nothing about the run");
    assert.equal((await call(`/v1/runs/${novice.id}`)).body.name, "Novice");
    const cleared = await call(`/v1/runs/${novice.id}`, { method: "POST", json: { name: null } });
    assert.equal(cleared.body.name, null);
    assert.deepEqual(cleared.body.metadata, { experiment: "grasp-v2", owner: "ana" }, "metadata not sent is kept");

    await refused(call(`/v1/runs/${novice.id}`, { method: "POST", json: { metadata: { "a]": "x" } } }), /square bracket/);
    await refused(call(`/v1/runs/${novice.id}`, { method: "POST", json: { policy_name: "x" } }), /^unknown field policy_name; allowed: name, metadata/);
    const many = Object.fromEntries(Array.from({ length: 49 }, (_, i) => [`k${i}`, "v"]));
    await refused(call(`/v1/runs/${novice.id}`, { method: "POST", json: { metadata: many } }), /^metadata would have 51 keys after this update; at most 50 are allowed \(the run has 2\)/);
    const missing = await call("/v1/runs/run_nope", { method: "POST", json: { name: "x" } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, "not_found");
  });

  it("filters the list by metadata[key]=value, policy_name, task, robot, kind and status, combined and paged", async () => {
    assert.deepEqual(ids(await list("metadata[experiment]=grasp-v2")), [novice.id, expert.id]);
    assert.deepEqual(ids(await list("metadata[experiment]=grasp-v2&metadata[owner]=ana")), [novice.id]);
    assert.deepEqual(ids(await list("metadata[experiment]=grasp")), [], "values match exactly");
    assert.deepEqual(ids(await list("metadata%5Bexperiment%5D=grasp-v3")), [compare.id], "brackets may be percent-encoded");
    assert.deepEqual(ids(await list("policy_name=expert")), [compare.id, expert.id], "a compare is found by either policy's name");
    assert.deepEqual(ids(await list("policy_name=assay%2Fref-policy%3Anovice")), [novice.id]);
    assert.deepEqual(ids(await list("task=pick-cube")), [compare.id, novice.id, expert.id]);
    assert.deepEqual(ids(await list("task=pick-cube@v1&kind=run")), [novice.id, expert.id]);
    assert.deepEqual(ids(await list("task=stack-blocks")), []);
    assert.deepEqual(ids(await list("robot=so101")), [compare.id, novice.id, expert.id]);
    assert.deepEqual(ids(await list("robot=so101@3.11&kind=compare")), [compare.id]);
    assert.deepEqual(ids(await list("status=queued&policy_name=expert&metadata[experiment]=grasp-v2")), [expert.id]);

    const first = await list("task=pick-cube&limit=2");
    assert.deepEqual(ids(first), [compare.id, novice.id]);
    assert.equal(first.has_more, true);
    const second = await list(`task=pick-cube&limit=2&starting_after=${novice.id}`);
    assert.deepEqual(ids(second), [expert.id]);
    assert.equal(second.has_more, false);

    await refused(call(`/v1/runs?metadata[${"k".repeat(41)}]=x`), /^query parameter metadata\[k+\]: metadata key is 41 characters/);
    await refused(call("/v1/runs?metadata[a]=1&metadata[a]=2"), /metadata\[a\] must be given once/);
    await refused(call("/v1/runs?kind=bogus"), /query parameter kind must be one of/);
  });

  it("gives each list item what a list shows: name, policy_name, kind, and once ended n, rate and interval", async () => {
    await setRunStatus(db, expert.id, "scheduling");
    await setRunStatus(db, expert.id, "running");
    const url = `${base}/v1/runs/${expert.id}/episodes`;
    await setRunResult(db, expert.id, {
      n: 4, success_rate: 0.75, ci95: [0.3, 0.95], interval_method: "beta-binomial-posterior", failure_clusters: { timeout: 1 },
      robot_hours: 0.01, environment_hours: 0.01, cost_usd: 0.5, stages: {},
      artifacts: { mcap: `${url}?artifact=mcap`, video: `${url}?artifact=video`, ground_truth: `${url}?artifact=ground_truth`, report_pdf: `${base}/v1/runs/${expert.id}/report?format=pdf` },
      cells: { by_cell: [{ cell: "so101-a", n: 4, successes: 3, success_rate: 0.75 }], clusters: 1, design_effect: 1, effective_n: 4, ci95_these_cells: [0.3, 0.95] },
    });
    await setRunStatus(db, expert.id, "completed");
    const item = (await list("metadata[seed_set]=a")).data[0] as Json;
    assert.equal(item.id, expert.id);
    assert.equal(item.name, "Expert baseline");
    assert.equal(item.policy_name, "expert");
    assert.equal(item.kind, "run");
    assert.equal(item.task, "pick-cube@v1");
    assert.deepEqual([item.result.n, item.result.success_rate, item.result.ci95], [4, 0.75, [0.3, 0.95]]);
  });

  // Last: it adds a run the filters above would list.
  it("lets a quote back the same body with any name and metadata (labels change neither the run nor its price)", async () => {
    const body = { ...README_RUN_BODY, episodes: 2 };
    const quote = await call("/v1/quote", { method: "POST", json: { ...body, name: "quoted", metadata: { a: "1" } } });
    assert.equal(quote.status, 200, JSON.stringify(quote.body));
    const labelled = await call("/v1/runs", { method: "POST", json: { ...body, quote_id: quote.body.id, name: "relabelled", metadata: { b: "2" } } });
    assert.equal(labelled.status, 201, JSON.stringify(labelled.body));
    assert.deepEqual([labelled.body.name, labelled.body.metadata], ["relabelled", { b: "2" }]);
    const other = await call("/v1/runs", { method: "POST", json: { ...body, episodes: 3, quote_id: quote.body.id } });
    assert.equal(other.status, 422, "a different run body is still refused");
    assert.match(other.body.error.message, /was made for a different run body/);
    assert.equal((await call(`/v1/runs/${labelled.body.id}/cancel`, { method: "POST" })).status, 200);
  });
});
