/**
 * POST /v1/runs answers 201 with the run in status `queued` (spec: "Returns 201 with a Run in status
 * `queued`"), even when the scheduler's pass, woken by the submission, moves the run on before the answer
 * is made: submitRun returns the run as its insert left it, not a read after the kick.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileApiDeps } from "../../coordinator/api/api-deps.js";
import { createMetricsRegistry } from "../../coordinator/metrics.js";
import { submitRun } from "../../coordinator/lifecycle/submit-run.js";
import { RunEvents } from "../../coordinator/runs/run-events.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";
import { DEFAULT_ACCOUNT_ID, ensureAccount } from "../../coordinator/store/accounts-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import { getRun, setRunStatus } from "../../coordinator/store/runs-repo.js";
import { seedTasks } from "../../coordinator/tasks/task-catalog.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { openTestDatabase, STORE_ENGINES } from "../support/test-database.js";

const BODY = {
  kind: "run", robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", episodes: 2,
  policy: { type: "container", image: "assay/ref-policy:expert", action_space: { type: "joint_position", dim: 6 }, observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] } },
};

for (const engine of STORE_ENGINES) {
  describe(`POST /v1/runs's answer (${engine})`, function () {
    this.timeout(60_000);
    let db: Db;
    let dir: string;
    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await seedTasks(db);
      await ensureAccount(db, DEFAULT_ACCOUNT_ID, "Default", new Date().toISOString());
      dir = mkdtempSync(join(tmpdir(), "assay-submit-"));
    });
    afterEach(async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("is the run as created, queued, though the pass its kick woke moved it on first", async () => {
      let moved: Promise<unknown> | undefined;
      const deps = compileApiDeps({
        db, pins: loadFirmwarePins(), runEvents: new RunEvents(), objects: new DiskStore(dir), preflight: "off", metrics: createMetricsRegistry(),
        urls: { baseUrl: "http://127.0.0.1:1", artifactUrl: "http://127.0.0.1:1/artifacts", streamsUrl: "ws://127.0.0.1:1/streams", docsUrl: "http://127.0.0.1:1/docs" },
        fleet: { connectedCells: async () => [], assignedEpisodeOf: () => undefined },
        // A pass that wins the race: the run is `scheduling` before submitRun's caller gets it back.
        scheduler: {
          kick: () => {
            moved = (async () => {
              const runs = await db.prepare("SELECT id FROM runs").all() as Array<{ id: string }>;
              for (const { id } of runs) await setRunStatus(db, id, "scheduling", { cell: "c1", at: new Date().toISOString() });
            })();
          },
        },
      } as never);
      const { run, replayed } = await submitRun(deps, DEFAULT_ACCOUNT_ID, BODY);
      await moved;
      assert.equal(replayed, false);
      assert.equal(run.status, "queued");
      assert.equal((await getRun(db, run.id))?.status, "scheduling", "the pass did move the run on");
    });
  });
}
