/**
 * The scheduler reads the cells of the pairs it offers (store/episode-subsets-repo.ts listCellsOfPairs), by
 * their indexes, not every pair of the run: on both engines, for random compare runs and random sets of pairs,
 * the cell of each pair is that of its first episode by index which a cell holds or ran (any status but
 * pending), as reading the whole run gives it; a pair with none has no cell.
 */
import assert from "node:assert/strict";
import type { Db } from "../../coordinator/store/database.js";
import { listCellsOfPairs } from "../../coordinator/store/episode-subsets-repo.js";
import { listEpisodeRecords } from "../../coordinator/store/episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

const unit = { robot: "so101@3.11", model: "so101", firmware: "3.11", environment: "tabletop@1", task: "pick-cube@v1", policy: {} };

for (const engine of STORE_ENGINES) {
  describe(`cells of a compare run's pairs (${engine})`, () => {
    let db: Db;

    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z')").run();
    });

    afterEach(() => db.close());

    it("equals the whole run's reading for the pairs asked", async () => {
      let state = 12345;
      const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
      const pairs = 60;
      await runsRepo.insertRun(db, {
        id: "run_p", accountId: "acct_1", kind: "compare", created: "2026-11-28T00:00:00.000Z", request: { kind: "compare" },
        resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
        plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
        priority: "standard", episodesTotal: 2 * pairs, units: [{ ...unit, key: "policy:a" }, { ...unit, key: "policy:b" }],
        // As planCompare lays them out: pair i at indexes 2i and 2i + 1, in a seeded order.
        episodes: Array.from({ length: 2 * pairs }, (_, i) => ({ unit: (i + Math.floor(i / 2)) % 2, seed: i, assign: { pair: Math.floor(i / 2), order: i % 2, block: "cell" as const } })),
      });
      const statuses = ["pending", "assigned", "running", "done", "cancelled", "unlabelled"];
      for (let idx = 0; idx < 2 * pairs; idx++) {
        const status = statuses[Math.floor(random() * statuses.length)];
        const cell = status === "pending" || random() < 0.1 ? null : `cell-${Math.floor(random() * 5)}`;
        await db.prepare("UPDATE episodes SET status = ?, cell_id = ? WHERE id = ?").run(status, cell, runsRepo.episodeId("run_p", idx));
      }
      const whole = new Map<number, string>();
      for (const e of await listEpisodeRecords(db, "run_p")) {
        if (e.status !== "pending" && e.cellId !== null && e.assign.pair !== undefined && !whole.has(e.assign.pair)) whole.set(e.assign.pair, e.cellId);
      }
      assert.ok(whole.size > 10 && whole.size < pairs, `a mix of placed and unplaced pairs (${whole.size})`);
      for (let trial = 0; trial < 20; trial++) {
        const asked = Array.from({ length: 1 + Math.floor(random() * 30) }, () => Math.floor(random() * (pairs + 5)));
        const expected = new Map([...whole].filter(([pair]) => asked.includes(pair)));
        assert.deepEqual(new Map([...await listCellsOfPairs(db, "run_p", asked)].sort(([a], [b]) => a - b)), new Map([...expected].sort(([a], [b]) => a - b)));
      }
      assert.deepEqual(await listCellsOfPairs(db, "run_p", []), new Map());
    });
  });
}
