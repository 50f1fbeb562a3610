import assert from "node:assert/strict";
import type { CellRegistry } from "../../coordinator/cells/registry.js";
import { createScheduler } from "../../coordinator/scheduler/scheduler.js";
import { openSqliteDatabase } from "../../coordinator/store/database.js";
import type { Db, Statement } from "../../coordinator/store/db.js";

/**
 * The store with its open-runs read (the first statement of every pass) held until released, so that
 * the test sees whether a second pass starts while one is in progress.
 */
function gatedDb(db: Db): { db: Db; inFlight: () => number; most: () => number; release: () => void; reads: () => number } {
  let inFlight = 0;
  let most = 0;
  let reads = 0;
  const waiting: Array<() => void> = [];
  let open = false;
  const gated: Db = Object.create(db) as Db;
  gated.prepare = (sql: string): Statement => {
    const statement = db.prepare(sql);
    if (!sql.startsWith("SELECT * FROM runs WHERE status IN")) return statement;
    return {
      ...statement,
      all: async (...params: unknown[]) => {
        reads += 1;
        inFlight += 1;
        most = Math.max(most, inFlight);
        if (!open) await new Promise<void>((resume) => waiting.push(resume));
        try {
          return await statement.all(...params);
        } finally {
          inFlight -= 1;
        }
      },
    };
  };
  return {
    db: gated, inFlight: () => inFlight, most: () => most, reads: () => reads,
    release: () => {
      open = true;
      for (const resume of waiting.splice(0)) resume();
    },
  };
}

describe("scheduler.runPass", () => {
  it("goes through the same single flight as the kicked passes: never two passes at once, and a call during a pass gets the pass after it", async () => {
    const store = openSqliteDatabase(":memory:");
    const gate = gatedDb(store);
    const registry = { localCells: () => [], liveInstrumentKinds: () => undefined, assignedEpisodeOf: () => undefined } as unknown as CellRegistry;
    const scheduler = createScheduler({ db: gate.db, registry, lifecycle: { scheduled: async () => undefined }, logger: { info() {}, warn() {}, error() {} } });
    try {
      scheduler.kick();
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(gate.inFlight(), 1, "the kicked pass is reading the open runs");
      const first = scheduler.runPass();
      const second = scheduler.runPass();
      gate.release();
      assert.deepEqual(await Promise.all([first, second]), [0, 0]);
      assert.equal(gate.most(), 1, "no pass overlapped another");
      assert.equal(gate.reads(), 2, "the two calls made during the kicked pass shared the one pass after it");
    } finally {
      await scheduler.stop();
      await store.close();
    }
  });
});
