/**
 * The first start prints two keys: the admin key (acct_default) and the technicians' operator key
 * (acct_assay). Only the operator key moves kits on; neither is created again on a restart.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator } from "../../coordinator/server.js";
import { TEST_ADMIN_KEY } from "./helpers.js";
import { testStoreOptions } from "../support/test-database.js";

describe("operator key", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "assay-operator-"));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it("is created on the first start only and is the key that moves a kit on", async () => {
    const options = compileCoordinatorOptions({ port: 0, grpcPort: 0, dataDir, apiKey: TEST_ADMIN_KEY, ...(await testStoreOptions(dataDir)) });
    const first = await startCoordinator(options);
    let kitId: string;
    try {
      assert.match(first.operatorKey ?? "", /^asy_live_/);
      const call = (path: string, key: string, body?: unknown) =>
        fetch(`${first.baseUrl}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(body ?? {}),
        });
      const kit = await call("/v1/kits", TEST_ADMIN_KEY, { name: "mug-set", items: [{ desc: "mug", qty: 2 }] });
      assert.equal(kit.status, 201);
      kitId = ((await kit.json()) as { id: string }).id;
      const byAdmin = await call(`/v1/kits/${kitId}/receive`, TEST_ADMIN_KEY);
      assert.equal(byAdmin.status, 403);
      const byOperator = await call(`/v1/kits/${kitId}/receive`, first.operatorKey!);
      assert.equal(byOperator.status, 200, await byOperator.clone().text());
      assert.equal(((await byOperator.json()) as { status: string }).status, "received");
    } finally {
      await first.stop();
    }
    const second = await startCoordinator(options);
    try {
      assert.equal(second.operatorKey, undefined);
      assert.equal(second.adminKey, undefined);
    } finally {
      await second.stop();
    }
  });
});
