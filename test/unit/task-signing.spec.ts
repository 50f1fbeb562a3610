/** Canonical JSON and Ed25519 signatures over frozen Task Specs, with keys kept in a real SQLite store. */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Db } from "../../coordinator/store/database.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";
import { ensureServiceKey, ensureSigningKey, listSigningKeys } from "../../coordinator/tasks/signing-keys.js";
import { canonicalJson } from "../../coordinator/json/canonical-json.js";
import { parseSignature, signedPayload, signTaskSpec, verifyTaskSignature } from "../../coordinator/tasks/task-signing.js";

const SPEC = {
  name: "pick-cube", rev: "pick-cube@v1", visibility: "published", environment_class: "standard", frozen: "2026-11-01T00:00:00.000Z",
  initial_conditions: { cube: { pose: [0.22, 0, 0.015, 0], object: "cube" } },
  success_predicates: [{ lifted: "pose(cube).z > 0.06 for 1.0s" }],
  instructions: null, stages: [], envelope: null,
};

for (const engine of STORE_ENGINES) {
  describe(`task signing (${engine})`, () => {
    let dir: string;
    let db: Db;

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), "assay-sign-"));
      db = await openTestDatabase(engine, join(dir, "assay.sqlite"));
    });
    afterEach(async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("writes canonical JSON with keys sorted recursively and no whitespace", () => {
      assert.equal(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: "é" }], c: null }, u: undefined }), '{"a":{"c":null,"d":[3,{"y":"é","z":1}]},"b":1}');
      assert.equal(canonicalJson("x"), '"x"');
    });

    it("signs only the listed fields: absent ones as null, baseline and extras ignored", () => {
      const payload = signedPayload({ name: "t", rev: "t@v1", baseline: { internal_rate: 1 }, id: "task_1" }).toString("utf8");
      assert.equal(payload, '{"envelope":null,"environment_class":null,"frozen":null,"initial_conditions":null,"instructions":null,"name":"t","rev":"t@v1","stages":null,"success_predicates":null,"visibility":null}');
    });

    it("keeps one key per owner across calls and restarts", async () => {
      const first = await ensureServiceKey(db);
      assert.equal((await ensureServiceKey(db)).id, first.id);
      const account = await ensureSigningKey(db, "acct_default");
      assert.notEqual(account.id, first.id);
      await db.close();
      db = await openTestDatabase(engine, join(dir, "assay.sqlite"));
      assert.equal((await ensureServiceKey(db)).id, first.id);
      assert.deepEqual((await listSigningKeys(db)).map((k) => k.owner).sort(), ["acct_default", "service"]);
      assert.equal("private_key_pem" in (await listSigningKeys(db))[0]!, false);
    });

    it("verifies a signature with the published PEM and rejects a tampered spec, another key, or garbage", async () => {
      const key = await ensureServiceKey(db);
      const signature = signTaskSpec(SPEC, key);
      assert.match(signature, new RegExp(`^ed25519:${key.id}:[A-Za-z0-9_-]{86}$`));
      const pem = (await listSigningKeys(db)).find((k) => k.id === key.id)!.public_key_pem;
      assert.ok(verifyTaskSignature(SPEC, signature, pem));
      // Key order does not matter; content does.
      assert.ok(verifyTaskSignature(Object.fromEntries(Object.entries(SPEC).reverse()), signature, pem));
      assert.equal(verifyTaskSignature({ ...SPEC, rev: "pick-cube@v2" }, signature, pem), false);
      assert.equal(verifyTaskSignature({ ...SPEC, success_predicates: [{ lifted: "pose(cube).z > 0.01" }] }, signature, pem), false);
      assert.equal(verifyTaskSignature(SPEC, signature, (await ensureSigningKey(db, "acct_x")).publicKey), false);
      assert.equal(verifyTaskSignature(SPEC, "rsa:abc:def", pem), false);
      assert.equal(parseSignature("ed25519:sk_1:AAAA")?.keyId, "sk_1");
    });
  });
}
