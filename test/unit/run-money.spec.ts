/**
 * The budget guard's reading of a capped run's money (coordinator/scheduler/run-money.ts) from one
 * aggregate statement bounds the Result's metering, and is it to the bit when the bounds are equal:
 * random runs of two units with durations in milliseconds, interruptions and every status, on both
 * engines, against `meterByUnit` over the run's episodes; a sum on a rounding boundary, where the
 * engine's order of addition could round the other way, gives two bounds, and the exact reading is the
 * Result's. Likewise an account's month (the hard budget's check) against `computeUsage` over runs and
 * episodes of three months.
 */
import assert from "node:assert/strict";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { episodeEstimateUsd } from "../../coordinator/runs/estimates.js";
import { meterByUnit, roundedHoursBetween, runMeterContexts } from "../../coordinator/runs/meters.js";
import { readRunMoney, readRunMoneyExactly, type RunMoneyRead } from "../../coordinator/scheduler/run-money.js";
import { monthSpendUsd } from "../../coordinator/billing/month-spend.js";
import { computeUsage } from "../../coordinator/billing/usage.js";
import type { Db } from "../../coordinator/store/database.js";
import { listEpisodeRecords } from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";
import { mulberry32 } from "../../protocol/prng.js";

const pins = loadFirmwarePins();
const PLAN = { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 };
const SO101 = { key: "so101@3.11/tabletop@1", robot: "so101@3.11", model: "so101", firmware: "3.11", environment: "tabletop@1", task: "pick-cube@v1", policy: {} };
const FR3 = { key: "fr3@5.9.0/tabletop@1", robot: "fr3@5.9.0", model: "fr3", firmware: "5.9.0", environment: "tabletop@1", task: "pick-cube@v1", policy: {} };
const STATUSES = ["pending", "assigned", "running", "done", "done", "done", "cancelled", "unlabelled"] as const;

/** A seeded draw in [0, 1) (the contract's mulberry32). */
const draws = mulberry32;

/** The bounds hold the exact cost and are it when equal; the estimates are the exact ones. */
function assertBounds(bounds: Awaited<ReturnType<typeof readRunMoney>>, expected: RunMoneyRead, what: string): void {
  const { spentLowUsd, spentHighUsd, ...rest } = bounds;
  assert.ok(spentLowUsd <= expected.spentUsd && expected.spentUsd <= spentHighUsd, `${what}: ${spentLowUsd} <= ${expected.spentUsd} <= ${spentHighUsd}`);
  if (spentLowUsd === spentHighUsd) assert.equal(spentLowUsd, expected.spentUsd, what);
  assert.deepEqual(rest, { inFlightUsd: expected.inFlightUsd, firstPendingUsd: expected.firstPendingUsd }, what);
}

for (const engine of STORE_ENGINES) {
  describe(`run money from aggregates (${engine})`, () => {
    let db: Db;

    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
    });

    afterEach(() => db.close());

    async function insertRun(id: string, episodes: number, created = "2026-11-15T00:00:00.000Z"): Promise<void> {
      await runsRepo.insertRun(db, {
        id, accountId: "acct_1", kind: "matrix", created, request: { kind: "matrix", max_budget_usd: 100 },
        resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
        plan: PLAN, priority: "standard", episodesTotal: episodes, units: [SO101, FR3],
        episodes: Array.from({ length: episodes }, (_, i) => ({ unit: i % 2, seed: i })),
      });
    }

    async function setEpisode(runId: string, idx: number, o: { status: string; durationS: number | null; resetS: number | null; interruptions: unknown[]; finishedAt?: string }): Promise<void> {
      await db.prepare("UPDATE episodes SET status = ?, duration_s = ?, reset_s = ?, interruptions = ?, cell_id = ?, finished_at = ? WHERE id = ?")
        .run(o.status, o.durationS, o.resetS, JSON.stringify(o.interruptions), o.status === "pending" ? null : "cell-a", o.finishedAt ?? null, runsRepo.episodeId(runId, idx));
    }

    /** What the guard read before: the Result's metering over every episode, the estimates in index order. */
    async function reference(runId: string) {
      const run = (await runsRepo.getRun(db, runId))!;
      const contexts = runMeterContexts(pins, run);
      const perEpisodeUsd = contexts.map((c) => episodeEstimateUsd(run.plan, c));
      const episodes = await listEpisodeRecords(db, runId);
      return {
        contexts, perEpisodeUsd,
        expected: {
          spentUsd: meterByUnit(contexts, episodes).total.costUsd,
          inFlightUsd: episodes.filter((e) => e.status === "assigned" || e.status === "running").reduce((sum, e) => sum + perEpisodeUsd[e.unit], 0),
          firstPendingUsd: episodes.filter((e) => e.status === "pending").map((e) => perEpisodeUsd[e.unit])[0],
        },
      };
    }

    it("equals the metering of the run's episodes on random runs", async () => {
      for (const seed of [1, 2, 3, 4, 5, 6]) {
        const random = draws(seed);
        const runId = `run_${seed}`;
        const n = 150 + Math.floor(random() * 150);
        await insertRun(runId, n);
        for (let idx = 0; idx < n; idx++) {
          const status = STATUSES[Math.floor(random() * STATUSES.length)];
          const ms = (max: number) => Math.round(random() * max * 1000) / 1000;
          const interruptions = random() < 0.15
            ? [{ attempt: 1, cell: "cell-a", at: "2026-11-15T01:00:00.000Z", reason: "link_lost", duration_s: ms(30) }, ...(random() < 0.3 ? [{ attempt: 2, cell: "cell-b", at: "2026-11-15T02:00:00.000Z", reason: "estop", duration_s: null }] : [])]
            : [];
          await setEpisode(runId, idx, { status, durationS: random() < 0.05 ? null : ms(60), resetS: random() < 0.3 ? null : ms(10), interruptions });
        }
        const { contexts, perEpisodeUsd, expected } = await reference(runId);
        assertBounds(await readRunMoney(db, runId, contexts, perEpisodeUsd), expected, `seed ${seed}`);
        assert.deepEqual(await readRunMoneyExactly(db, runId, contexts, perEpisodeUsd), expected, `seed ${seed}`);
      }
    });

    it("a sum on a rounding boundary is metered exactly as the Result meters it", async () => {
      // 0.0018 s is half of 1e-6 h: which way unit 0 rounds is decided by the last bits of its sum.
      await insertRun("run_edge", 4);
      await setEpisode("run_edge", 0, { status: "done", durationS: 0.0009, resetS: 0.0009, interruptions: [] });
      await setEpisode("run_edge", 3, { status: "done", durationS: 3600, resetS: 0.0018, interruptions: [] });
      await setEpisode("run_edge", 1, { status: "running", durationS: null, resetS: null, interruptions: [] });
      assert.deepEqual(roundedHoursBetween({ seconds: 0.0018, absSeconds: 0.0018, terms: 2 }), { low: 0, high: 1e-6 });
      const { contexts, perEpisodeUsd, expected } = await reference("run_edge");
      const bounds = await readRunMoney(db, "run_edge", contexts, perEpisodeUsd);
      assertBounds(bounds, expected, "edge");
      assert.deepEqual(await readRunMoneyExactly(db, "run_edge", contexts, perEpisodeUsd), expected);
    });

    it("an account's month equals its usage total, over runs and episodes of three months", async () => {
      const months = ["2026-10", "2026-11", "2026-12"];
      const random = draws(7);
      const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
      const stamp = (month: string) => `${month}-${String(1 + Math.floor(random() * 28)).padStart(2, "0")}T${String(Math.floor(random() * 24)).padStart(2, "0")}:17:09.${String(Math.floor(random() * 1000)).padStart(3, "0")}Z`;
      for (let r = 0; r < 6; r++) {
        const runId = `run_acct_${r}`;
        const n = 40 + Math.floor(random() * 60);
        await insertRun(runId, n, `${pick(months.slice(0, 2))}-0${1 + r}T00:00:00.000Z`);
        for (let idx = 0; idx < n; idx++) {
          const status = STATUSES[Math.floor(random() * STATUSES.length)];
          const ms = (max: number) => Math.round(random() * max * 1000) / 1000;
          const interruptions = random() < 0.2 ? [{ attempt: 1, cell: "cell-a", at: stamp(pick(months)), reason: "link_lost", duration_s: ms(30) }] : [];
          const finished = status === "done" || status === "unlabelled";
          await setEpisode(runId, idx, { status, durationS: ms(60), resetS: random() < 0.3 ? null : ms(10), interruptions, ...(finished ? { finishedAt: stamp(pick(months)) } : {}) });
        }
      }
      for (const period of months) {
        const usage = (await computeUsage(db, pins, "acct_1", period)).usdTotal;
        const spend = await monthSpendUsd(db, pins, "acct_1", period);
        assert.ok(usage > 0 && spend.lowUsd <= usage && usage <= spend.highUsd, `${period}: ${spend.lowUsd} <= ${usage} <= ${spend.highUsd}`);
        assert.equal(await spend.exact(), usage, period);
      }
      // A finished_at the coordinator would not write (no milliseconds): the month is computed by computeUsage itself.
      await setEpisode("run_acct_0", 0, { status: "done", durationS: 1234.5, resetS: 1, interruptions: [], finishedAt: "2026-11-20T10:00:00Z" });
      const usage = (await computeUsage(db, pins, "acct_1", "2026-11")).usdTotal;
      const spend = await monthSpendUsd(db, pins, "acct_1", "2026-11");
      assert.deepEqual([spend.lowUsd, spend.highUsd], [usage, usage]);
    });

    it("interruption lists not written as the coordinator writes them are metered from the rows", async () => {
      await insertRun("run_odd", 4);
      await setEpisode("run_odd", 0, { status: "done", durationS: 10, resetS: 1, interruptions: [] });
      await setEpisode("run_odd", 2, { status: "running", durationS: null, resetS: null, interruptions: [] });
      const entry = { attempt: 1, cell: "cell-a", at: "2026-11-15T01:00:00.000Z", reason: "link_lost", duration_s: 7.25 };
      await db.prepare("UPDATE episodes SET interruptions = ? WHERE id = ?").run("[ ]", runsRepo.episodeId("run_odd", 0));
      await db.prepare("UPDATE episodes SET interruptions = ? WHERE id = ?").run(` ${JSON.stringify([entry])} `, runsRepo.episodeId("run_odd", 2));
      const { contexts, perEpisodeUsd, expected } = await reference("run_odd");
      assert.ok(expected.spentUsd > 0);
      const bounds = await readRunMoney(db, "run_odd", contexts, perEpisodeUsd);
      assert.deepEqual([bounds.spentLowUsd, bounds.spentHighUsd], [expected.spentUsd, expected.spentUsd]);
      assertBounds(bounds, expected, "odd");
    });

    it("a run with nothing metered costs nothing, and its next pending episode is the lowest index", async () => {
      await insertRun("run_new", 6);
      await setEpisode("run_new", 0, { status: "cancelled", durationS: null, resetS: null, interruptions: [] });
      const { contexts, perEpisodeUsd, expected } = await reference("run_new");
      const money = await readRunMoney(db, "run_new", contexts, perEpisodeUsd);
      assertBounds(money, expected, "new");
      assert.equal(money.firstPendingUsd, perEpisodeUsd[1]);
      assert.deepEqual([money.spentLowUsd, money.spentHighUsd], [0, 0]);
    });
  });
}
