/**
 * One store, two engines: a Kysely instance over SQLite (better-sqlite3, the file store of today)
 * or over PostgreSQL (a pg pool), with the same versioned migrations applied on open. Repositories
 * written against `SqlStore` run on either.
 *
 * Prototype (docs/store-postgres-plan.md): the coordinator still uses ../database.ts.
 */
import { Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import pg from "pg";
import { openDatabase } from "../database.js";
import { MIGRATIONS } from "../migrations.js";
import { postgresDdl } from "./postgres-ddl.js";
import type { StoreSchema } from "./schema.js";

export type StoreDialect = "sqlite" | "postgres";

export interface SqlStore {
  db: Kysely<StoreSchema>;
  dialect: StoreDialect;
  /** Closes the pool or the file. */
  close(): Promise<void>;
}

export interface OpenSqlStoreOptions {
  /** postgres://... (ASSAY_DATABASE_URL): PostgreSQL. Absent: SQLite at `sqlitePath`. */
  databaseUrl?: string;
  /** The SQLite file, or ":memory:"; used when `databaseUrl` is absent. */
  sqlitePath?: string;
  /** Connections in the PostgreSQL pool; default 10. */
  poolSize?: number;
  /** Where an idle pooled connection's error is reported (the server restarted or ended it); default console. */
  logger?: { warn(message: string): void };
}

/** Opens the store and brings its schema up to date (SQLite: user_version; PostgreSQL: assay_schema). */
export async function openSqlStore(options: OpenSqlStoreOptions): Promise<SqlStore> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10, types: { getTypeParser } });
    // An idle connection the server ends (restart, admin shutdown) emits 'error' on the pool, which
    // would crash the process with no listener; the pool drops that connection and opens another.
    const logger = options.logger ?? console;
    pool.on("error", (error) => logger.warn(`store: an idle PostgreSQL connection failed and was dropped: ${error.message}`));
    let open = 0;
    let allClosed: (() => void) | undefined;
    pool.on("connect", () => void open++);
    pool.on("remove", () => {
      if (--open === 0) allClosed?.();
    });
    const db = new Kysely<StoreSchema>({ dialect: new PostgresDialect({ pool }) });
    // pool.end() resolves before the connections' sockets close; wait for them, so a caller that
    // stops the server next does not see them ended under it.
    const close = async (): Promise<void> => {
      const closed = open === 0 ? Promise.resolve() : new Promise<void>((resolve) => (allClosed = resolve));
      await db.destroy();
      await closed;
    };
    try {
      await migratePostgres(db);
    } catch (error) {
      await close();
      throw error;
    }
    return { db, dialect: "postgres", close };
  }
  if (!options.sqlitePath) throw new Error("openSqlStore needs databaseUrl (postgres://...) or sqlitePath; got neither");
  // openDatabase sets the pragmas (WAL, synchronous FULL, foreign keys) and migrates.
  const file = openDatabase(options.sqlitePath);
  const db = new Kysely<StoreSchema>({ dialect: new SqliteDialect({ database: file }) });
  return { db, dialect: "sqlite", close: () => db.destroy() };
}

const INT8 = 20;

/**
 * pg returns BIGINT (every INTEGER column once migrated, and COUNT(*)) as a string, since it may
 * exceed 2^53. Store integers are counts, byte sizes and seeds, so read them as numbers, and refuse
 * one that would lose precision rather than round it.
 */
function getTypeParser(oid: number, format?: "text" | "binary"): (value: string) => unknown {
  if (oid === INT8 && format !== "binary") {
    return (value: string) => {
      const n = Number(value);
      if (!Number.isSafeInteger(n)) throw new Error(`store integer ${value} exceeds 2^53 and cannot be read as a number`);
      return n;
    };
  }
  return format === "binary" ? pg.types.getTypeParser(oid, "binary") : pg.types.getTypeParser(oid, "text");
}

/** Key of the advisory lock that serialises migrations when several coordinators start at once. */
const MIGRATION_LOCK = 0x61737361; // "assa"

/**
 * Applies the migrations PostgreSQL lacks, one transaction each (DDL is transactional there), each
 * under a transaction-scoped advisory lock so concurrent starters apply every migration once.
 */
async function migratePostgres(db: Kysely<StoreSchema>): Promise<void> {
  for (;;) {
    const applied = await db.transaction().execute(async (tx) => {
      await sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(tx);
      // Created under the lock: two concurrent CREATE TABLE IF NOT EXISTS can both fail on pg_type.
      await sql`CREATE TABLE IF NOT EXISTS assay_schema (version INTEGER NOT NULL)`.execute(tx);
      const { rows } = await sql<{ version: number }>`SELECT version FROM assay_schema`.execute(tx);
      const current = rows[0]?.version ?? 0;
      if (current > MIGRATIONS.length) {
        throw new Error(`store schema version ${current} is newer than this coordinator knows (${MIGRATIONS.length}); upgrade the coordinator`);
      }
      if (current === MIGRATIONS.length) return false;
      await sql.raw(postgresDdl(MIGRATIONS[current])).execute(tx);
      if (rows.length === 0) await sql`INSERT INTO assay_schema (version) VALUES (${current + 1})`.execute(tx);
      else await sql`UPDATE assay_schema SET version = ${current + 1}`.execute(tx);
      return true;
    });
    if (!applied) return;
  }
}
