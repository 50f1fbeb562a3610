/**
 * The store on PostgreSQL, behind the same `Db` as SQLite: statements are rewritten once for
 * PostgreSQL's parameters and run through a SyncClient (one connection, synchronous calls);
 * `transaction` is BEGIN/COMMIT with savepoints when nested; the migrations are the SQLite texts
 * rewritten by postgres-ddl.ts, applied one transaction each under an advisory lock so that
 * coordinators starting together on an empty database apply each once.
 */
import type { Db, Statement } from "../db.js";
import { MIGRATIONS } from "../migrations.js";
import { bindValues, toPostgresPlaceholders, type PostgresStatementText } from "./placeholders.js";
import { postgresDdl } from "./postgres-ddl.js";
import { SyncClient } from "./sync-client.js";

/** Key of the advisory lock that serialises migrations when several coordinators start at once. */
const MIGRATION_LOCK = 0x61737361; // "assa"

export class PostgresDb implements Db {
  readonly dialect = "postgres" as const;
  private readonly texts = new Map<string, PostgresStatementText>();
  private depth = 0;

  constructor(private readonly client: SyncClient) {}

  get inTransaction(): boolean {
    return this.depth > 0;
  }

  prepare(sql: string): Statement {
    let text = this.texts.get(sql);
    if (!text) this.texts.set(sql, (text = toPostgresPlaceholders(sql)));
    return new PostgresStatement(this, text);
  }

  /** Runs `text` with `$n` values on the connection; used by statements. */
  query(text: string, values: unknown[]): { rows: Record<string, unknown>[]; rowCount: number } {
    return this.client.query(text, values, { inTransaction: this.depth > 0 });
  }

  exec(sql: string): void {
    this.query(sql, []);
  }

  transaction<A extends unknown[], T>(fn: (...args: A) => T): (...args: A) => T {
    return (...args: A): T => {
      const savepoint = this.depth > 0 ? `s${this.depth}` : undefined;
      this.query(savepoint ? `SAVEPOINT ${savepoint}` : "BEGIN", []);
      this.depth++;
      let result: T;
      try {
        result = fn(...args);
        if (result instanceof Promise) throw new TypeError("a store transaction's function must not be async; the transaction would commit before it ends");
      } catch (error) {
        this.depth--;
        try {
          this.query(savepoint ? `ROLLBACK TO SAVEPOINT ${savepoint}; RELEASE SAVEPOINT ${savepoint}` : "ROLLBACK", []);
        } catch {
          // The connection is gone; PostgreSQL has rolled the transaction back with it.
        }
        throw error;
      }
      this.depth--;
      this.query(savepoint ? `RELEASE SAVEPOINT ${savepoint}` : "COMMIT", []);
      return result;
    };
  }

  close(): void {
    this.client.close();
  }

  /** Applies the migrations the database lacks (see the file's comment). */
  migrate(): void {
    for (;;) {
      const applied = this.transaction(() => {
        this.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`, []);
        // Created under the lock: two concurrent CREATE TABLE IF NOT EXISTS can both fail on pg_type.
        this.query("CREATE TABLE IF NOT EXISTS assay_schema (version INTEGER NOT NULL)", []);
        const rows = this.query("SELECT version FROM assay_schema", []).rows as Array<{ version: number }>;
        const current = rows[0]?.version ?? 0;
        if (current > MIGRATIONS.length) {
          throw new Error(`store schema version ${current} is newer than this coordinator knows (${MIGRATIONS.length}); upgrade the coordinator`);
        }
        if (current === MIGRATIONS.length) return false;
        const migration = MIGRATIONS[current];
        this.query(typeof migration === "string" ? postgresDdl(migration) : migration.postgres, []);
        if (rows.length === 0) this.query("INSERT INTO assay_schema (version) VALUES ($1)", [current + 1]);
        else this.query("UPDATE assay_schema SET version = $1", [current + 1]);
        return true;
      })();
      if (!applied) return;
    }
  }
}

class PostgresStatement implements Statement {
  constructor(private readonly db: PostgresDb, private readonly text: PostgresStatementText) {}

  get(...args: unknown[]): unknown {
    return this.db.query(this.text.text, bindValues(this.text, args)).rows[0];
  }

  all(...args: unknown[]): unknown[] {
    return this.db.query(this.text.text, bindValues(this.text, args)).rows;
  }

  run(...args: unknown[]): { changes: number } {
    return { changes: this.db.query(this.text.text, bindValues(this.text, args)).rowCount };
  }
}

/** Opens the store at a postgres:// URL and brings its schema up to date. */
export function openPostgresDatabase(url: string): PostgresDb {
  const db = new PostgresDb(new SyncClient({ connectionString: url }));
  try {
    db.migrate();
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
