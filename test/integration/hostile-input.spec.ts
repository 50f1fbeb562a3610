/**
 * Hostile input against a real coordinator over real HTTP (loopback, no cells): every route of the
 * OpenAPI table with malformed and hostile requests, seeded and bounded. Whatever comes in, the
 * answer is never a 500, every answer outside 2xx is the spec's error envelope with one of its
 * codes, and no request takes longer than REQUEST_BOUND_MS.
 *
 * Property-based with fast-check (seeded, so a failure replays): bodies of arbitrary JSON (deep,
 * wide, unicode, prototype keys), raw bodies that are not JSON (NaN, Infinity, truncated, binary),
 * wrong Content-Types and Content-Encodings, path parameters with bad percent-encoding and
 * prototype names, with and without a key. Plus the findings of the audit as named cases.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import fc from "fast-check";
import { OPERATIONS } from "../../coordinator/api/operations.js";
import { ERROR_CODES } from "../../coordinator/errors/codes.js";
import { eventually } from "../support/eventually.js";
import { startTestService, TEST_ADMIN_KEY, type TestService } from "./helpers.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";
import { integrationEngine } from "../support/test-database.js";

/** Slowest answer accepted for any single request (a stall would block every other request). */
const REQUEST_BOUND_MS = 2000;
const SEED = 20261125;

interface Answer {
  status: number;
  body: string;
  ms: number;
}

describe("hostile input: every route, fuzzed (seeded, loopback)", function () {
  this.timeout(240_000);
  let service: TestService;
  let base: URL;
  const slowest = { ms: 0, what: "" };

  /** One raw HTTP request: exactly these bytes and headers (fetch would normalise them). */
  function send(method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const req = request({ host: base.hostname, port: base.port, method, path, headers: { ...headers, ...(body ? { "content-length": String(body.length) } : {}) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const ms = performance.now() - started;
          if (ms > slowest.ms) Object.assign(slowest, { ms, what: `${method} ${path.slice(0, 60)}` });
          resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString("utf8"), ms });
        });
      });
      req.on("error", reject);
      if (body) req.write(body);
      req.end();
    });
  }

  /** The properties every answer has, whatever was sent. */
  function checkAnswer(answer: Answer, what: string): void {
    assert.notEqual(answer.status, 500, `${what}: 500 ${answer.body.slice(0, 300)}`);
    assert.ok(answer.ms < REQUEST_BOUND_MS, `${what}: took ${answer.ms.toFixed(0)} ms`);
    if (answer.status >= 200 && answer.status < 300) return;
    let envelope: { error?: { code?: unknown; message?: unknown; doc_url?: unknown } };
    try {
      envelope = JSON.parse(answer.body);
    } catch {
      assert.fail(`${what}: ${answer.status} with a body that is not JSON: ${answer.body.slice(0, 200)}`);
    }
    const error = envelope.error;
    assert.ok(error && typeof error.code === "string" && Object.hasOwn(ERROR_CODES, error.code), `${what}: ${answer.status} without a spec code: ${answer.body.slice(0, 200)}`);
    assert.equal(typeof error.message, "string", what);
    assert.match(String(error.doc_url), /\/docs\/errors#/, what);
    assert.ok(!/\n\s+at /.test(answer.body), `${what}: a stack trace in the answer`);
  }

  const PATH_PARAMS = fc.oneof(
    fc.constantFrom("%ZZ", "%", "%E0%A4%A", "constructor", "__proto__", "prototype", "..%2F..%2Fetc%2Fpasswd", "run_nope", "%00", "a".repeat(300)),
    fc.string({ unit: "grapheme", maxLength: 20 }).map(encodeURIComponent),
  );
  const KEYS = fc.constantFrom<Record<string, string>>({ authorization: `Bearer ${TEST_ADMIN_KEY}` }, {}, { authorization: "Bearer asy_live_nope" }, { authorization: "Basic Zm9vOmJhcg==" });
  /** JSON with the awkward parts weighted up: prototype keys, unicode, big numbers, depth. */
  const HOSTILE_JSON = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.constantFrom(null, true, false, 0, -1, 1e308, -1e-308, 2 ** 53 + 1, "", "\u0000", "\uD83D\uDE00", "\u202E", "🤖".repeat(100)),
      fc.string({ unit: "grapheme", maxLength: 40 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.array(tie("value"), { maxLength: 5 }),
      fc.dictionary(fc.oneof(fc.constantFrom("__proto__", "constructor", "prototype", "kind", "policy", "episodes", "type", "robot"), fc.string({ maxLength: 12 })), tie("value"), { maxKeys: 6 }),
    ),
  })).value;
  const RAW_BODIES = fc.constantFrom(
    "NaN", "Infinity", "-Infinity", "{\"episodes\": NaN}", "{\"a\":", "[".repeat(5000), "{\"__proto__\": {\"admin\": true}}", "\uFEFF{}", "null", "\"just a string\"",
    "{\"episodes\": 1e999}", "{'single': 'quotes'}", String.fromCharCode(0xff, 0xfe, 0x00),
  );

  before(async () => {
    service = await startTestService({ rateLimits: { general: { perS: 100_000, burst: 100_000 }, submit: { perS: 100_000, burst: 100_000 } } });
    base = new URL(service.coordinator.baseUrl);
  });
  after(async () => {
    await service?.stop();
    if (slowest.ms > 0) console.log(`      slowest answer: ${slowest.ms.toFixed(0)} ms (${slowest.what})`);
  });

  it("answers the audit's findings with the envelope, never a 500", async () => {
    const key = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
    const json = { ...key, "content-type": "application/json" };
    const deep = Buffer.from(`${"[".repeat(20_000)}${"]".repeat(20_000)}`);
    const cases: Array<[string, string, Record<string, string>, Buffer | undefined, number]> = [
      ["GET", "/docs/%ZZ", {}, undefined, 404],
      ["GET", "/labels/%ZZ.pdf", {}, undefined, 404],
      ["GET", "/v1/runs/%ZZ", key, undefined, 404],
      ["GET", "/docs/constructor", {}, undefined, 404],
      ["GET", "/docs/__proto__", {}, undefined, 404],
      ["POST", "/v1/runs", { ...json, "content-encoding": "gzip" }, Buffer.from("{not gzip"), 422],
      ["POST", "/v1/runs", { ...json, "content-encoding": "br" }, Buffer.from("{not br"), 422],
      ["GET", "/v1/robots", { ...key, "x-padding": "a".repeat(20_000) }, undefined, 431],
      // Webhooks to internal addresses, even with loopback allowed (as here): cloud metadata, private ranges.
      ["POST", "/v1/webhooks", json, Buffer.from(JSON.stringify({ url: "http://169.254.169.254/latest/meta-data", events: ["run.completed"] })), 422],
      ["POST", "/v1/webhooks", json, Buffer.from(JSON.stringify({ url: "http://10.0.0.7:8080/hook", events: ["run.completed"] })), 422],
      ...["/v1/runs", "/v1/quote", "/v1/keys", "/v1/tasks", "/v1/kits", "/v1/webhooks", "/v1/gates", "/v1/models"].map((path): [string, string, Record<string, string>, Buffer, number] => ["POST", path, json, deep, 422]),
    ];
    for (const [method, path, headers, body, status] of cases) {
      const answer = await send(method, path, headers, body);
      checkAnswer(answer, `${method} ${path}`);
      assert.equal(answer.status, status, `${method} ${path}: ${answer.body.slice(0, 200)}`);
    }
  });

  it("never answers 500 or outside the envelope, whatever body, path or key any route gets", async () => {
    let requests = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...OPERATIONS),
        PATH_PARAMS,
        KEYS,
        fc.oneof(
          HOSTILE_JSON.map((value) => ({ type: "application/json", bytes: Buffer.from(JSON.stringify(value) ?? "null") })),
          RAW_BODIES.map((text) => ({ type: "application/json", bytes: Buffer.from(text, "latin1") })),
          fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ type: "application/octet-stream", bytes: Buffer.from(bytes) })),
          HOSTILE_JSON.map((value) => ({ type: "text/plain; charset=utf-16", bytes: Buffer.from(JSON.stringify(value) ?? "null") })),
        ),
        fc.constantFrom("", "?limit=-1", "?limit=abc&limit=2", "?starting_after=%ZZ", "?status[]=x", "?kind=__proto__", "?format=md"),
        async (op, param, auth, body, query) => {
          const path = op.path.replace(/\{[^}]+\}/g, param) + query;
          const answer = await send(op.method, path, { ...auth, ...(op.method === "GET" || op.method === "DELETE" ? {} : { "content-type": body.type }) }, op.method === "GET" ? undefined : body.bytes);
          requests++;
          checkAnswer(answer, `${op.method} ${path}`);
        },
      ),
      { seed: SEED, numRuns: 600, endOnFailure: true },
    );
    assert.equal(requests, 600);
  });

  it("sends the security headers, never caches /v1, and keeps the store readable by its owner only", async () => {
    const key = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
    const created = await send("POST", "/v1/keys", { ...key, "content-type": "application/json" }, Buffer.from(JSON.stringify({ scope: ["runs:read"] })));
    assert.equal(created.status, 201);
    for (const [path, headers] of [["/v1/keys", key], ["/v1/robots", key], ["/v1/nope", key], ["/docs/api", {}]] as const) {
      const res = await fetch(new URL(path, base), { headers });
      assert.equal(res.headers.get("x-content-type-options"), "nosniff", path);
      assert.equal(res.headers.get("x-frame-options"), "DENY", path);
      assert.equal(res.headers.get("referrer-policy"), "no-referrer", path);
      assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'none'.*frame-ancestors 'none'/, path);
      if (path.startsWith("/v1")) assert.equal(res.headers.get("cache-control"), "no-store", path);
      await res.body?.cancel();
    }
    const { statSync } = await import("node:fs");
    const { join } = await import("node:path");
    // On PostgreSQL the files are the database server's.
    if (integrationEngine() === "sqlite") assert.equal(statSync(join(service.dataDir, "assay.sqlite")).mode & 0o777, 0o600);
  });

  it("guards /metrics with an operator key when the coordinator listens beyond loopback", async () => {
    const { createApiApp } = await import("../../coordinator/api/app.js");
    const { createApiKey } = await import("../../coordinator/auth/api-keys.js");
    const { CATALOG_ACCOUNT_ID } = await import("../../coordinator/tasks/task-catalog.js");
    const { createMetricsRegistry } = await import("../../coordinator/metrics.js");
    const { RunEvents } = await import("../../coordinator/runs/run-events.js");
    const { loadFirmwarePins } = await import("../../firmware-pins/pins.js");
    const { createServer } = await import("node:http");
    const app = createApiApp({
      db: service.coordinator.db, fleet: { connectedCells: async () => [], assignedEpisodeOf: () => undefined }, runEvents: new RunEvents(), scheduler: { kick: () => {} }, pins: loadFirmwarePins(),
      urls: { baseUrl: "http://x", artifactUrl: "http://x/artifacts", streamsUrl: "ws://x/streams", docsUrl: "http://x/docs" },
      objects: new DiskStore(service.dataDir), metrics: createMetricsRegistry({ defaultMetrics: false }), metricsAccess: "operator",
    });
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/metrics`;
      assert.equal((await fetch(url)).status, 401);
      assert.equal((await fetch(url, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } })).status, 403, "a customer account's key");
      const operator = (await createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["runs:read"], new Date())).secret;
      const scraped = await fetch(url, { headers: { authorization: `Bearer ${operator}` } });
      assert.equal(scraped.status, 200);
      assert.match(await scraped.text(), /^# HELP /m);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("caps open event streams per key and per account, and frees a slot when a stream closes", async () => {
    const post = async (path: string, body: unknown) => (await fetch(new URL(path, base), {
      method: "POST", headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, "content-type": "application/json" }, body: JSON.stringify(body),
    })).json() as Promise<Record<string, any>>;
    // No cells here: the run stays queued and its event streams stay open.
    const run = await post("/v1/runs", { kind: "run", robot: "so101@latest", environment: "tabletop@1", task: "pick-cube@v1", episodes: 1, policy: {
      type: "container", image: "assay/ref-policy:expert", action_space: { type: "joint_position", dim: 6 }, observation_contract: { cameras: ["top"], state: [] },
    } });
    const keys = await Promise.all([0, 1, 2, 3].map(async () => (await post("/v1/keys", { scope: ["runs:read"] })).secret as string));
    const aborts: AbortController[] = [];
    const open = async (key: string) => {
      const abort = new AbortController();
      const res = await fetch(new URL(`/v1/runs/${run.id}/events`, base), { headers: { authorization: `Bearer ${key}` }, signal: abort.signal });
      if (res.status === 200) aborts.push(abort);
      return res;
    };
    try {
      for (let i = 0; i < 10; i++) assert.equal((await open(keys[0]!)).status, 200);
      const overKey = await open(keys[0]!);
      assert.equal(overKey.status, 429);
      assert.match(((await overKey.json()) as Record<string, any>).error.message, /this key has 10 event streams open/);
      for (const key of [keys[1]!, keys[2]!]) for (let i = 0; i < 10; i++) assert.equal((await open(key)).status, 200);
      const overAccount = await open(keys[3]!);
      assert.equal(overAccount.status, 429);
      assert.match(((await overAccount.json()) as Record<string, any>).error.message, /this account has 30 event streams open/);
      // Closing one frees its slot once the server sees the socket close.
      aborts.shift()!.abort();
      await eventually("a freed slot", async () => {
        const res = await open(keys[3]!);
        if (res.status !== 200) await res.body?.cancel();
        return res.status === 200;
      });
    } finally {
      for (const abort of aborts) abort.abort();
    }
  });
});
