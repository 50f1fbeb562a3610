/**
 * The headline's ICC prior learns from the fleet, over real HTTP: GET /v1/statistics/priors shows
 * the default before enough completed multi-cell runs exist and a fitted prior after a refit; a run
 * submitted before the refit keeps the default in its Result however often it is recomputed, and a
 * run submitted after it records the fitted prior. No cells: episodes are finished through the
 * store functions the cell link uses, and the refit is the function the periodic job runs.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { refitHeadlinePriors } from "../../coordinator/runs/headline-priors.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { DEFAULT_HEADLINE_PRIOR } from "../../coordinator/stats/beta-binomial-rate.js";
import { ICC_PRIOR_FIT } from "../../coordinator/stats/icc-prior-fit.js";
import { DEFAULT_ACCOUNT_ID } from "../../coordinator/store/accounts-repo.js";
import { listEpisodeRecords, markEpisodeDone } from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { transact } from "../../coordinator/store/tx.js";
import { TEST_ADMIN_KEY } from "./helpers.js";
import { testStoreOptions } from "../support/test-database.js";

type Json = Record<string, any>;

const CELLS = ["so101-a", "so101-b", "so101-c"];
const RUN_BODY = {
  kind: "run", robot: "so101@latest", environment: "tabletop@1", task: "pick-cube@v1", episodes: 6,
  policy: { type: "container", image: "assay/ref-policy:expert", action_space: { type: "joint_position", dim: 6 }, observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] } },
};

describe("the headline prior learns from the fleet (integration)", function () {
  this.timeout(60_000);
  let dir: string;
  let coordinator: RunningCoordinator;

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${coordinator.baseUrl}${path}`, { ...init, headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, "content-type": "application/json" } });
  const json = async (res: Response, status: number): Promise<Json> => {
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body));
    return body;
  };
  const priorOf = async (model: string, environmentClass: string) => {
    const list = await json(await call("/v1/statistics/priors"), 200);
    return list.data.find((e: Json) => e.robot_model === model && e.environment_class === environmentClass)?.prior;
  };

  /** Finishes every pending episode of the run, round-robin over CELLS, `successes(i)` deciding each outcome. */
  async function finishEpisodes(runId: string, successes: (cell: number, i: number) => boolean): Promise<void> {
    for (const [i, episode] of (await listEpisodeRecords(coordinator.db, runId)).entries()) {
      const cell = i % CELLS.length;
      await markEpisodeDone(coordinator.db, episode.id, {
        cellId: CELLS[cell], outcome: successes(cell, i) ? "success" : "failure", failureCluster: successes(cell, i) ? null : "missed_grasp",
        durationS: 10, resetS: 2, replaySpecJson: null, metaJson: null, evaluationJson: null, finishedAt: new Date().toISOString(),
      });
    }
  }

  /** A completed run of another account's fleet history on three cells, inserted the way the store holds one. */
  async function completedFleetRun(index: number): Promise<void> {
    const runId = `run_fleet${index}`;
    await runsRepo.insertRun(coordinator.db, {
      id: runId, accountId: DEFAULT_ACCOUNT_ID, kind: "run", created: new Date().toISOString(),
      request: { policy: {}, episodes: 30 },
      resolvedPins: { robot: "so101@3.10", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
      plan: { model: "so101", firmware: "3.10", environment: "tabletop@1", seed: index, control_rate_hz: 30, max_duration_s: 20 },
      priority: "standard", episodesTotal: 30,
    });
    // Cells that barely differ: rates 0.5, 0.6, 0.5 (deterministic pattern per cell).
    await finishEpisodes(runId, (cell, i) => (Math.floor(i / CELLS.length) % 10) < (cell === 1 ? 6 : 5));
    for (const status of ["scheduling", "running", "completed"] as const) await runsRepo.setRunStatus(coordinator.db, runId, status);
  }

  /** Ends a submitted run the way the lifecycle ends one whose episodes all finished (no cell moved it to running here). */
  async function complete(runId: string): Promise<void> {
    for (const status of ["scheduling", "running"] as const) await runsRepo.setRunStatus(coordinator.db, runId, status);
    assert.equal(await coordinator.lifecycle.end(coordinator.db, runId, { status: "completed" }), true);
  }

  async function submit(): Promise<string> {
    const run = await json(await call("/v1/runs", { method: "POST", body: JSON.stringify(RUN_BODY) }), 201);
    return run.id as string;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-prior-"));
    coordinator = await startCoordinator(compileCoordinatorOptions({
      port: 0, grpcPort: 0, dataDir: dir, apiKey: TEST_ADMIN_KEY, priorRefitMs: 3_600_000, ...(await testStoreOptions(dir)),
    }));
  });

  after(async () => {
    await coordinator?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows the default before enough runs, a fitted prior after a refit, and an issued result keeps its prior", async () => {
    // Before: every robot model and environment class is listed, with the default.
    const list = await json(await call("/v1/statistics/priors"), 200);
    assert.equal(list.object, "list");
    assert.equal(list.url, "/v1/statistics/priors");
    assert.ok(list.data.length >= 4, "each robot model x each environment class");
    for (const entry of list.data) assert.deepEqual(entry.prior, DEFAULT_HEADLINE_PRIOR);
    assert.deepEqual(await priorOf("so101", "standard"), DEFAULT_HEADLINE_PRIOR);

    // Run A, submitted under the default, finished and completed.
    const first = await submit();
    await finishEpisodes(first, (cell) => cell !== 2);
    await complete(first);
    const issued = await json(await call(`/v1/runs/${first}/result`), 200);
    assert.deepEqual(issued.cells.prior, DEFAULT_HEADLINE_PRIOR);

    // Too few runs: a refit keeps the default.
    for (let i = 0; i < ICC_PRIOR_FIT.minRuns - 2; i++) await completedFleetRun(i);
    assert.deepEqual(await refitHeadlinePriors(coordinator.db, new Date()), []);
    assert.deepEqual(await priorOf("so101", "standard"), DEFAULT_HEADLINE_PRIOR);

    // Enough runs: the refit stores a fitted prior, which GET shows.
    for (let i = ICC_PRIOR_FIT.minRuns - 2; i < ICC_PRIOR_FIT.minRuns + 2; i++) await completedFleetRun(i);
    const fittedAt = new Date();
    assert.deepEqual(await refitHeadlinePriors(coordinator.db, fittedAt), ["so101/standard"]);
    const fitted = await priorOf("so101", "standard");
    assert.equal(fitted.source, "fleet");
    assert.equal(fitted.fitted_on_runs, ICC_PRIOR_FIT.minRuns + 3, "the fleet runs and run A (three cells each)");
    assert.equal(fitted.fitted_at, fittedAt.toISOString());
    assert.deepEqual(fitted.rate, DEFAULT_HEADLINE_PRIOR.rate);
    assert.notDeepEqual(fitted.icc, DEFAULT_HEADLINE_PRIOR.icc);
    const { a, b } = fitted.icc.parameters;
    assert.ok(a / (a + b) >= ICC_PRIOR_FIT.floorMean - 1e-6, `fitted mean ${a / (a + b)} holds the floor`);
    assert.deepEqual(await priorOf("so101", "replica"), DEFAULT_HEADLINE_PRIOR, "other classes keep the default");
    // A refit that learns nothing new stores nothing.
    assert.deepEqual(await refitHeadlinePriors(coordinator.db, new Date()), []);

    // Run A's result, recomputed after the refit, is unchanged: it keeps the prior it was issued with.
    await transact(coordinator.db, (tx) => coordinator.lifecycle.refreshResult(tx, first));
    const recomputed = await json(await call(`/v1/runs/${first}/result`), 200);
    assert.deepEqual(recomputed.cells.prior, DEFAULT_HEADLINE_PRIOR);
    assert.deepEqual(recomputed.ci95, issued.ci95);

    // Run B, submitted after the refit, records the fitted prior.
    const second = await submit();
    await finishEpisodes(second, (cell) => cell !== 2);
    await complete(second);
    const later = await json(await call(`/v1/runs/${second}/result`), 200);
    assert.deepEqual(later.cells.prior, fitted);
    assert.equal(later.n, issued.n);
  });

  it("is declared in the OpenAPI document", async () => {
    const doc = await json(await call("/v1/openapi.json"), 200);
    assert.ok(doc.paths["/v1/statistics/priors"]?.get, "GET /v1/statistics/priors is in the document");
  });
});
