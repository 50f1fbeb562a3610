/**
 * The store's versioned migrations on PostgreSQL: every one applies (rewritten by postgres-ddl.ts),
 * the columns get the widths and byte ordering SQLite gives them, reopening applies nothing, and
 * coordinators starting together on an empty database apply each migration once.
 */
import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import { openDatabase } from "../../coordinator/store/database.js";
import { MIGRATIONS } from "../../coordinator/store/migrations.js";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "../support/embedded-postgres.js";

describe("store migrations on PostgreSQL", function () {
  this.timeout(120_000);
  let server: EmbeddedPostgresServer | undefined;

  before(async () => {
    server = await startEmbeddedPostgres();
    // Every test below reads the migrated schema.
    await (await openDatabase(server.connectionString)).close();
  });
  after(async () => {
    await server?.stop();
  });

  async function query<T extends pg.QueryResultRow>(text: string, database = "assay"): Promise<T[]> {
    const client = new pg.Client({ connectionString: server!.connectionString.replace(/\/assay$/, `/${database}`) });
    await client.connect();
    try {
      return (await client.query<T>(text)).rows;
    } finally {
      await client.end();
    }
  }

  it("applies every migration, and reopening applies none", async () => {
    const second = await openDatabase(server!.connectionString);
    try {
      assert.deepEqual(await second.prepare("SELECT version FROM assay_schema").all(), [{ version: MIGRATIONS.length }]);
    } finally {
      await second.close();
    }
  });

  it("makes the same tables and columns as SQLite, plus the row order SQLite keeps as rowid", async () => {
    const sqlite = await openDatabase(":memory:");
    const expected = (await sqlite.prepare(`SELECT m.name || '.' || p.name AS col FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table'`).all() as Array<{ col: string }>)
      .map((r) => r.col)
      .concat("run_status_history.seq")
      .sort();
    await sqlite.close();
    const actual = (await query<{ col: string }>(`SELECT table_name || '.' || column_name AS col FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'assay_schema'`))
      .map((r) => r.col)
      .sort();
    assert.deepEqual(actual, expected);
  });

  it("gives columns SQLite's widths: 64-bit integers, 8-byte floats, bytewise text", async () => {
    const columns = await query<{ table_name: string; column_name: string; data_type: string; collation_name: string | null }>(
      `SELECT table_name, column_name, data_type, collation_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'assay_schema'`,
    );
    const types = new Set(columns.map((c) => c.data_type));
    assert.deepEqual([...types].sort(), ["bigint", "double precision", "text"]);
    assert.deepEqual(columns.filter((c) => c.data_type === "text" && c.collation_name !== "C"), []);
    const typeOf = (table: string, column: string) => columns.find((c) => c.table_name === table && c.column_name === column)?.data_type;
    assert.equal(typeOf("models", "bytes"), "bigint");
    assert.equal(typeOf("episodes", "duration_s"), "double precision");
  });

  it("reads a byte count above 2^31 and a duration exactly, and orders ids bytewise", async () => {
    const store = await openDatabase(server!.connectionString);
    try {
      await store.prepare(`INSERT INTO accounts (id, name, created) VALUES ('acct_a', 'a', '2024-01-01T00:00:00.000Z')`).run();
      await store.prepare(`INSERT INTO runs (id, account_id, kind, status, created, request, resolved_pins, plan, priority, episodes_total)
        VALUES ('run_b', 'acct_a', 'run', 'queued', 't', '{}', '{}', '{}', 'normal', 1),
               ('Run_c', 'acct_a', 'run', 'queued', 't', '{}', '{}', '{}', 'normal', 1)`).run();
      await store.prepare(`INSERT INTO episodes (id, run_id, idx, status, seed, duration_s) VALUES ('ep_1', 'run_b', 0, 'done', ?, ?)`).run(4294967297, 0.1);
      assert.deepEqual(await store.prepare(`SELECT seed, duration_s, (SELECT count(*) FROM episodes) AS n FROM episodes`).all(), [{ seed: 4294967297, duration_s: 0.1, n: 1 }]);
      assert.deepEqual((await store.prepare(`SELECT id FROM runs ORDER BY id`).all()).map((r) => (r as { id: string }).id), ["Run_c", "run_b"]);
    } finally {
      await store.close();
    }
  });

  it("applies each migration once when coordinators start together on an empty database", async () => {
    await query(`CREATE DATABASE racing`, "postgres");
    const url = server!.connectionString.replace(/\/assay$/, "/racing");
    // Separate processes: one process opens its store synchronously, so it cannot race itself.
    const opener = `import { openDatabase } from ${JSON.stringify(new URL("../../coordinator/store/database.ts", import.meta.url).pathname)}; await (await openDatabase(process.argv[1])).close();`;
    await Promise.all([1, 2, 3].map(() => run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", opener, url])));
    assert.deepEqual(await query(`SELECT version FROM assay_schema`, "racing"), [{ version: MIGRATIONS.length }]);
  });
});

const run = promisify(execFile);
