/**
 * The store on PostgreSQL, behind the same `Db` as SQLite. A `pg.Pool` holds the connections: a
 * statement outside a transaction takes any pooled client; a transaction takes one client for its
 * whole life (BEGIN ... COMMIT at READ COMMITTED, savepoints when nested) and gives it back after.
 * Statements are rewritten once per SQL text for PostgreSQL's parameters and run as named prepared
 * statements, so each client parses a text once. The migrations are the SQLite texts rewritten by
 * postgres-ddl.ts, applied one transaction each under an advisory lock so that coordinators
 * starting together on an empty database apply each once.
 */
import { createHash } from "node:crypto";
import pg from "pg";
import type { Db, Statement } from "../db.js";
import { MIGRATIONS } from "../migrations.js";
import type { StatementHook } from "../statement-metrics.js";
import { TransactionScope } from "../transaction-scope.js";
import { bindValues, toPostgresPlaceholders, type PostgresStatementText } from "./placeholders.js";
import { postgresDdl } from "./postgres-ddl.js";
import { postgresError } from "./postgres-error.js";

export { PostgresError } from "./postgres-error.js";

/** Key of the advisory lock that serialises migrations when several coordinators start at once. */
const MIGRATION_LOCK = 0x61737361; // "assa"

const INT8 = 20;

/**
 * BIGINT (every INTEGER column of the migrated schema, and COUNT(*)) arrives as text, since it may
 * exceed 2^53. Store integers are counts, byte sizes and seeds: read them as numbers, and refuse one
 * that would lose precision rather than round it.
 */
function getTypeParser(oid: number, format?: "text" | "binary"): (value: string) => unknown {
  if (oid === INT8 && format !== "binary") {
    return (value: string) => {
      const n = Number(value);
      if (!Number.isSafeInteger(n)) throw new Error(`store integer ${value} exceeds 2^53 and cannot be read as a number`);
      return n;
    };
  }
  return pg.types.getTypeParser(oid, format ?? "text") as (value: string) => unknown;
}

interface PreparedText extends PostgresStatementText {
  /** The prepared statement's name on every client, derived from the text. */
  name: string;
}

/** What runs a query: the pool, or the client a transaction holds. */
type Queryable = Pick<pg.PoolClient, "query">;

export interface PostgresDbOptions {
  /** Most connections held at once; default 10. */
  poolSize?: number;
  /** Called once per statement sent (statement-metrics.ts); none by default. */
  onStatement?: StatementHook;
}

export class PostgresDb implements Db {
  readonly dialect = "postgres" as const;
  private readonly texts = new Map<string, PreparedText>();
  private readonly scope = new TransactionScope();

  constructor(private readonly pool: pg.Pool, readonly onStatement?: StatementHook) {}

  get inTransaction(): boolean {
    return this.scope.active;
  }

  /** `sql` rewritten for PostgreSQL, once per text. */
  text(sql: string): PreparedText {
    let text = this.texts.get(sql);
    if (!text) {
      const rewritten = toPostgresPlaceholders(sql);
      text = { ...rewritten, name: `s_${createHash("sha1").update(rewritten.text).digest("hex").slice(0, 20)}` };
      this.texts.set(sql, text);
    }
    return text;
  }

  prepare(sql: string): Statement {
    return new PostgresStatement(this.text(sql), sql, this.onStatement, () => {
      this.scope.check();
      return this.onPool;
    });
  }

  async exec(sql: string): Promise<void> {
    this.scope.check();
    this.onStatement?.(sql);
    await run(this.onPool, sql, []);
  }

  /**
   * Attempts at a statement outside a transaction, or at a transaction's BEGIN, whose connection the server had
   * ended before it ran: one per pooled client that may be such a connection, and one more on a new one.
   */
  private get attempts(): number {
    return this.pool.options.max + 1;
  }

  /**
   * The pool as statements outside a transaction use it. A pooled client whose connection the server ended while
   * it sat idle (a restart, `pg_terminate_backend`) is dropped by the pool once the client has read the server's
   * last message; until then a statement given that client gets the message as its answer (SQLSTATE 57P01
   * admin_shutdown, 57P02 crash_shutdown). The session ended before the server read the statement, or while it
   * ran it, which aborts it (a statement outside a transaction commits with its own end): nothing of it stayed,
   * and it is sent again on another client.
   */
  private readonly onPool: Queryable = {
    query: async (config: pg.QueryConfig) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.pool.query(config);
        } catch (error) {
          if (!isSessionEndedByServer(error) || attempt >= this.attempts) throw error;
        }
      }
    },
  } as Queryable;

  async transaction<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    this.scope.check();
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      let broken: Error | undefined;
      const connection = new PostgresConnection(this, client, 0);
      try {
        return await this.scope.run(() => connection.transaction(fn));
      } catch (error) {
        // A client whose connection failed is not given back to the pool.
        if (isConnectionError(error)) broken = error as Error;
        // Its BEGIN failed with the connection, so nothing of `fn` ran: again, on another connection.
        if (broken && !connection.began && attempt < this.attempts) continue;
        throw error;
      } finally {
        client.release(broken ?? false);
      }
    }
  }

  /** Waits for the clients in use to come back, then ends every connection. */
  async close(): Promise<void> {
    await this.pool.end();
  }

  /** Applies the migrations the database lacks (see the file's comment). */
  async migrate(): Promise<void> {
    for (;;) {
      const applied = await this.transaction(async (tx) => {
        const c = tx as PostgresConnection;
        await c.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`, []);
        // Created under the lock: two concurrent CREATE TABLE IF NOT EXISTS can both fail on pg_type.
        await c.query("CREATE TABLE IF NOT EXISTS assay_schema (version INTEGER NOT NULL)", []);
        const rows = (await c.query("SELECT version FROM assay_schema", [])).rows as Array<{ version: number }>;
        const current = rows[0]?.version ?? 0;
        if (current > MIGRATIONS.length) {
          throw new Error(`store schema version ${current} is newer than this coordinator knows (${MIGRATIONS.length}); upgrade the coordinator`);
        }
        if (current === MIGRATIONS.length) return false;
        const migration = MIGRATIONS[current];
        await c.query(typeof migration === "string" ? postgresDdl(migration) : migration.postgres, []);
        if (rows.length === 0) await c.query("INSERT INTO assay_schema (version) VALUES ($1)", [current + 1]);
        else await c.query("UPDATE assay_schema SET version = $1", [current + 1]);
        return true;
      });
      if (!applied) return;
    }
  }
}

/** One client inside a transaction (depth 0 opens it; deeper levels are savepoints). */
class PostgresConnection implements Db {
  readonly dialect = "postgres" as const;
  private open = true;
  /** True once this level's BEGIN (or SAVEPOINT) has succeeded. */
  began = false;

  constructor(private readonly db: PostgresDb, private readonly client: pg.PoolClient, private readonly depth: number) {}

  get inTransaction(): boolean {
    return this.open;
  }

  prepare(sql: string): Statement {
    return new PostgresStatement(this.db.text(sql), sql, this.db.onStatement, () => this.queryable());
  }

  async exec(sql: string): Promise<void> {
    const on = this.queryable();
    this.db.onStatement?.(sql);
    await run(on, sql, []);
  }

  query(text: string, values: unknown[]): Promise<pg.QueryResult> {
    return run(this.queryable(), text, values);
  }

  async transaction<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    const savepoint = `s${this.depth}`;
    await this.control(this.depth === 0 ? "BEGIN" : `SAVEPOINT ${savepoint}`);
    this.began = true;
    const inner = new PostgresConnection(this.db, this.client, this.depth + 1);
    try {
      const result = await fn(inner);
      inner.open = false;
      await this.control(this.depth === 0 ? "COMMIT" : `RELEASE SAVEPOINT ${savepoint}`);
      return result;
    } catch (error) {
      inner.open = false;
      try {
        await this.control(this.depth === 0 ? "ROLLBACK" : `ROLLBACK TO SAVEPOINT ${savepoint}; RELEASE SAVEPOINT ${savepoint}`);
      } catch {
        // The connection is gone; PostgreSQL has rolled the transaction back with it.
      }
      throw error;
    }
  }

  close(): Promise<void> {
    return Promise.reject(new Error("a transaction's connection cannot close the store; close the Db that opened it"));
  }

  /** BEGIN, COMMIT, ROLLBACK or a savepoint, on the transaction's client. */
  private control(sql: string): Promise<pg.QueryResult> {
    this.db.onStatement?.(sql);
    return run(this.client, sql, []);
  }

  private queryable(): Queryable {
    if (!this.open) throw new Error("this transaction has ended; run statements on the database or a new transaction");
    return this.client;
  }
}

class PostgresStatement implements Statement {
  constructor(
    private readonly text: PreparedText,
    private readonly sql: string,
    private readonly onStatement: StatementHook | undefined,
    private readonly on: () => Queryable,
  ) {}

  async get(...args: unknown[]): Promise<unknown> {
    return (await this.query(args)).rows[0];
  }

  async all(...args: unknown[]): Promise<unknown[]> {
    return (await this.query(args)).rows;
  }

  async run(...args: unknown[]): Promise<{ changes: number }> {
    return { changes: (await this.query(args)).rowCount ?? 0 };
  }

  async values(...args: unknown[]): Promise<unknown[] | undefined> {
    return (await this.query(args, "array")).rows[0] as unknown[] | undefined;
  }

  private query(args: unknown[], rowMode?: "array"): Promise<pg.QueryResult> {
    const values = bindValues(this.text, args);
    const on = this.on();
    this.onStatement?.(this.sql);
    return run(on, this.text.text, values, this.text.name, rowMode);
  }
}

/** Runs one query; statements with parameters as named prepared statements (parsed once per client). */
async function run(on: Queryable, text: string, values: unknown[], name?: string, rowMode?: "array"): Promise<pg.QueryResult> {
  try {
    const config: pg.QueryConfig = name && values.length > 0 ? { text, values, name } : { text, values };
    if (rowMode) (config as pg.QueryArrayConfig).rowMode = rowMode;
    const result = (await on.query(config)) as pg.QueryResult | pg.QueryResult[];
    // Several statements in one text (no parameters) give one result each.
    if (!Array.isArray(result)) return result;
    const last = result.at(-1);
    return { ...(last ?? { rows: [], fields: [], command: "", oid: 0 }), rowCount: result.reduce((n, r) => n + (r.rowCount ?? 0), 0) } as pg.QueryResult;
  } catch (error) {
    throw postgresError(error);
  }
}

/** The server ended the session (an administrator, a shutdown): 57P01 admin_shutdown, 57P02 crash_shutdown. */
function isSessionEndedByServer(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === "57P01" || code === "57P02";
}

/** The connection itself failed (no SQLSTATE, class 08, or the server shutting it down). */
function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return !code || code.startsWith("08") || code.startsWith("57P");
}

/** Opens the store at a postgres:// URL and brings its schema up to date. */
export async function openPostgresDatabase(url: string, options: PostgresDbOptions = {}): Promise<PostgresDb> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    types: { getTypeParser } as pg.CustomTypesConfig,
    // Per connection: a lock waited for, a statement, or a transaction left idle cannot hold the coordinator for long.
    lock_timeout: 5_000,
    statement_timeout: 30_000,
    idle_in_transaction_session_timeout: 60_000,
    connectionTimeoutMillis: 60_000,
  });
  // An idle client the server ends (a restart) must not crash the process: the pool drops it and connects anew.
  pool.on("error", () => undefined);
  // So must one a transaction holds: its pending query fails instead, and the client is not given back.
  pool.on("connect", (client) => void client.on("error", () => undefined));
  const db = new PostgresDb(pool, options.onStatement);
  try {
    await db.migrate();
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
