/**
 * The transaction handle (coordinator/store/tx.ts), on both engines: effects run after the
 * outermost commit and in order, a rollback drops them (a savepoint's rollback drops its own), a
 * throwing effect is logged and the others run, a handle refuses use once its transaction ended,
 * a statement on the database from inside its transaction is refused, and concurrent transactions
 * do not interleave.
 * And outside coordinator/store/ no code opens a transaction without a handle (`db.transaction(`).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Db } from "../../coordinator/store/database.js";
import { transact, type Tx } from "../../coordinator/store/tx.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

async function probeCount(db: Db): Promise<number> {
  return Number(((await db.prepare("SELECT COUNT(*) AS n FROM tx_probe").get()) as { n: number | string }).n);
}

async function insertProbe(db: Db, v: number): Promise<void> {
  await db.prepare("INSERT INTO tx_probe (v) VALUES (?)").run(v);
}

function silentLogger(): { errors: string[]; error(message: string): void } {
  const errors: string[] = [];
  return { errors, error: (message: string) => void errors.push(message) };
}

for (const engine of STORE_ENGINES) {
  describe(`store transaction handle (${engine})`, () => {
    let db: Db;
    beforeEach(async () => {
      db = await openTestDatabase(engine);
      await db.exec("CREATE TABLE tx_probe (v INTEGER NOT NULL)");
    });
    afterEach(() => db.close());

    it("runs effects after the commit, in the order queued, with the writes visible to them", async () => {
      const seen: string[] = [];
      const result = await transact(db, async (tx) => {
        await insertProbe(tx, 1);
        tx.afterCommit(async () => void seen.push(`first saw ${await probeCount(db)}`));
        tx.afterCommit(() => void seen.push("second"));
        seen.push("body done");
        return "value";
      });
      assert.equal(result, "value");
      assert.deepEqual(seen, ["body done", "first saw 1", "second"]);
    });

    it("drops the effects of a transaction that rolls back, and its writes", async () => {
      const seen: string[] = [];
      await assert.rejects(transact(db, async (tx) => {
        await insertProbe(tx, 1);
        tx.afterCommit(() => void seen.push("announced"));
        throw new Error("decided against it");
      }), /decided against it/);
      assert.equal(seen.length, 0);
      assert.equal(await probeCount(db), 0);
    });

    it("gives a nested call a savepoint whose effects wait for the outer commit, or are dropped with the savepoint", async () => {
      const seen: string[] = [];
      await transact(db, async (outer) => {
        outer.afterCommit(() => void seen.push("outer 1"));
        await transact(outer, async (inner) => {
          await insertProbe(inner, 1);
          inner.afterCommit(() => void seen.push("kept savepoint"));
        });
        assert.equal(seen.length, 0, "a savepoint's release is not the commit");
        await assert.rejects(transact(outer, async (inner) => {
          await insertProbe(inner, 2);
          inner.afterCommit(() => void seen.push("rolled-back savepoint"));
          outer.afterCommit(() => void seen.push("queued on the outer handle during the savepoint"));
          throw new Error("inner fails");
        }), /inner fails/);
        outer.afterCommit(() => void seen.push("outer 2"));
        assert.equal(await probeCount(outer), 1, "the rolled-back savepoint's write is gone, the kept one stays");
      });
      assert.deepEqual(seen, ["outer 1", "kept savepoint", "outer 2"]);
      assert.equal(await probeCount(db), 1);
    });

    it("nests a repository's own db.transaction on a handle as a savepoint", async () => {
      const seen: string[] = [];
      await transact(db, async (tx) => {
        await tx.transaction(async (inner) => {
          await insertProbe(inner, 1);
          tx.afterCommit(() => void seen.push("inside the repository's transaction"));
        });
        await assert.rejects(tx.transaction(async (inner) => {
          await insertProbe(inner, 2);
          tx.afterCommit(() => void seen.push("dropped"));
          throw new Error("repository refuses");
        }), /repository refuses/);
      });
      assert.deepEqual(seen, ["inside the repository's transaction"]);
      assert.equal(await probeCount(db), 1);
    });

    it("logs an effect that throws and still runs the others; the commit stands", async () => {
      const logger = silentLogger();
      const seen: string[] = [];
      await transact(db, async (tx) => {
        await insertProbe(tx, 1);
        tx.afterCommit(() => void seen.push("before"));
        tx.afterCommit(() => {
          throw new Error("the cell is gone");
        });
        tx.afterCommit(async () => {
          await Promise.resolve();
          throw new Error("the webhook worker is gone");
        });
        tx.afterCommit(() => void seen.push("after"));
      }, { logger });
      assert.deepEqual(seen, ["before", "after"]);
      assert.equal(logger.errors.length, 2);
      assert.match(logger.errors[0], /the cell is gone/);
      assert.match(logger.errors[1], /the webhook worker is gone/);
      assert.equal(await probeCount(db), 1);
    });

    it("refuses a handle once its transaction has ended, and a plain Db already inside a transaction", async () => {
      let kept: Tx | undefined;
      await transact(db, async (tx) => {
        kept = tx;
        await assert.rejects(transact(db, async () => undefined), /pass that transaction's Tx/);
      });
      await assert.rejects(insertProbe(kept!, 1), /transaction has ended/);
      assert.throws(() => kept!.afterCommit(() => undefined), /transaction has ended/);
      assert.equal(await probeCount(db), 0);
    });

    it("refuses a statement on the database from inside its transaction, naming tx, instead of deadlocking or escaping it", async () => {
      await transact(db, async (tx) => {
        await insertProbe(tx, 1);
        await assert.rejects(insertProbe(db, 2), /pass the transaction's handle \(tx\)/);
        await assert.rejects(db.exec("DELETE FROM tx_probe"), /pass the transaction's handle \(tx\)/);
      });
      assert.equal(await probeCount(db), 1);
    });

    it("refuses it in each transaction, one after another or side by side, and not in work an ended one left behind", async () => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let secondBegan!: () => void;
      const began = new Promise<void>((resolve) => (secondBegan = resolve));
      let leftBehind!: Promise<number>;
      const first = transact(db, async (tx) => {
        await insertProbe(tx, 1);
        // Runs on after its transaction has ended: a statement on the database is then its own.
        leftBehind = gate.then(() => probeCount(db));
        // PostgreSQL: the first ends while the second is open. SQLite: the second waits for it.
        if (engine === "postgres") await began;
      });
      await transact(db, async (tx) => {
        secondBegan();
        await first;
        await assert.rejects(insertProbe(db, 2), /pass the transaction's handle \(tx\)/);
        await insertProbe(tx, 2);
        release();
      });
      assert.ok((await leftBehind) >= 1);
      assert.equal(await probeCount(db), 2);
    });

    it("runs transactions from concurrent callers one after another, each whole, with the database's own statements between them", async () => {
      const order: string[] = [];
      const writer = (name: string, v: number) => transact(db, async (tx) => {
        order.push(`${name} begins`);
        await insertProbe(tx, v);
        await new Promise((resolve) => setImmediate(resolve));
        await insertProbe(tx, v);
        order.push(`${name} ends`);
      });
      const counted = writer("a", 1).then(() => undefined);
      const outside = probeCount(db);
      await Promise.all([counted, writer("b", 2), outside]);
      const seen = await outside;
      // Each transaction is whole; a statement outside one sees all of a transaction's writes or none.
      assert.ok(seen === 0 || seen === 2 || seen === 4, `a statement outside the transactions saw ${seen} rows`);
      assert.equal(await probeCount(db), 4);
      if (engine === "sqlite") assert.deepEqual(order, ["a begins", "a ends", "b begins", "b ends"]);
    });

    it("lets an effect open the next transaction on the database", async () => {
      const seen: number[] = [];
      await transact(db, async (tx) => {
        await insertProbe(tx, 1);
        tx.afterCommit(() => transact(db, async (next) => {
          await insertProbe(next, 2);
          next.afterCommit(async () => void seen.push(await probeCount(db)));
        }));
      });
      assert.deepEqual(seen, [2]);
    });
  });
}

describe("transactions outside the store", () => {
  it("open with transact(db, (tx) => ...), never db.transaction(...), so every one carries its effects", () => {
    const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
    const sources = (dir: string): string[] => readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return sources(path);
      return /\.m?ts$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
    });
    const found: string[] = [];
    for (const path of sources(join(root, "coordinator"))) {
      const file = relative(root, path);
      if (file.startsWith("coordinator/store/")) continue;
      readFileSync(path, "utf8").split("\n").forEach((line, i) => {
        const code = line.replace(/\/\/.*$/, "");
        if (/^\s*\*/.test(code)) return;
        if (/\.transaction\s*\(/.test(code)) found.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
    assert.deepEqual(found, [], `open these with transact() from coordinator/store/tx.ts:\n${found.join("\n")}`);
  });
});
