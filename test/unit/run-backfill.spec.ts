/**
 * Large runs are created a transaction at a time (coordinator/runs/run-backfill.ts): the run and
 * its first episodes commit together, the rest follow, and a crash in between is resumed at
 * start-up with exactly the episodes (ids, seeds, units) a single transaction would have made.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRunBackfill } from "../../coordinator/runs/run-backfill.js";
import type { Db } from "../../coordinator/store/database.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";
import { backfillEpisodes, backfilling, EPISODES_PER_TRANSACTION, episodeId, episodeSeed, insertRun, runsBackfilling, type NewRun } from "../../coordinator/store/runs-repo.js";

for (const engine of STORE_ENGINES) {
  describe(`creating large runs in steps (${engine})`, () => {
    let dir: string;
    let db: Db;
    const plan = { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 4242, control_rate_hz: 30, max_duration_s: 20 };
    const run = (id: string, extra: Partial<NewRun> = {}): NewRun => ({
      id, accountId: "acct_1", kind: "run", created: "2026-11-25T00:00:00.000Z", request: {},
      resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
      plan, priority: "standard", episodesTotal: 1234, ...extra,
    });
    const episodes = async (runId: string) => await db.prepare("SELECT id, idx, seed, unit, assign FROM episodes WHERE run_id = ? ORDER BY idx").all(runId) as Array<{ id: string; idx: number; seed: number; unit: number | null; assign: string | null }>;

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), "assay-backfill-"));
      db = await openTestDatabase(engine, join(dir, "assay.sqlite"));
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
    });
    afterEach(async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it("commits the run with its first episodes, then adds the rest with the seeds one transaction would give", async () => {
      assert.equal(await insertRun(db, run("run_big")), true);
      assert.equal((await episodes("run_big")).length, EPISODES_PER_TRANSACTION);
      assert.ok(await backfilling(db, "run_big"));
      await createRunBackfill({ db }).complete("run_big");
      const rows = await episodes("run_big");
      assert.equal(rows.length, 1234);
      rows.forEach((row, idx) => {
        assert.equal(row.idx, idx);
        assert.equal(row.id, episodeId("run_big", idx));
        assert.equal(row.seed, episodeSeed(plan.seed, idx));
      });
      assert.equal(await backfilling(db, "run_big"), false);
      assert.equal(await insertRun(db, run("run_small", { episodesTotal: 20 })), false, "a small run is whole at once");
    });

    it("resumes a creation cut short by a crash, listed episodes included", async () => {
      const listed = Array.from({ length: 1100 }, (_, i) => ({ seed: 1000 + i, unit: i % 3, assign: i % 2 ? { replay_spec: { i } } : undefined }));
      await insertRun(db, run("run_listed", { episodes: listed as NewRun["episodes"] }));
      await insertRun(db, run("run_seeded"));
      // The coordinator dies here; a new one opens the same file.
      await db.close();
      db = await openTestDatabase(engine, join(dir, "assay.sqlite"));
      assert.deepEqual((await runsBackfilling(db)).sort(), ["run_listed", "run_seeded"]);
      assert.deepEqual((await createRunBackfill({ db }).resume()).sort(), ["run_listed", "run_seeded"]);
      const rows = await episodes("run_listed");
      assert.equal(rows.length, 1100);
      rows.forEach((row, i) => {
        assert.deepEqual([row.seed, row.unit], [1000 + i, i % 3]);
        assert.equal(row.assign, i % 2 ? JSON.stringify({ replay_spec: { i } }) : null);
      });
      assert.equal((await episodes("run_seeded")).length, 1234);
      assert.deepEqual(await runsBackfilling(db), []);
    });

    it("resumes a creation cut short after some steps, from where it got, without a duplicate", async () => {
      const listed = Array.from({ length: 1500 }, (_, i) => ({ seed: 5000 + i, unit: i % 2, assign: { pair: Math.floor(i / 2) } }));
      await insertRun(db, run("run_halfway", { episodes: listed as NewRun["episodes"] }));
      // Two steps of 200 made it to the store before the crash.
      assert.equal(await backfillEpisodes(db, "run_halfway", 200), true);
      assert.equal(await backfillEpisodes(db, "run_halfway", 200), true);
      assert.equal((await episodes("run_halfway")).length, EPISODES_PER_TRANSACTION + 400);
      await db.close();
      db = await openTestDatabase(engine, join(dir, "assay.sqlite"));
      assert.deepEqual(await createRunBackfill({ db, episodesPerStep: 300 }).resume(), ["run_halfway"]);
      const rows = await episodes("run_halfway");
      assert.equal(rows.length, 1500);
      rows.forEach((row, i) => {
        assert.equal(row.idx, i);
        assert.deepEqual([row.seed, row.unit, row.assign], [5000 + i, i % 2, JSON.stringify({ pair: Math.floor(i / 2) })]);
      });
      assert.equal(await backfilling(db, "run_halfway"), false);
    });
  });
}

describe("loop turns of large submissions", () => {
  // turn() never touches the store.
  const turns = () => createRunBackfill({ db: {} as Db });

  it("grants turns first come first served, so concurrent large runs alternate step by step", async () => {
    const backfill = turns();
    const order: string[] = [];
    await Promise.all(["a", "b", "c"].map(async (who) => {
      for (let step = 0; step < 3; step++) {
        await backfill.turn();
        order.push(who);
      }
    }));
    assert.deepEqual(order.join(""), "abcabcabc");
  });

  it("lets timers run between two turns (one turn per event-loop iteration)", async () => {
    const backfill = turns();
    let granted = 0;
    let grantedWhenTimerFired: number | undefined;
    setTimeout(() => (grantedWhenTimerFired = granted), 0);
    for (let step = 0; step < 6; step++) {
      await backfill.turn();
      granted++;
      // A step's synchronous work (an insert of a few hundred episodes): past the timer's 1 ms.
      const until = performance.now() + 2;
      while (performance.now() < until);
    }
    assert.ok(grantedWhenTimerFired !== undefined && grantedWhenTimerFired <= 1, `the timer waited for ${grantedWhenTimerFired} turns`);
  });
});
