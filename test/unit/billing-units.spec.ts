/**
 * Money of multi-unit runs: the one metering path (every episode at its unit's tier and class),
 * the rounding rule shared by Results and usage, the budget guard pricing the next episode at its
 * unit's rates, per-unit quotes, and late finishes of episodes a halt cancelled. Real SQLite (in
 * memory) and the real run lifecycle; the cells are the only double.
 */
import assert from "node:assert/strict";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { affordablePrefix, createBudgetGuard } from "../../coordinator/scheduler/budget-guard.js";
import { episodeEstimateUsd } from "../../coordinator/runs/estimates.js";
import { createQuote, plannedEpisodesPerUnit } from "../../coordinator/billing/quotes.js";
import { computeUsage } from "../../coordinator/billing/usage.js";
import { headlineResult, unitResults } from "../../coordinator/kinds/unit-results.js";
import { computeMeters, meterByUnit, runMeterContexts, sumMeters, type MeterContext, type MeteredEpisode } from "../../coordinator/runs/meters.js";
import { RunEvents } from "../../coordinator/runs/run-events.js";
import { createRunLifecycle, type RunLifecycle } from "../../coordinator/lifecycle/run-lifecycle.js";
import type { ValidatedRun } from "../../coordinator/runs/run-request.js";
import type { Db } from "../../coordinator/store/database.js";
import { transact } from "../../coordinator/store/tx.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";
import { assignEpisode, getEpisode, listEpisodeRecords, markEpisodeDone, markEpisodeRunning, requeueEpisode } from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";

const pins = loadFirmwarePins();
const SOAK: MeterContext = { tier: "soak", environmentClass: "standard", priority: "standard" };
const VERIFY: MeterContext = { tier: "verify", environmentClass: "standard", priority: "standard" };
const PLAN = { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 };
const SO101 = { key: "so101@3.11/tabletop@1", robot: "so101@3.11", model: "so101", firmware: "3.11", environment: "tabletop@1", task: "pick-cube@v1", policy: {} };
const FR3 = { key: "fr3@5.9.0/tabletop@1", robot: "fr3@5.9.0", model: "fr3", firmware: "5.9.0", environment: "tabletop@1", task: "pick-cube@v1", policy: {} };

const done = (seconds: number, unit: number): MeteredEpisode & { unit: number } => ({ status: "done", durationS: seconds, resetS: 0, interruptions: [], unit });

describe("billing units: one metering path", () => {
  it("prices each episode at its own unit's tier and class; the run is the sum of its unit lines", () => {
    const contexts = runMeterContexts(pins, { id: "r", priority: "standard", units: [SO101, FR3] });
    assert.deepEqual(contexts, [SOAK, VERIFY]);
    const { lines, total } = meterByUnit(contexts, [done(1800, 0), done(1800, 1), done(1800, 0)]);
    assert.deepEqual(lines.map((l) => l.meters), [
      { robotHours: 1, environmentHours: 1, costUsd: 22 }, // so101: 18 + 4 $/h
      { robotHours: 0.5, environmentHours: 0.5, costUsd: 34.5 }, // fr3: (65 + 4) / 2
    ]);
    assert.deepEqual(total, { robotHours: 1.5, environmentHours: 1.5, costUsd: 56.5 });
    // The first unit's rates for everything (the old behaviour) would have said 33.
    assert.equal(computeMeters([done(1800, 0), done(1800, 1), done(1800, 0)], SOAK).costUsd, 33);
  });

  it("kind run is one unit, its plan", () => {
    assert.deepEqual(runMeterContexts(pins, runsRepo.runRecordOf({
      id: "r", account_id: "a", kind: "run", status: "queued", created: "", completed: null, request: "{}", plan: JSON.stringify(PLAN), result: null, status_code: null,
      status_message: null, idempotency_key: null, priority: "burst", episodes_total: 0, units: null, kind_state: null,
      resolved_pins: JSON.stringify({ robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" }),
    })), [{ ...SOAK, priority: "burst" }]);
  });

  it("rounds each unit line to 6-decimal hours and cents, then sums the lines", () => {
    // 10 s on each unit: lines $0.06 (0.002778 h x 22) and $0.19 (0.002778 h x 69).
    const { lines, total } = meterByUnit([SOAK, VERIFY], [done(10, 0), done(10, 1)]);
    assert.deepEqual(lines.map((l) => l.meters.costUsd), [0.06, 0.19]);
    assert.equal(total.costUsd, 0.25);
    assert.equal(total.robotHours, 0.005556);
    // Summing lines, not re-metering the union: three 1 s lines are 3 x 0.000278 h.
    assert.equal(sumMeters([1, 1, 1].map((s) => computeMeters([done(s, 0)], SOAK))).robotHours, 0.000834);
    assert.equal(computeMeters([done(1, 0), done(1, 0), done(1, 0)], SOAK).robotHours, 0.000833);
    // Float noise removed: 0.1 + 0.2 cents-lines add to exactly 0.3.
    assert.equal(sumMeters([{ robotHours: 0, environmentHours: 0, costUsd: 0.1 }, { robotHours: 0, environmentHours: 0, costUsd: 0.2 }]).costUsd, 0.3);
  });

  it("the prefix of next episodes that fits a budget, each at its own estimate", () => {
    assert.equal(affordablePrefix(1, [0.18, 0.58, 0.18]), 3); // 0.18 + 0.58 + 0.18 = 0.94
    assert.equal(affordablePrefix(0.7, [0.18, 0.58, 0.18]), 1); // the fr3 episode does not fit; nothing after it is offered
    assert.equal(affordablePrefix(0.1, [0.18]), 0);
  });
});

for (const engine of STORE_ENGINES) {
  describe(`billing units: a mixed-tier run in the store (${engine})`, () => {
    let db: Db;
    let cancels: Array<[string, string]>;
    let lifecycle: RunLifecycle;
    const now = () => new Date("2026-11-15T12:00:00.000Z");
    const at = now().toISOString();
    const ep = (runId: string, idx: number) => runsRepo.episodeId(runId, idx);
    const finish = (runId: string, idx: number, cellId: string, durationS: number, attempt?: number) => markEpisodeDone(db, ep(runId, idx), {
      cellId, outcome: "success", failureCluster: null, durationS, resetS: 4, replaySpecJson: null, metaJson: null, evaluationJson: null, finishedAt: at, attempt,
    });

    /** A matrix over so101 (soak tier) and fr3 (verify tier) in tabletop@1: episodes alternate units. */
    async function insertMatrix(id: string, request: Record<string, unknown>, perUnit = 2): Promise<void> {
      const episodes = Array.from({ length: perUnit * 2 }, (_, i) => ({ unit: i % 2, seed: i }));
      await runsRepo.insertRun(db, {
        id, accountId: "acct_1", kind: "matrix", created: "2026-11-15T00:00:00.000Z", request: { kind: "matrix", ...request },
        resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
        plan: PLAN, priority: "standard", episodesTotal: episodes.length, units: [SO101, FR3], episodes,
      });
    }

    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
      cancels = [];
      lifecycle = createRunLifecycle({
        runEvents: new RunEvents(), pins, baseUrl: "http://x", streamsUrl: "ws://x/streams", now,
        cells: { cancelEpisode: async (cell, episodeId) => (cancels.push([cell, episodeId]), true) },
      });
    });

    afterEach(() => db.close());

    it("the Result's cost is the sum of its units' and usage splits hours by each unit's tier", async () => {
      await insertMatrix("run_m", {});
      for (const [idx, cell] of [[0, "so101-b"], [1, "fr3-a"], [2, "so101-b"], [3, "fr3-a"]] as const) {
        await assignEpisode(db, ep("run_m", idx), cell, at);
        await finish("run_m", idx, cell, 20 + idx);
      }
      const run = (await runsRepo.getRun(db, "run_m"))!;
      const ctx = { pins, baseUrl: "http://x" };
      const episodes = await listEpisodeRecords(db, "run_m");
      const units = await unitResults(ctx, run, episodes);
      const pooled = await headlineResult(ctx, run, episodes, units, { units: [0], description: "cell 0" });
      // so101: 24 + 26 s = 0.013889 h x 22 = $0.31; fr3: 25 + 27 s = 0.014444 h x 69 = $1.00.
      assert.deepEqual(units.map((u) => u.result.cost_usd), [0.31, 1]);
      assert.equal(pooled.cost_usd, 1.31);
      assert.equal(pooled.robot_hours, 0.028333);
      const usage = await computeUsage(db, pins, "acct_1", "2026-11");
      assert.deepEqual(usage.robotHours, { verify: units[1].result.robot_hours, soak: units[0].result.robot_hours });
      assert.equal(usage.envHours.standard, pooled.environment_hours);
      assert.equal(usage.usdTotal, pooled.cost_usd);
    });

    it("max_budget_usd: the next episode is estimated at its own unit's rates", async () => {
      const soakUsd = episodeEstimateUsd(PLAN, SOAK); // 30 s x 22 $/h = 0.1833
      const verifyUsd = episodeEstimateUsd(PLAN, VERIFY); // 30 s x 69 $/h = 0.575
      await insertMatrix("run_b", { max_budget_usd: 0.7 });
      const guard = createBudgetGuard({ db, lifecycle, pins, now });
      // Pending by index: so101, fr3, so101, fr3. 0.1833 + 0.575 = 0.758 > 0.7: only the first fits.
      assert.equal(await guard.episodeAllowance("run_b"), 1);
      // Offered in another order (the fr3 cell idle first): fr3 then so101 fit? 0.575 + 0.1833 > 0.7: one.
      assert.equal(await guard.episodeAllowance("run_b", [{ unit: 1 }, { unit: 0 }]), 1);
      assert.equal(await guard.episodeAllowance("run_b", [{ unit: 0 }, { unit: 0 }, { unit: 0 }]), 3);
      await assignEpisode(db, ep("run_b", 0), "so101-b", at);
      await finish("run_b", 0, "so101-b", 20); // 24 s: $0.15 metered, $0.55 left, below the fr3 estimate
      assert.ok(0.7 - 0.15 < verifyUsd && 0.7 - 0.15 > soakUsd);
      assert.equal(await guard.episodeAllowance("run_b"), 0);
      await guard.afterEpisodeMetered("run_b");
      const stopped = (await runsRepo.getRunRow(db, "run_b"))!;
      assert.equal(stopped.status, "stopped");
      assert.equal(stopped.status_code, "budget_exceeded");
      assert.match(stopped.status_message!, /next episode may cost up to \$0\.58/);
    });

    it("records a late finish of an episode a halt cancelled, bills it once and keeps the run stopped", async () => {
      await insertMatrix("run_h", {});
      await assignEpisode(db, ep("run_h", 1), "fr3-a", at);
      await markEpisodeRunning(db, ep("run_h", 1), "fr3-a", at);
      // The link drops (the coordinator estimates 15 s), then the run is halted: the episode is cancelled.
      await requeueEpisode(db, ep("run_h", 1), "fr3-a", { reason: "link_lost", detail: "stream ended", at, duration_s: 15 });
      assert.ok(await lifecycle.end(db, "run_h", { status: "stopped", code: "budget_exceeded", message: "test halt" }));
      assert.equal((await getEpisode(db, ep("run_h", 1)))!.status, "cancelled");
      assert.equal(JSON.parse((await runsRepo.getRunRow(db, "run_h"))!.result!).cost_usd, 0.29); // 15 s at 69 $/h
      // The cell comes back and reports that attempt finished after 20 s + 4 s reset.
      assert.equal(await finish("run_h", 1, "fr3-a", 20, 1), true);
      await transact(db, (tx) => lifecycle.refreshResult(tx, "run_h"));
      const run = (await runsRepo.getRunRow(db, "run_h"))!;
      assert.equal(run.status, "stopped");
      const result = JSON.parse(run.result!);
      // The late finish counts in its unit (fr3); the matrix's top level is its first cell (so101) and its cost the whole run's.
      assert.equal(result.units[1].result.n, 1);
      assert.equal(result.n, 0);
      assert.equal(result.cost_usd, 0.46); // 24 s at 69 $/h, the 15 s estimate dropped
      assert.equal((await computeUsage(db, pins, "acct_1", "2026-11")).usdTotal, result.cost_usd);
      // An episode cancelled without ever running has nothing to finish.
      assert.equal(await finish("run_h", 2, "so101-b", 20, 1), false);
    });

    it("does not reopen a completed run's cancelled episode", async () => {
      await insertMatrix("run_c", {}, 1);
      await assignEpisode(db, ep("run_c", 1), "fr3-a", at);
      await requeueEpisode(db, ep("run_c", 1), "fr3-a", { reason: "link_lost", detail: "", at, duration_s: 5 });
      await db.prepare("UPDATE episodes SET status = 'cancelled' WHERE id = ?").run(ep("run_c", 1)); // a kind decided early
      assert.equal(await transact(db, (tx) => lifecycle.settleRequeued(tx, ep("run_c", 1))), false);
      assert.equal(await finish("run_c", 1, "fr3-a", 20, 1), false);
    });
  });
}

for (const engine of STORE_ENGINES) {
  describe(`billing units: quotes (${engine})`, () => {
    const validated = (over: Partial<ValidatedRun>): ValidatedRun => ({
      kind: "matrix", request: { kind: "matrix" }, plan: PLAN, priority: "standard", episodesTotal: 4,
      resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
      units: [SO101, FR3], episodes: [0, 1, 0, 1].map((unit, seed) => ({ unit, seed })), ...over,
    });

    it("prices n per unit at each unit's rates, summed with the Result's rounding", async () => {
      const db = await openTestDatabase(engine);
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
      const quote = await createQuote(db, pins, "acct_1", validated({}), new Date("2026-11-15T12:00:00.000Z")) as Record<string, any>;
      await db.close();
      assert.equal(quote.n, 4);
      assert.equal(quote.n_basis, "planned");
      // Each unit: 2 x 30 s = 0.016667 h; so101 x 22 = $0.37, fr3 x 69 = $1.15.
      assert.deepEqual(quote.units.map((u: any) => [u.key, u.n, u.tier, u.robot_hours, u.cost_usd]), [
        ["so101@3.11/tabletop@1", 2, "soak", 0.016667, 0.37],
        ["fr3@5.9.0/tabletop@1", 2, "verify", 0.016667, 1.15],
      ]);
      assert.equal(quote.cost_usd, 1.52);
      assert.equal(quote.robot_hours, 0.033334);
      assert.equal(quote.price.tier, null); // units differ
      assert.equal(quote.price.environment_class, "standard");
    });

    it("quotes a threshold run at its planned maximum per phase", () => {
      const threshold = validated({ kind: "threshold", plan: { ...PLAN, kind: { threshold: { max_episodes: 40 } } } as ValidatedRun["plan"], episodesTotal: 1, episodes: [{ unit: 0, seed: 0 }] });
      assert.deepEqual(plannedEpisodesPerUnit(threshold), { perUnit: [40, 40], basis: "maximum" });
      assert.deepEqual(plannedEpisodesPerUnit(validated({})), { perUnit: [2, 2], basis: "planned" });
    });
  });
}
