/**
 * Every row of the route-scope table, walked over real HTTP with a key holding every scope except
 * the row's: each must answer 403 insufficient_scope. Also key revocation and the per-account rate
 * limit as a client meets them.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { ROUTE_SCOPES } from "../../coordinator/auth/route-scopes.js";
import { SCOPES } from "../../coordinator/auth/scopes.js";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { DEFAULT_ACCOUNT_ID, ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { TEST_ADMIN_KEY } from "./helpers.js";
import { testStoreOptions } from "../support/test-database.js";

type Json = Record<string, any>;

describe("scopes, key revocation and rate limits (integration)", function () {
  this.timeout(30_000);
  let dir: string;
  let coordinator: RunningCoordinator;

  const call = (path: string, key: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${key}`);
    if (init.json !== undefined) headers.set("content-type", "application/json");
    return fetch(coordinator.baseUrl + path, { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
  };
  const json = async (res: Response, status: number): Promise<Json> => {
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body));
    return body;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-scopes-"));
    coordinator = await startCoordinator(compileCoordinatorOptions({
      port: 0, grpcPort: 0, dataDir: dir, apiKey: TEST_ADMIN_KEY, ...(await testStoreOptions(dir)),
      rateLimits: { general: { perS: 1000, burst: 1000 }, submit: { perS: 0.5, burst: 2 } },
    }));
  });

  after(async () => {
    await coordinator?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses every route in ROUTE_SCOPES to a key lacking its scopes with 403 insufficient_scope", async () => {
    assert.ok(ROUTE_SCOPES.length >= 20);
    for (const route of ROUTE_SCOPES) {
      const others = SCOPES.filter((s) => !route.scopes.includes(s));
      assert.ok(others.length > 0, `${route.method} ${route.path} admits every scope`);
      const { secret } = await createApiKey(coordinator.db, DEFAULT_ACCOUNT_ID, others, new Date());
      const path = route.path.replace(/:(\w+)/g, (_m, name: string) => `${name}_x`);
      const res = await call(path, secret, { method: route.method, ...(route.method === "POST" || route.method === "PUT" ? { json: {} } : {}) });
      const body = await json(res, 403).catch((error: Error) => assert.fail(`${route.method} ${path}: ${error.message}`));
      assert.equal(body.error.code, "insufficient_scope", `${route.method} ${path}`);
      for (const scope of route.scopes) assert.ok(body.error.message.includes(scope), body.error.message);
    }
  });

  it("revokes a key with DELETE /v1/keys/{id}: 401 invalid_api_key at once; a key cannot revoke itself", async () => {
    const created = await json(await call("/v1/keys", TEST_ADMIN_KEY, { method: "POST", json: { scope: ["runs:read"] } }), 201);
    assert.equal((await call("/v1/robots", created.secret)).status, 200);
    const revoked = await json(await call(`/v1/keys/${created.id}`, TEST_ADMIN_KEY, { method: "DELETE" }), 200);
    assert.equal(revoked.id, created.id);
    assert.ok(revoked.revoked);
    assert.equal(revoked.secret, undefined);
    assert.equal((await json(await call("/v1/robots", created.secret), 401)).error.code, "invalid_api_key");
    const again = await json(await call(`/v1/keys/${created.id}`, TEST_ADMIN_KEY, { method: "DELETE" }), 200);
    assert.equal(again.revoked, revoked.revoked);

    const keys = (await json(await call("/v1/keys", TEST_ADMIN_KEY), 200)).data as Json[];
    assert.ok(keys.every((k) => k.secret === undefined));
    const self = keys.find((k) => k.revoked === null && k.scope.includes("keys:admin") && TEST_ADMIN_KEY.includes(k.hint.replace("asy_live_", "").replace("…", "")))!;
    assert.equal((await json(await call(`/v1/keys/${self.id}`, TEST_ADMIN_KEY, { method: "DELETE" }), 422)).error.code, "contract_validation_failed");
    assert.equal((await json(await call("/v1/keys/key_nope", TEST_ADMIN_KEY, { method: "DELETE" }), 404)).error.code, "not_found");
  });

  it("answers 429 rate_limited with Retry-After once an account's POST /v1/runs bucket is empty", async () => {
    // An account of its own: the bucket is the account's, shared by all its keys (the other tests' keys drew from
    // the default account's).
    await ensureAccount(coordinator.db, "acct_ratelimited", "rate-limited", new Date().toISOString());
    const { secret } = await createApiKey(coordinator.db, "acct_ratelimited", ["runs:write", "runs:read"], new Date());
    // Invalid bodies still draw tokens: the limit is on requests, not on runs.
    assert.equal((await call("/v1/runs", secret, { method: "POST", json: {} })).status, 422);
    assert.equal((await call("/v1/runs", secret, { method: "POST", json: {} })).status, 422);
    const limited = await call("/v1/runs", secret, { method: "POST", json: {} });
    const body = await json(limited, 429);
    assert.equal(body.error.code, "rate_limited");
    const retryAfter = limited.headers.get("retry-after");
    assert.match(retryAfter ?? "", /^\d+$/);
    assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 2, retryAfter!);
    // Reads of the same key are a different bucket.
    assert.equal((await call("/v1/robots", secret)).status, 200);
  });
});
