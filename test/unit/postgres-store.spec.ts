/**
 * The PostgreSQL side of the store's Db: parameters rewritten from better-sqlite3's forms, nested
 * transactions as savepoints, errors with their SQLSTATE, a connection the server ends, and the
 * dialect helpers read the same on both engines.
 */
import assert from "node:assert/strict";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import pg from "pg";
import { openDatabase, type Db } from "../../coordinator/store/database.js";
import { bindValues, toPostgresPlaceholders } from "../../coordinator/store/postgres/placeholders.js";
import { PostgresError } from "../../coordinator/store/postgres/postgres-error.js";
import { notifyChannelMany } from "../../coordinator/store/coordinators-repo.js";
import { jsonArrayElements, jsonElementText, jsonIsTrue, jsonText } from "../../coordinator/store/sql-dialect.js";
import { STORE_ENGINES, freshPostgresUrl, openTestDatabase } from "../support/test-database.js";

describe("store parameters for PostgreSQL", () => {
  it("numbers ? in order and @name once per name, leaving strings, identifiers, comments and casts alone", () => {
    const sql = `SELECT '?', "@x", a::jsonb FROM t WHERE a = ? AND b = ? -- ?\n AND c = '@y' /* @z */`;
    assert.deepEqual(toPostgresPlaceholders(sql), { text: `SELECT '?', "@x", a::jsonb FROM t WHERE a = $1 AND b = $2 \n AND c = '@y' `, order: [0, 1] });
    const named = toPostgresPlaceholders("UPDATE t SET a = @a WHERE id = @id AND a <> @a AND s = 'it''s @a'");
    assert.deepEqual(named, { text: "UPDATE t SET a = $1 WHERE id = $2 AND a <> $1 AND s = 'it''s @a'", order: ["a", "id"] });
  });

  it("binds what better-sqlite3 binds and refuses the rest, naming what is wrong", () => {
    const positional = toPostgresPlaceholders("SELECT ?, ?");
    assert.deepEqual(bindValues(positional, [1, "x"]), [1, "x"]);
    assert.deepEqual(bindValues(positional, [[2n, null]]), ["2", null]);
    assert.throws(() => bindValues(positional, [1]), /takes 2 parameters; got 1/);
    assert.throws(() => bindValues(positional, [true, 1]), /got boolean/);
    assert.throws(() => bindValues(positional, [undefined, 1]), /got undefined/);
    const named = toPostgresPlaceholders("SELECT @a");
    assert.throws(() => bindValues(named, [{}]), /missing named parameter "a"/);
    assert.throws(() => bindValues(named, [1]), /pass one object/);
    assert.throws(() => toPostgresPlaceholders("SELECT ?, @a"), /mixes \? and @name/);
  });
});

describe("the store's Db on PostgreSQL", function () {
  this.timeout(60_000);
  let db: Db;
  let url: string;

  beforeEach(async () => {
    url = await freshPostgresUrl();
    db = await openDatabase(url);
    await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'one', 't')").run();
  });
  afterEach(() => db.close());

  const names = async (on: Db = db) => ((await on.prepare("SELECT id FROM accounts ORDER BY id").all()) as Array<{ id: string }>).map((r) => r.id);
  const insert = (id: string, on: Db = db) => on.prepare("INSERT INTO accounts (id, name, created) VALUES (?, ?, 't')").run(id, id);

  it("commits, rolls back, and nests transactions as savepoints", async () => {
    await db.transaction(async (tx) => {
      await insert("acct_2", tx);
      assert.equal(db.inTransaction, true);
      await assert.rejects(tx.transaction(async (inner) => {
        await insert("acct_3", inner);
        throw new Error("inner fails");
      }), /inner fails/);
      await insert("acct_4", tx);
    });
    assert.equal(db.inTransaction, false);
    assert.deepEqual(await names(), ["acct_1", "acct_2", "acct_4"]);
    await assert.rejects(db.transaction(async (tx) => {
      await insert("acct_5", tx);
      throw new Error("outer fails");
    }), /outer fails/);
    assert.deepEqual(await names(), ["acct_1", "acct_2", "acct_4"]);
  });

  it("reports changes, and throws PostgreSQL's errors with their SQLSTATE", async () => {
    assert.equal((await db.prepare("UPDATE accounts SET name = 'x' WHERE id = ?").run("acct_1")).changes, 1);
    assert.equal((await db.prepare("UPDATE accounts SET name = 'x' WHERE id = ?").run("nope")).changes, 0);
    await assert.rejects(insert("acct_1"), (error: unknown) => error instanceof PostgresError && error.code === "23505" && /accounts_pkey/.test(error.message));
  });

  it("sends several NOTIFYs in one statement, delivered in the order given", async () => {
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    try {
      const heard: string[] = [];
      const all = new Promise<void>((done) => listener.on("notification", (n) => {
        heard.push(n.payload ?? "");
        if (heard.length === 3) done();
      }));
      await listener.query("LISTEN assay_test");
      await notifyChannelMany(db, "assay_test", ["b", "a", "c"]);
      await notifyChannelMany(db, "assay_test", []);
      await all;
      assert.deepEqual(heard, ["b", "a", "c"]);
    } finally {
      await listener.end();
    }
  });

  it("runs transactions side by side on their own pooled clients", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = db.transaction(async (tx) => {
      await insert("acct_2", tx);
      await held;
    });
    // A second transaction and a statement outside both proceed while the first is open.
    await db.transaction(async (tx) => insert("acct_3", tx));
    assert.deepEqual(await names(), ["acct_1", "acct_3"], "the open transaction's insert is not visible yet");
    release();
    await first;
    assert.deepEqual(await names(), ["acct_1", "acct_2", "acct_3"]);
  });

  it("reconnects after the server ends its connection, and fails the transaction that was open on it", async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
    await admin.end();
    assert.deepEqual(await names(), ["acct_1"], "the next statement runs on a new connection");
    await assert.rejects(db.transaction(async (tx) => {
      await insert("acct_2", tx);
      // The server ends the connection under the open transaction.
      await tx.prepare("SELECT pg_terminate_backend(pg_backend_pid())").get();
    }), PostgresError);
    assert.deepEqual(await names(), ["acct_1"], "the transaction's insert was rolled back with the connection");
    await insert("acct_3");
    assert.deepEqual(await names(), ["acct_1", "acct_3"]);
  });

  // The race the test above leaves to timing: the server has ended an idle pooled connection, but its last message
  // ("terminating connection due to administrator command") has not reached the client when a statement takes it.
  // A proxy holds the server's bytes back until the statement has been sent, so the message is its answer.
  for (const what of ["a statement", "a transaction"] as const) {
    it(`sends ${what} again on another connection when the idle one it was given had been ended by the server`, async () => {
      const proxy = await startHoldingProxy(new URL(url));
      const proxied = new URL(url);
      proxied.host = proxy.address;
      const via = await openDatabase(proxied.href);
      try {
        assert.deepEqual(await names(via), ["acct_1"], "one pooled connection, idle after this");
        proxy.holdFromServer();
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
        await admin.end();
        await proxy.heldBytes(); // the server's last message, not yet delivered
        const sent = proxy.nextFromClient();
        let runs = 0;
        const done = what === "a statement"
          ? names(via)
          : via.transaction(async (tx) => {
            runs++;
            await insert("acct_2", tx);
            return names(tx);
          });
        await sent; // the statement (or BEGIN) went out on the ended connection
        proxy.release();
        assert.deepEqual(await done, what === "a statement" ? ["acct_1"] : ["acct_1", "acct_2"]);
        if (what === "a transaction") assert.equal(runs, 1, "the transaction's work ran once, on the new connection");
      } finally {
        await via.close();
        await proxy.close();
      }
    });
  }
});

/** A TCP proxy that can hold back what the server sends (the client's bytes always pass). */
async function startHoldingProxy(upstream: URL): Promise<{
  address: string;
  holdFromServer(): void;
  heldBytes(): Promise<void>;
  nextFromClient(): Promise<void>;
  release(): void;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let holding = false;
  const held: Array<{ to: Socket; data: Buffer }> = [];
  let onHeld: (() => void) | undefined;
  let onClient: (() => void) | undefined;
  const server = createServer((client) => {
    const toServer = connect(Number(upstream.port), upstream.hostname);
    sockets.add(client).add(toServer);
    client.on("data", (data) => {
      toServer.write(data);
      onClient?.();
    });
    toServer.on("data", (data) => {
      if (!holding) return void client.write(data);
      held.push({ to: client, data });
      onHeld?.();
    });
    const end = () => {
      // Closing is delivered in order too: a client whose server closed sees it after the held bytes.
      if (holding) held.push({ to: client, data: Buffer.alloc(0) });
      else client.end();
    };
    toServer.on("end", end);
    toServer.on("error", end);
    client.on("error", () => toServer.destroy());
    client.on("close", () => toServer.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    address: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    holdFromServer: () => void (holding = true),
    heldBytes: () => new Promise<void>((resolve) => (held.length > 0 ? resolve() : (onHeld = resolve))),
    nextFromClient: () => new Promise<void>((resolve) => (onClient = () => ((onClient = undefined), resolve()))),
    release: () => {
      holding = false;
      for (const { to, data } of held.splice(0)) {
        if (data.length > 0) to.write(data);
        else to.end();
      }
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

for (const engine of STORE_ENGINES) {
  describe(`store dialect helpers (${engine})`, function () {
    this.timeout(60_000);
    let db: Db;
    beforeEach(async () => {
      db = await openTestDatabase(engine);
    });
    afterEach(() => db.close());

    it("reads JSON text, true flags and array elements alike", async () => {
      const doc = JSON.stringify({ a: { b: "x" }, pilot: true, no: false, n: 1, runs: ["r1", "r2"] });
      const one = async (sql: string, ...params: unknown[]) => Object.values((await db.prepare(sql).get(...params)) as object)[0];
      assert.equal(await one(`SELECT ${jsonText(db, "?", "a", "b")} AS v`, doc), "x");
      assert.equal(await one(`SELECT ${jsonText(db, "?", "missing")} AS v`, doc), null);
      for (const [key, expected] of [["pilot", 1], ["no", 0], ["n", 0], ["missing", 0]] as const) {
        assert.equal(await one(`SELECT CASE WHEN ${jsonIsTrue(db, "?", key)} THEN 1 ELSE 0 END AS v`, doc), expected, key);
      }
      const rows = (await db.prepare(`SELECT ${jsonElementText(db, "r")} AS v FROM ${jsonArrayElements(db, "?", "runs", "r")}`).all(doc)) as Array<{ v: string }>;
      assert.deepEqual(rows.map((r) => r.v), ["r1", "r2"]);
      assert.throws(() => jsonText(db, "x", "a'; DROP TABLE runs; --"), /must be an identifier/);
    });
  });
}
