import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiKey, generateSecret, hashSecret, isWellFormedSecret, keyView } from "../../coordinator/auth/api-keys.js";
import { ApiKeyCache } from "../../coordinator/auth/api-key-cache.js";
import { resolveBearer } from "../../coordinator/auth/authenticate.js";
import { ensureAdminKey } from "../../coordinator/auth/bootstrap.js";
import { findRouteScope, ROUTE_SCOPES } from "../../coordinator/auth/route-scopes.js";
import { SCOPES } from "../../coordinator/auth/scopes.js";
import { AssayError } from "../../coordinator/errors/assay-error.js";
import { DEFAULT_ACCOUNT_ID } from "../../coordinator/store/accounts-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";
import { listKeys, revokeKey } from "../../coordinator/store/keys-repo.js";

async function invalidKey(fn: () => unknown): Promise<string> {
  try {
    await fn();
  } catch (error) {
    assert.ok(error instanceof AssayError);
    assert.equal(error.code, "invalid_api_key");
    return error.message;
  }
  assert.fail("key accepted");
}

for (const engine of STORE_ENGINES) {
  describe(`API key auth (${engine})`, () => {
    let dir: string;
    let db: Db;
    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), "assay-auth-"));
      db = await openTestDatabase(engine, join(dir, "assay.sqlite"));
    });
    afterEach(async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("generates asy_live_ secrets of 32+ base62 characters and stores only their sha256", async () => {
      const secret = generateSecret();
      assert.match(secret, /^asy_live_[0-9A-Za-z]{32,}$/);
      assert.notEqual(generateSecret(), secret);
      await ensureAdminKey(db);
      const { row } = await createApiKey(db, DEFAULT_ACCOUNT_ID, ["runs:read"], new Date(), secret);
      assert.equal(row.secret_sha256, hashSecret(secret));
      assert.equal(row.secret_sha256.length, 64);
      assert.equal(row.hint, secret.slice(9, 15));
      const stored = JSON.stringify(await db.prepare("SELECT * FROM api_keys").all());
      assert.ok(!stored.includes(secret));
      assert.equal("secret" in keyView(row), false);
    });

    it("resolves a valid bearer key to its account and scope", async () => {
      await ensureAdminKey(db);
      const { secret } = await createApiKey(db, DEFAULT_ACCOUNT_ID, ["runs:read", "streams:read"], new Date());
      assert.deepEqual((await resolveBearer(db, `Bearer ${secret}`)).scope, ["runs:read", "streams:read"]);
      assert.equal((await resolveBearer(db, `bearer ${secret}`)).accountId, DEFAULT_ACCOUNT_ID);
    });

    it("rejects missing, malformed, wrong-prefix, unknown and revoked keys", async () => {
      await ensureAdminKey(db);
      const { row, secret } = await createApiKey(db, DEFAULT_ACCOUNT_ID, ["runs:read"], new Date());
      assert.match(await invalidKey(() => resolveBearer(db, undefined)), /missing/);
      assert.match(await invalidKey(() => resolveBearer(db, secret)), /Bearer/);
      assert.match(await invalidKey(() => resolveBearer(db, "Bearer asy_test_" + "a".repeat(40))), /malformed/);
      assert.match(await invalidKey(() => resolveBearer(db, "Bearer asy_live_short")), /malformed/);
      assert.match(await invalidKey(() => resolveBearer(db, `Bearer ${generateSecret()}`)), /unknown/);
      assert.ok(await revokeKey(db, row.id, "2026-11-01T00:00:00.000Z"));
      assert.match(await invalidKey(() => resolveBearer(db, `Bearer ${secret}`)), /revoked/);
      assert.equal(isWellFormedSecret("asy_live_" + "Z".repeat(16)), true);
    });

    it("caches verified keys, bounded, never an unknown one, and refuses a key revoked through the cache on the next request", async () => {
      await ensureAdminKey(db);
      const cache = new ApiKeyCache({ db, maxEntries: 2 });
      const keys = [];
      for (let i = 0; i < 3; i++) keys.push(await createApiKey(db, DEFAULT_ACCOUNT_ID, ["runs:read"], new Date()));
      for (const { secret } of keys) await resolveBearer(cache, `Bearer ${secret}`);
      assert.equal(cache.size, 2);
      // An unknown secret is not remembered as unknown: the key created with it a moment later is accepted.
      const later = generateSecret();
      assert.match(await invalidKey(() => resolveBearer(cache, `Bearer ${later}`)), /unknown/);
      await createApiKey(db, DEFAULT_ACCOUNT_ID, ["runs:read"], new Date(), later);
      assert.equal((await resolveBearer(cache, `Bearer ${later}`)).accountId, DEFAULT_ACCOUNT_ID);
      const last = keys[2]!;
      assert.equal((await resolveBearer(cache, `Bearer ${last.secret}`)).keyId, last.row.id);
      assert.ok(await cache.revoke(db, last.row.id, "2026-11-01T00:00:00.000Z"));
      assert.match(await invalidKey(() => resolveBearer(cache, `Bearer ${last.secret}`)), /revoked/);
    });

    it("caches nothing while deaf to other coordinators' revocations, and starts empty when it hears again", async () => {
      await ensureAdminKey(db);
      const listeners: Array<(message: { type: string; keyId?: string }) => void> = [];
      const feed = { listening: true, subscribe: (listener: (message: { type: string; keyId?: string }) => void) => void listeners.push(listener) };
      const cache = new ApiKeyCache({ db, revocations: feed });
      const tell = (message: { type: string; keyId?: string }) => listeners.forEach((listener) => listener(message));
      const { row, secret } = await createApiKey(db, DEFAULT_ACCOUNT_ID, ["runs:read"], new Date());
      await resolveBearer(cache, `Bearer ${secret}`);
      assert.equal(cache.size, 1);
      // Revoked by another coordinator (its transaction, not this cache): the notification drops it.
      await revokeKey(db, row.id, "2026-11-01T00:00:00.000Z");
      tell({ type: "key-revoked", keyId: row.id });
      assert.match(await invalidKey(() => resolveBearer(cache, `Bearer ${secret}`)), /revoked/);
      const other = await createApiKey(db, DEFAULT_ACCOUNT_ID, ["runs:read"], new Date());
      await resolveBearer(cache, `Bearer ${other.secret}`);
      tell({ type: "lost" });
      feed.listening = false;
      assert.equal(cache.size, 0);
      await resolveBearer(cache, `Bearer ${other.secret}`);
      assert.equal(cache.size, 0, "cached while the feed was not listening");
      feed.listening = true;
      tell({ type: "resync" });
      await resolveBearer(cache, `Bearer ${other.secret}`);
      assert.equal(cache.size, 1);
    });

    it("bootstraps an all-scope admin key on first start only", async () => {
      const first = await ensureAdminKey(db);
      assert.equal(first.created, true);
      assert.deepEqual((await resolveBearer(db, `Bearer ${first.secret}`)).scope, [...SCOPES]);
      assert.deepEqual(await ensureAdminKey(db), { created: false });
      assert.equal((await listKeys(db, DEFAULT_ACCOUNT_ID)).length, 1);
    });

    it("uses ASSAY_API_KEY as the admin key when given, and refuses one without the live prefix", async () => {
      const given = "asy_live_" + "k".repeat(32);
      assert.deepEqual(await ensureAdminKey(db, { apiKey: given }), { created: true, secret: given });
      assert.equal((await resolveBearer(db, `Bearer ${given}`)).accountId, DEFAULT_ACCOUNT_ID);
      await assert.rejects(() => ensureAdminKey(db, { apiKey: "sk_live_abcdefabcdefabcdef" }), /asy_live_/);
    });

    it("maps every route to a scope, and unknown routes to none", () => {
      assert.deepEqual(findRouteScope("POST", "/v1/runs")?.scopes, ["runs:write"]);
      assert.deepEqual(findRouteScope("GET", "/v1/runs/run_1/events")?.scopes, ["runs:read", "streams:read"]);
      assert.equal(findRouteScope("GET", "/v1/runs/run_1/episodes/extra"), undefined);
      assert.equal(findRouteScope("DELETE", "/v1/runs"), undefined);
      for (const route of ROUTE_SCOPES) for (const scope of route.scopes) assert.ok((SCOPES as readonly string[]).includes(scope));
    });
  });
}
