/**
 * Exports survive the coordinator: an export that was being made when the process stopped or died is
 * made again on the next start (its half-written files discarded), one that kept the process from
 * ever finishing it is failed after its attempts run out, and none stays `preparing`. The runs here
 * are completed runs with real MCAP recordings put straight into the store (no fleet needed).
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tar from "tar";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { DEFAULT_ACCOUNT_ID } from "../../coordinator/store/accounts-repo.js";
import { getExport, insertExport } from "../../coordinator/store/exports-repo.js";
import { insertFixtureRun } from "../support/fixture-run.js";
import { TEST_ADMIN_KEY } from "./helpers.js";
import { openCoordinatorStore, testStoreOptions } from "../support/test-database.js";

type Json = Record<string, any>;

describe("exports without a fleet: restarts, retention, availability", function () {
  this.timeout(60_000);
  let dir: string;
  let coordinator: RunningCoordinator | undefined;
  const start = async (exports: { availabilityMs?: number; sweepMs?: number } = {}) =>
    (coordinator = await startCoordinator(compileCoordinatorOptions({ port: 0, grpcPort: 0, dataDir: dir, apiKey: TEST_ADMIN_KEY, exports, ...(await testStoreOptions(dir)) })));
  const stop = async () => {
    await coordinator?.stop();
    coordinator = undefined;
  };
  const artifacts = () => join(dir, "artifacts");
  const api = (path: string, init: RequestInit & { json?: unknown } = {}) =>
    fetch(new URL(path, coordinator!.baseUrl), {
      ...init, body: init.json === undefined ? undefined : JSON.stringify(init.json),
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, "content-type": "application/json" },
    });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-export-restart-"));
    await start();
  });
  afterEach(async () => {
    await stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("an export left preparing by a crash is made again on start, its partial files discarded", async () => {
    await insertFixtureRun(coordinator!, artifacts(), "run_crashed0000000001", { episodes: 4 });
    await stop();
    // What a process killed half way through leaves: the row preparing, a started attempt, a .part archive and work files.
    const db = await openCoordinatorStore(dir);
    await insertExport(db, {
      id: "exp_crashed00000000001", account_id: DEFAULT_ACCOUNT_ID, run_id: "run_crashed0000000001", format: "mcap-bundle",
      created: new Date().toISOString(), episodes_total: 4, episodes: JSON.stringify({ included: 4, excluded: {}, train_on_failures: false }),
    });
    await db.prepare("UPDATE exports SET attempts = 1, episodes_done = 2 WHERE id = 'exp_crashed00000000001'").run();
    await db.close();
    const folder = join(artifacts(), ".exports", "exp_crashed00000000001");
    mkdirSync(join(folder, "work"), { recursive: true });
    writeFileSync(join(folder, "assay-run_crashed0000000001-mcap-bundle.tar.part"), "half an archive");
    writeFileSync(join(folder, "work", "leftover"), "x");

    await start();
    await coordinator!.archives.idle();
    const row = (await getExport(coordinator!.db, "exp_crashed00000000001"))!;
    assert.equal(row.status, "ready", `${row.failure_reason}: ${row.failure_message}`);
    assert.equal(row.attempts, 2);
    assert.equal(existsSync(join(folder, "assay-run_crashed0000000001-mcap-bundle.tar.part")), false);
    assert.equal(existsSync(join(folder, "work")), false);
    const view = (await (await api("/v1/exports/exp_crashed00000000001")).json()) as Json;
    assert.deepEqual(view.progress, { episodes_done: 4, episodes_total: 4 });
    const names: string[] = [];
    await tar.t({ file: join(folder, row.file_name!), onReadEntry: (entry) => names.push(entry.path) });
    assert.equal(names.filter((n) => n.endsWith(".mcap")).length, 4);
  });

  it("an export interrupted by a stop is made after the next start", async () => {
    await insertFixtureRun(coordinator!, artifacts(), "run_stopped0000000001", { episodes: 6 });
    const created = (await (await api("/v1/runs/run_stopped0000000001/export", { method: "POST", json: { format: "mcap-bundle" } })).json()) as Json;
    assert.equal(created.status, "preparing");
    await stop();
    await start();
    await coordinator!.archives.idle();
    const view = (await (await api(`/v1/exports/${created.id}`)).json()) as Json;
    assert.equal(view.status, "ready", JSON.stringify(view.failure));
  });

  it("an export the process never finished after its attempts is failed, not left preparing", async () => {
    await insertFixtureRun(coordinator!, artifacts(), "run_poisoned000000001", { episodes: 1 });
    await insertExport(coordinator!.db, {
      id: "exp_poisoned0000000001", account_id: DEFAULT_ACCOUNT_ID, run_id: "run_poisoned000000001", format: "rlds",
      created: new Date().toISOString(), episodes_total: 1, episodes: JSON.stringify({ included: 1, excluded: {}, train_on_failures: false }),
    });
    await coordinator!.db.prepare("UPDATE exports SET attempts = 3 WHERE id = 'exp_poisoned0000000001'").run();
    await stop();
    await start();
    await coordinator!.archives.idle();
    const view = (await (await api("/v1/exports/exp_poisoned0000000001")).json()) as Json;
    assert.equal(view.status, "failed");
    assert.equal(view.failure.reason, "attempts_exhausted");
    assert.match(view.failure.message, /started 3 times/);
  });

  it("a run past its data.retention cannot be exported: 410 retention_expired", async () => {
    await insertFixtureRun(coordinator!, artifacts(), "run_expired0000000001", { episodes: 1, retention: "1h", storedAt: new Date(Date.now() - 2 * 3_600_000) });
    const res = await api("/v1/runs/run_expired0000000001/export", { method: "POST", json: { format: "mcap-bundle" } });
    const body = (await res.json()) as Json;
    assert.equal(res.status, 410, JSON.stringify(body));
    assert.equal(body.error.code, "retention_expired");
    assert.match(body.error.message, /data\.retention \("1h"\)/);
  });

  it("a ready export's download lapses after its availability: 410, and the sweep deletes the archive", async () => {
    await stop();
    await start({ availabilityMs: 1, sweepMs: 3_600_000 });
    await insertFixtureRun(coordinator!, artifacts(), "run_lapsed0000000001", { episodes: 1 });
    const created = (await (await api("/v1/runs/run_lapsed0000000001/export", { method: "POST", json: { format: "mcap-bundle" } })).json()) as Json;
    await coordinator!.archives.idle();
    const row = (await getExport(coordinator!.db, created.id))!;
    assert.equal(row.status, "ready");
    const view = (await (await api(`/v1/exports/${created.id}`)).json()) as Json;
    assert.equal(view.status, "expired");
    assert.equal(view.download_url, null);
    assert.equal(view.failure.reason, "availability");
    const download = await api(`/artifacts/exports/${created.id}/${row.file_name}`);
    assert.equal(download.status, 410);
    assert.equal(((await download.json()) as Json).error.code, "retention_expired");
    // The next start sweeps at once.
    await stop();
    await start({ availabilityMs: 1, sweepMs: 3_600_000 });
    assert.equal((await getExport(coordinator!.db, created.id))!.status, "expired");
    assert.equal(existsSync(join(artifacts(), ".exports", created.id)), false);
  });
});
