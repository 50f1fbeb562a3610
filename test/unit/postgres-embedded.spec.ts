/**
 * The embedded PostgreSQL that store tests run against: it starts, answers through `pg`, and stops
 * without leaving its files behind.
 */
import { strict as assert } from "node:assert";
import { existsSync } from "node:fs";
import pg from "pg";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "../support/embedded-postgres.js";

describe("embedded PostgreSQL for tests", function () {
  this.timeout(120_000);
  let server: EmbeddedPostgresServer | undefined;

  before(async function () {
    server = await startEmbeddedPostgres();
    if (process.env.ASSAY_PG_TIMINGS) console.log(`    embedded PostgreSQL timings (ms): ${JSON.stringify(server.timingsMs)}`);
  });
  after(async () => {
    await server?.stop();
  });

  it("answers through pg", async () => {
    const client = new pg.Client({ connectionString: server!.connectionString });
    await client.connect();
    try {
      const { rows } = await client.query<{ version: string; db: string }>("select version() as version, current_database() as db");
      assert.match(rows[0].version, /^PostgreSQL 1\d/);
      assert.equal(rows[0].db, "assay");
    } finally {
      await client.end();
    }
  });

  it("stops and removes its cluster", async () => {
    const probe = await startEmbeddedPostgres({ database: "probe" });
    assert.ok(existsSync(probe.dir));
    await probe.stop();
    await probe.stop(); // twice is harmless
    assert.equal(existsSync(probe.dir), false);
    const client = new pg.Client({ connectionString: probe.connectionString, connectionTimeoutMillis: 2000 });
    await assert.rejects(client.connect(), /ECONNREFUSED|terminat|timeout/i);
    await client.end().catch(() => undefined);
  });
});
