/**
 * The store engines repository tests run on. Each test file loops over STORE_ENGINES; a PostgreSQL
 * test gets a fresh database, copied from a migrated template, in one embedded cluster started on
 * first use and stopped at the end of the mocha run:
 *
 *   for (const engine of STORE_ENGINES) describe(`runs (${engine})`, () => {
 *     beforeEach(async () => { db = await openTestDatabase(engine); });
 *     afterEach(() => db.close());
 *   });
 *
 * ASSAY_TEST_ENGINES=sqlite (or postgres) narrows the list, for a quick local loop.
 *
 * Coordinators the integration tests start keep SQLite in their data dir, unless
 * ASSAY_TEST_DATABASE=postgres: then `testStoreOptions(dataDir)` gives each data dir its own
 * PostgreSQL database (the same one when a test restarts a coordinator on that dir), so the whole
 * suite can run on PostgreSQL.
 */
import { join, resolve } from "node:path";
import pg from "pg";
import { openDatabase, type DatabaseOptions, type Db, type Dialect } from "../../coordinator/store/database.js";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "./embedded-postgres.js";
import { atSuiteEnd } from "./suite-end.js";

export const STORE_ENGINES: readonly Dialect[] = (process.env.ASSAY_TEST_ENGINES ?? "sqlite,postgres")
  .split(",")
  .map((e) => e.trim())
  .filter((e): e is Dialect => e === "sqlite" || e === "postgres");

const TEMPLATE = "assay_template";

let cluster: Promise<EmbeddedPostgresServer> | undefined;
let databases = 0;

/** The cluster shared by the whole mocha run, with a migrated template database. */
export function sharedPostgres(): Promise<EmbeddedPostgresServer> {
  if (!cluster) {
    cluster = (async () => {
      const server = await startEmbeddedPostgres({ database: TEMPLATE });
      atSuiteEnd(() => server.stop());
      // Migrate once; CREATE DATABASE ... TEMPLATE copies the result in a few tens of ms.
      await (await openDatabase(server.connectionString)).close();
      return server;
    })();
  }
  return cluster;
}

/** A connection URL to a new, migrated, empty PostgreSQL database. */
export async function freshPostgresUrl(): Promise<string> {
  const server = await sharedPostgres();
  const name = `assay_test_${process.pid}_${++databases}`;
  const admin = new pg.Client({ connectionString: server.connectionString.replace(/\/[^/]+$/, "/postgres") });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE}`);
  } finally {
    await admin.end();
  }
  return server.connectionString.replace(/\/[^/]+$/, `/${name}`);
}

/** PostgreSQL databases standing for SQLite files or data dirs, so a test that reopens one reopens its database. */
const databaseOfPath = new Map<string, string>();

async function databaseFor(path: string): Promise<string> {
  let url = databaseOfPath.get(path);
  if (!url) databaseOfPath.set(path, (url = await freshPostgresUrl()));
  return url;
}

/** The store options for a coordinator on `dataDir`: none (SQLite there), or its PostgreSQL database. */
export async function testStoreOptions(dataDir: string): Promise<{ databaseUrl?: string }> {
  return integrationEngine() === "postgres" ? { databaseUrl: await databaseFor(resolve(dataDir)) } : {};
}

/**
 * A store on `engine`: SQLite at `sqlitePath` (default a new one in memory); on PostgreSQL a new
 * migrated database, or, for a `sqlitePath` opened before in this run, that same database again.
 * `options`: the store's own (a statement hook, a pool size).
 */
export async function openTestDatabase(engine: Dialect, sqlitePath = ":memory:", options: DatabaseOptions = {}): Promise<Db> {
  if (engine === "sqlite") return openDatabase(sqlitePath, options);
  return openDatabase(sqlitePath === ":memory:" ? await freshPostgresUrl() : await databaseFor(resolve(sqlitePath)), options);
}

/** The engine the integration tests' coordinators run on (ASSAY_TEST_DATABASE, default sqlite). */
export function integrationEngine(): Dialect {
  return process.env.ASSAY_TEST_DATABASE === "postgres" ? "postgres" : "sqlite";
}

/** Opens the store a test coordinator on `dataDir` uses (see testStoreOptions). */
export async function openCoordinatorStore(dataDir: string): Promise<Db> {
  const { databaseUrl } = await testStoreOptions(dataDir);
  return openDatabase(databaseUrl ?? join(dataDir, "assay.sqlite"));
}
