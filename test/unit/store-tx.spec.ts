/**
 * The transaction handle (coordinator/store/tx.ts), on both engines: effects run after the
 * outermost commit and in order, a rollback drops them (a savepoint's rollback drops its own), a
 * throwing effect is logged and the others run, and a handle refuses use once its transaction ended.
 * And outside coordinator/store/ no code opens a transaction without a handle (`db.transaction(`).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Db } from "../../coordinator/store/database.js";
import { transact, type Tx } from "../../coordinator/store/tx.js";
import { STORE_ENGINES, openTestDatabase } from "../support/test-database.js";

function probeCount(db: Db): number {
  return Number((db.prepare("SELECT COUNT(*) AS n FROM tx_probe").get() as { n: number | string }).n);
}

function insertProbe(db: Db, v: number): void {
  db.prepare("INSERT INTO tx_probe (v) VALUES (?)").run(v);
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
      db.exec("CREATE TABLE tx_probe (v INTEGER NOT NULL)");
    });
    afterEach(() => db.close());

    it("runs effects after the commit, in the order queued, with the writes visible to them", () => {
      const seen: string[] = [];
      const result = transact(db, (tx) => {
        insertProbe(tx, 1);
        tx.afterCommit(() => seen.push(`first saw ${probeCount(db)}`));
        tx.afterCommit(() => seen.push("second"));
        seen.push("body done");
        return "value";
      });
      assert.equal(result, "value");
      assert.deepEqual(seen, ["body done", "first saw 1", "second"]);
    });

    it("drops the effects of a transaction that rolls back, and its writes", () => {
      const seen: string[] = [];
      assert.throws(() => transact(db, (tx) => {
        insertProbe(tx, 1);
        tx.afterCommit(() => seen.push("announced"));
        throw new Error("decided against it");
      }), /decided against it/);
      assert.equal(seen.length, 0);
      assert.equal(probeCount(db), 0);
    });

    it("gives a nested call a savepoint whose effects wait for the outer commit, or are dropped with the savepoint", () => {
      const seen: string[] = [];
      transact(db, (outer) => {
        outer.afterCommit(() => seen.push("outer 1"));
        transact(outer, (inner) => {
          insertProbe(inner, 1);
          inner.afterCommit(() => seen.push("kept savepoint"));
        });
        assert.equal(seen.length, 0, "a savepoint's release is not the commit");
        assert.throws(() => transact(outer, (inner) => {
          insertProbe(inner, 2);
          inner.afterCommit(() => seen.push("rolled-back savepoint"));
          outer.afterCommit(() => seen.push("queued on the outer handle during the savepoint"));
          throw new Error("inner fails");
        }), /inner fails/);
        outer.afterCommit(() => seen.push("outer 2"));
        assert.equal(probeCount(outer), 1, "the rolled-back savepoint's write is gone, the kept one stays");
      });
      assert.deepEqual(seen, ["outer 1", "kept savepoint", "outer 2"]);
      assert.equal(probeCount(db), 1);
    });

    it("nests a repository's own db.transaction on a handle as a savepoint", () => {
      const seen: string[] = [];
      transact(db, (tx) => {
        tx.transaction(() => {
          insertProbe(tx, 1);
          tx.afterCommit(() => seen.push("inside the repository's transaction"));
        })();
        assert.throws(() => tx.transaction(() => {
          insertProbe(tx, 2);
          tx.afterCommit(() => seen.push("dropped"));
          throw new Error("repository refuses");
        })(), /repository refuses/);
      });
      assert.deepEqual(seen, ["inside the repository's transaction"]);
      assert.equal(probeCount(db), 1);
    });

    it("logs an effect that throws and still runs the others; the commit stands", () => {
      const logger = silentLogger();
      const seen: string[] = [];
      transact(db, (tx) => {
        insertProbe(tx, 1);
        tx.afterCommit(() => seen.push("before"));
        tx.afterCommit(() => {
          throw new Error("the cell is gone");
        });
        tx.afterCommit(() => seen.push("after"));
      }, { logger });
      assert.deepEqual(seen, ["before", "after"]);
      assert.equal(logger.errors.length, 1);
      assert.match(logger.errors[0], /the cell is gone/);
      assert.equal(probeCount(db), 1);
    });

    it("refuses a handle once its transaction has ended, and a plain Db already inside a transaction", () => {
      let kept: Tx | undefined;
      transact(db, (tx) => {
        kept = tx;
        assert.throws(() => transact(db, () => undefined), /pass that transaction's Tx/);
      });
      assert.throws(() => insertProbe(kept!, 1), /transaction has ended/);
      assert.throws(() => kept!.afterCommit(() => undefined), /transaction has ended/);
      assert.equal(probeCount(db), 0);
    });

    it("lets an effect open the next transaction on the database", () => {
      const seen: number[] = [];
      transact(db, (tx) => {
        insertProbe(tx, 1);
        tx.afterCommit(() => transact(db, (next) => {
          insertProbe(next, 2);
          next.afterCommit(() => seen.push(probeCount(db)));
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
