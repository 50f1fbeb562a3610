/**
 * Receipted data purge and retention over real HTTP: recordings in the artifact store on disk, a
 * DELETE /v1/data/{run_id}, then 410 retention_expired for every artifact URL of the run; and
 * artifacts past data.retention answering 410 before and after the sweeper removes them.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sweepRetention } from "../../coordinator/data/retention-sweeper.js";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { DEFAULT_ACCOUNT_ID } from "../../coordinator/store/accounts-repo.js";
import { insertPendingArtifact, markArtifactStored } from "../../coordinator/store/artifacts-repo.js";
import { markEpisodeDone } from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { TEST_ADMIN_KEY } from "./helpers.js";
import { testStoreOptions } from "../support/test-database.js";

type Json = Record<string, any>;

describe("data purge and retention (integration)", function () {
  this.timeout(30_000);
  let dir: string;
  let coordinator: RunningCoordinator;

  const call = (url: string, init: RequestInit = {}) => fetch(url, { ...init, headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } });
  const json = async (res: Response, status: number): Promise<Json> => {
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body));
    return body;
  };

  /** A run with one finished episode and one stored recording; returns the recording's URL and path. */
  async function storedRun(runId: string, options: { retention: string; storedAt: Date; end: boolean }): Promise<{ url: string; path: string }> {
    const db = coordinator.db;
    await runsRepo.insertRun(db, {
      id: runId, accountId: DEFAULT_ACCOUNT_ID, kind: "run", created: options.storedAt.toISOString(),
      request: { policy: {}, episodes: 1, data: { retention: options.retention, train_on_failures: false } },
      resolvedPins: { robot: "so101@3.10", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
      plan: { model: "so101", firmware: "3.10", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
      priority: "standard", episodesTotal: 1,
    });
    const episodeId = runsRepo.episodeId(runId, 0);
    await markEpisodeDone(db, episodeId, {
      cellId: "so101-a", outcome: "success", failureCluster: null, durationS: 20, resetS: 4, replaySpecJson: null, metaJson: null, evaluationJson: null,
      finishedAt: options.storedAt.toISOString(),
    });
    await insertPendingArtifact(db, { episodeId, runId, kind: "mcap", fileName: "episode-0.mcap", bytes: 5, sha256: "0".repeat(64) });
    await markArtifactStored(db, episodeId, "mcap", options.storedAt.toISOString());
    if (options.end) for (const status of ["scheduling", "running", "completed"] as const) await runsRepo.setRunStatus(db, runId, status);
    const folder = join(dir, "artifacts", runId, episodeId);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "episode-0.mcap"), "mcap!");
    return { url: `${coordinator.artifactUrl}/runs/${runId}/episodes/${episodeId}/episode-0.mcap`, path: join(folder, "episode-0.mcap") };
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-purge-"));
    coordinator = await startCoordinator(compileCoordinatorOptions({ port: 0, grpcPort: 0, dataDir: dir, apiKey: TEST_ADMIN_KEY, ...(await testStoreOptions(dir)) }));
  });

  after(async () => {
    await coordinator?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("purges a run's recordings with a receipt; afterwards its artifact URLs answer 410 retention_expired", async () => {
    const { url, path } = await storedRun("run_purge", { retention: "30d", storedAt: new Date(), end: true });
    assert.equal(await (await call(url)).text(), "mcap!");

    const receipt = await json(await call(`${coordinator.baseUrl}/v1/data/run_purge`, { method: "DELETE" }), 200);
    assert.equal(receipt.object, "purge_receipt");
    assert.match(receipt.id, /^purge_/);
    assert.equal(receipt.run_id, "run_purge");
    assert.equal(receipt.status, "completed");
    assert.ok(Date.parse(receipt.purged_at) > 0);
    assert.equal(existsSync(path), false);
    assert.equal((await json(await call(url), 410)).error.code, "retention_expired");
    const listed = await json(await call(`${coordinator.baseUrl}/v1/runs/run_purge/episodes?artifact=mcap`), 200);
    assert.deepEqual(listed.data.map((a: Json) => [a.status, a.url]), [["purged", null]]);

    assert.equal((await json(await call(`${coordinator.baseUrl}/v1/data/run_nope`, { method: "DELETE" }), 404)).error.code, "not_found");
    await storedRun("run_open", { retention: "30d", storedAt: new Date(), end: false });
    assert.equal((await json(await call(`${coordinator.baseUrl}/v1/data/run_open`, { method: "DELETE" }), 422)).error.code, "contract_validation_failed");
  });

  it("answers 410 for recordings past data.retention, and the sweeper deletes them", async () => {
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    const expired = await storedRun("run_old", { retention: "1h", storedAt: twoHoursAgo, end: true });
    const kept = await storedRun("run_kept", { retention: "3h", storedAt: twoHoursAgo, end: true });
    assert.equal((await json(await call(expired.url), 410)).error.code, "retention_expired");
    assert.equal((await call(kept.url)).status, 200);

    assert.equal(await sweepRetention(coordinator.db, coordinator.objects, new Date()), 1);
    assert.equal(existsSync(expired.path), false);
    assert.equal(existsSync(kept.path), true);
    const receipts = await coordinator.db.prepare("SELECT run_id, reason FROM purges WHERE run_id = 'run_old'").all();
    assert.deepEqual(receipts, [{ run_id: "run_old", reason: "retention" }]);
    assert.equal((await json(await call(expired.url), 410)).error.code, "retention_expired");
  });
});
