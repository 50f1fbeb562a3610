/**
 * Policy models end by request or by retention, never while an unfinished run still needs their
 * bytes (coordinator/models/model-retention.ts), on both store engines and real files (a disk artifact store).
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AssayError } from "../../coordinator/errors/assay-error.js";
import { modelKey } from "../../coordinator/models/model-files.js";
import { deleteModel, sweepModels } from "../../coordinator/models/model-retention.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";
import type { Db } from "../../coordinator/store/database.js";
import { getModel, insertModel, markModelReady, markModelReceived } from "../../coordinator/store/models-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

for (const engine of STORE_ENGINES) {
  describe(`model retention and deletion (${engine})`, () => {
    let db: Db;
    let dir: string;
    let objects: DiskStore;
    const modelPath = (id: string) => join(dir, modelKey(id));
    const readyAt = "2026-11-01T00:00:00.000Z";

    async function readyModel(id: string, retention = "7d"): Promise<void> {
      await insertModel(db, { id, account_id: "acct_1", name: `acme/${id}`, revision: "main", format: "onnx", source: "upload", created: readyAt, bytes: 3, sha256: "ab".repeat(32), retention });
      await markModelReceived(db, id);
      await markModelReady(db, id, { inputs: [], outputs: [] }, readyAt);
      writeFileSync(modelPath(id), "abc");
    }

    async function runUsing(id: string, modelId: string, status: "queued" | "completed"): Promise<void> {
      await runsRepo.insertRun(db, {
        id, accountId: "acct_1", kind: "run", created: readyAt, request: {},
        resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1", models: { [`acme/${modelId}`]: { id: modelId, sha256: "ab".repeat(32), bytes: 3, source: "upload" } } },
        plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
        priority: "standard", episodesTotal: 1,
      });
      if (status === "completed") await db.prepare("UPDATE runs SET status = 'completed' WHERE id = ?").run(id);
    }

    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
      dir = mkdtempSync(join(tmpdir(), "assay-models-"));
      objects = new DiskStore(dir);
      mkdirSync(join(dir, ".models"), { recursive: true });
    });
    afterEach(async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("refuses to delete a model an unfinished run uses, naming the run; deletes it once the run has ended", async () => {
      await readyModel("m1");
      await runUsing("run_open", "m1", "queued");
      await assert.rejects(deleteModel(db, objects, (await getModel(db, "m1"))!, new Date()), (error: AssayError) => error.code === "contract_validation_failed" && /in use by unfinished runs \(run_open\)/.test(error.message));
      assert.ok(existsSync(modelPath("m1")));
      await db.prepare("UPDATE runs SET status = 'completed' WHERE id = 'run_open'").run();
      assert.equal((await deleteModel(db, objects, (await getModel(db, "m1"))!, new Date())).status, "deleted");
      assert.equal(existsSync(modelPath("m1")), false);
    });

    it("expires ready models past their retention and abandoned uploads, but waits for the runs that need them", async () => {
      await readyModel("old", "7d");
      await readyModel("fresh", "90d");
      await readyModel("needed", "7d");
      await runUsing("run_needs", "needed", "queued");
      await runUsing("run_done", "old", "completed");
      await insertModel(db, { id: "stale", account_id: "acct_1", name: "acme/stale", revision: "main", format: "onnx", source: "upload", created: readyAt, bytes: 9, sha256: "cd".repeat(32), retention: "90d" });

      const now = new Date("2026-11-10T00:00:00.000Z"); // 9 days after ready_at
      assert.equal(await sweepModels(db, objects, now), 2);
      assert.equal((await getModel(db, "old"))!.status, "expired");
      assert.equal((await getModel(db, "stale"))!.status, "expired");
      assert.equal((await getModel(db, "fresh"))!.status, "ready");
      assert.equal((await getModel(db, "needed"))!.status, "ready", "an unfinished run still needs it");
      assert.equal(existsSync(modelPath("old")), false);
      assert.ok(existsSync(modelPath("needed")));

      await db.prepare("UPDATE runs SET status = 'stopped' WHERE id = 'run_needs'").run();
      assert.equal(await sweepModels(db, objects, now), 1);
      assert.equal((await getModel(db, "needed"))!.status, "expired");
    });
  });
}
