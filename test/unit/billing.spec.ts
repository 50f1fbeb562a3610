/**
 * Metering arithmetic, usage by month, and the budget guard over a real SQLite store (in memory)
 * with the real run lifecycle; the cells are the only double (they record CancelEpisode).
 */
import assert from "node:assert/strict";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { createBudgetGuard } from "../../coordinator/scheduler/budget-guard.js";
import { putBudget } from "../../coordinator/billing/budgets.js";
import { costOfSecondsUsd, episodeEstimateS, priceSeconds } from "../../coordinator/runs/estimates.js";
import { computeUsage, episodesMeteredIn } from "../../coordinator/billing/usage.js";
import { computeMeters, type MeterContext } from "../../coordinator/runs/meters.js";
import { RunEvents } from "../../coordinator/runs/run-events.js";
import { createRunLifecycle, type RunLifecycle } from "../../coordinator/lifecycle/run-lifecycle.js";
import type { Db } from "../../coordinator/store/database.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";
import { assignEpisode, episodeRecordOf, getEpisode, markEpisodeDone, requeueEpisode, type EpisodeRow } from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";

const SOAK_STANDARD: MeterContext = { tier: "soak", environmentClass: "standard", priority: "standard" };

function episode(partial: Partial<EpisodeRow>): EpisodeRow {
  return {
    id: "e", run_id: "r", idx: 0, status: "done", attempt: 1, seed: 1, cell_id: "c", outcome: "success", failure_cluster: null,
    duration_s: 20, reset_s: 4, replay_spec: null, meta: null, evaluation: null, interruptions: "[]", assigned_at: null, started_at: null,
    finished_at: "2026-11-10T00:00:00.000Z", ...partial,
  };
}

describe("billing: meters, estimates, usage", () => {
  it("prices occupancy with the Result's rounding (hours to 6 decimals, then cents)", () => {
    assert.equal(episodeEstimateS({ max_duration_s: 20 }), 30);
    assert.deepEqual(priceSeconds(30, SOAK_STANDARD), { robotHours: 0.008333, environmentHours: 0.008333, costUsd: 0.18 });
    assert.ok(Math.abs(costOfSecondsUsd(30, SOAK_STANDARD) - 30 / 3600 * 22) < 1e-12);
    // 20 episodes x 30 s on the verify tier in a replica at burst priority: (65 + 12) x 1.5 $/h.
    assert.deepEqual(priceSeconds(600, { tier: "verify", environmentClass: "replica", priority: "burst" }), { robotHours: 0.166667, environmentHours: 0.166667, costUsd: 19.25 });
    assert.equal(priceSeconds(600, { ...SOAK_STANDARD, priority: "soak" }).costUsd, 2.93);
  });

  it("meters interrupted attempts as well as finished episodes", () => {
    const episodes = [
      episode({}),
      episode({ id: "e2", status: "pending", outcome: null, duration_s: null, reset_s: null, interruptions: JSON.stringify([{ attempt: 1, cell: "c", reason: "link_lost", detail: "", at: "2026-11-10T00:00:00.000Z", duration_s: 6 }]) }),
    ];
    assert.deepEqual(computeMeters(episodes.map(episodeRecordOf), SOAK_STANDARD), { robotHours: 0.008333, environmentHours: 0.008333, costUsd: 0.18 });
  });

  it("splits a run's attempts by the UTC month they were metered in", () => {
    const episodes = [
      episode({ finished_at: "2026-10-31T23:59:59.000Z" }),
      episode({ id: "e2", finished_at: "2026-11-01T00:00:01.000Z", interruptions: JSON.stringify([{ attempt: 1, cell: "c", reason: "estop", detail: "", at: "2026-10-31T23:00:00.000Z", duration_s: 12 }]) }),
    ];
    const records = episodes.map(episodeRecordOf);
    assert.equal(computeMeters(episodesMeteredIn(records, "2026-10"), SOAK_STANDARD).robotHours, 0.01); // 24 + 12 s
    assert.equal(computeMeters(episodesMeteredIn(records, "2026-11"), SOAK_STANDARD).robotHours, 0.006667); // 24 s
    assert.equal(computeMeters(episodesMeteredIn(records, "2026-12"), SOAK_STANDARD).robotHours, 0);
  });
});

for (const engine of STORE_ENGINES) {
  describe(`billing: budget guard (${engine})`, () => {
    let db: Db;
    let cancels: Array<[string, string, string]>;
    let lifecycle: RunLifecycle;
    const pins = loadFirmwarePins();
    const now = () => new Date("2026-11-15T12:00:00.000Z");

    async function insertRun(id: string, request: Record<string, unknown>, episodes = 5): Promise<void> {
      await runsRepo.insertRun(db, {
        id, accountId: "acct_1", kind: "run", created: "2026-11-15T00:00:00.000Z", request,
        resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
        plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
        priority: "standard", episodesTotal: episodes,
      });
    }
    const ep = (runId: string, idx: number) => runsRepo.episodeId(runId, idx);
    const finish = (runId: string, idx: number, outcome: "success" | "failure" = "success") => markEpisodeDone(db, ep(runId, idx), {
      cellId: "c1", outcome, failureCluster: null, durationS: 20, resetS: 4, replaySpecJson: null, metaJson: null, evaluationJson: null, finishedAt: now().toISOString(),
    });

    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
      cancels = [];
      lifecycle = createRunLifecycle({
        runEvents: new RunEvents(), pins, baseUrl: "http://x", streamsUrl: "ws://x/streams", now,
        cells: { cancelEpisode: async (cell, episodeId, reason) => (cancels.push([cell, episodeId, reason]), true) },
      });
    });

    afterEach(() => db.close());

    it("assigns only episodes whose estimate fits under max_budget_usd, counting those in flight", async () => {
      await insertRun("run_a", { max_budget_usd: 0.4 });
      await insertRun("run_free", {});
      const guard = createBudgetGuard({ db, lifecycle, pins, now });
      assert.equal(await guard.episodeAllowance("run_free"), Infinity);
      assert.equal(await guard.episodeAllowance("run_a"), 2); // 0.40 / 0.1833
      await assignEpisode(db, ep("run_a", 0), "c1", now().toISOString());
      assert.equal(await guard.episodeAllowance("run_a"), 1);
      await finish("run_a", 0); // $0.15 metered
      assert.equal(await guard.episodeAllowance("run_a"), 1);
      await assignEpisode(db, ep("run_a", 1), "c1", now().toISOString());
      assert.equal(await guard.episodeAllowance("run_a"), 0);
    });

    it("halts when the metered cost reaches the cap through an interrupted attempt, cancelling what is held", async () => {
      await insertRun("run_b", { max_budget_usd: 0.4 });
      const guard = createBudgetGuard({ db, lifecycle, pins, now });
      await assignEpisode(db, ep("run_b", 0), "c1", now().toISOString());
      await finish("run_b", 0, "failure");
      await assignEpisode(db, ep("run_b", 1), "c1", now().toISOString());
      await assignEpisode(db, ep("run_b", 2), "c2", now().toISOString());
      // Attempt 1 of episode 1 overran: 50 s of robot time, then the link dropped. 74 s = $0.45.
      await requeueEpisode(db, ep("run_b", 1), "c1", { reason: "link_lost", detail: "", at: now().toISOString(), duration_s: 50 });
      await guard.afterEpisodeMetered("run_b");

      const run = (await runsRepo.getRunRow(db, "run_b"))!;
      assert.equal(run.status, "stopped");
      assert.equal(run.status_code, "budget_exceeded");
      const result = JSON.parse(run.result!);
      assert.equal(result.n, 1);
      assert.equal(result.success_rate, 0);
      assert.equal(result.cost_usd, 0.45);
      assert.deepEqual(cancels.map(([cell, id]) => [cell, id]), [["c2", ep("run_b", 2)]]);
      assert.equal((await getEpisode(db, ep("run_b", 3)))!.status, "cancelled");
      assert.equal((await getEpisode(db, ep("run_b", 1)))!.status, "cancelled");
    });

    it("halts every open run of an account at its hard monthly budget, and only when hard", async () => {
      await insertRun("run_c", {});
      await insertRun("run_d", {});
      await assignEpisode(db, ep("run_c", 0), "c1", now().toISOString());
      await finish("run_c", 0); // $0.15 this month
      const guard = createBudgetGuard({ db, lifecycle, pins, now });
      await putBudget(db, "acct_1", { monthlyUsd: 0.1, hard: false }, now());
      assert.equal(await guard.checkAccount("acct_1"), 0);
      await putBudget(db, "acct_1", { monthlyUsd: 0.1, hard: true }, now());
      assert.equal(await guard.checkAccount("acct_1"), 2);
      assert.deepEqual([(await runsRepo.getRunRow(db, "run_c"))!.status_code, (await runsRepo.getRunRow(db, "run_d"))!.status_code], ["monthly_budget_exceeded", "monthly_budget_exceeded"]);
      assert.equal((await computeUsage(db, pins, "acct_1", "2026-11")).usdTotal, 0.15);
    });
  });
}
