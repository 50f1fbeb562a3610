/**
 * The coordinator's store: one SQLite file (WAL, the default) or a PostgreSQL database
 * (ASSAY_DATABASE_URL), behind one asynchronous interface, with versioned migrations applied in
 * order on open. A migration is never edited once committed; a schema change is a new entry at
 * the end (migrations.ts says what both engines accept).
 */
import Database from "better-sqlite3";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { AsyncMutex } from "../async/async-mutex.js";
import { MIGRATIONS } from "./migrations.js";
import type { Db, Statement } from "./db.js";
import { openPostgresDatabase } from "./postgres/postgres-db.js";
import type { StatementHook } from "./statement-metrics.js";
import { TransactionScope } from "./transaction-scope.js";

export type { Db, Dialect, Statement } from "./db.js";

export interface DatabaseOptions {
  /** PostgreSQL: most connections this process holds (one per open transaction, plus statements outside one). Default 10. */
  poolSize?: number;
  /** Called once per statement sent (statement-metrics.ts); none by default. */
  onStatement?: StatementHook;
}

/** Where the store lives: postgres://... or postgresql://... for PostgreSQL, else a SQLite file path (or ":memory:"). */
export async function openDatabase(location: string, options: DatabaseOptions = {}): Promise<Db> {
  return /^postgres(ql)?:\/\//.test(location) ? openPostgresDatabase(location, options) : openSqliteDatabase(location, options);
}

/** Opens (creating if needed) the SQLite store at `path` and brings its schema up to date. */
export function openSqliteDatabase(path: string, options: Pick<DatabaseOptions, "onStatement"> = {}): SqliteDb {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const raw = new Database(path);
  raw.pragma("journal_mode = WAL");
  // The file holds webhook secrets, signing keys and key hashes: readable by the coordinator's user only.
  if (path !== ":memory:") for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
  // FULL, not NORMAL: an acknowledged episode must survive a power cut, not only a process crash.
  raw.pragma("synchronous = FULL");
  raw.pragma("foreign_keys = ON");
  raw.pragma("busy_timeout = 5000");
  migrate(raw);
  return new SqliteDb(raw, options.onStatement);
}

/** Statements kept prepared, by SQL text; beyond this many distinct texts the rest are prepared per use. */
const STATEMENT_CACHE_LIMIT = 2000;

/**
 * better-sqlite3 behind the async interface: each statement runs synchronously and returns a
 * settled promise. A transaction holds the one connection across its awaits, so it holds a lock:
 * other transactions wait their turn, and so does a statement on the database issued meanwhile
 * (it would otherwise join that transaction). One issued from inside the transaction's own async
 * context is refused (TransactionScope): it would wait for itself.
 */
export class SqliteDb implements Db {
  readonly dialect = "sqlite" as const;
  private readonly statements = new Map<string, Database.Statement>();
  /** The same texts prepared in raw mode (rows as arrays) for `values`: a statement's mode is its own. */
  private readonly rawStatements = new Map<string, Database.Statement>();
  /** What prepare() hands out, by SQL text: it holds nothing but the text, so one serves every caller. */
  private readonly handles = new Map<string, Statement>();
  private readonly lock = new AsyncMutex();
  private readonly scope = new TransactionScope();

  constructor(readonly raw: Database.Database, private readonly onStatement?: StatementHook) {}

  get inTransaction(): boolean {
    return this.scope.active;
  }

  /** The prepared better-sqlite3 statement for `sql`, cached by its text; called once per execution. */
  statement(sql: string): Database.Statement {
    this.onStatement?.(sql);
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.raw.prepare(sql);
      if (this.statements.size < STATEMENT_CACHE_LIMIT) this.statements.set(sql, statement);
    }
    return statement;
  }

  /** statement() in raw mode: its rows are arrays of column values. */
  rawStatement(sql: string): Database.Statement {
    this.onStatement?.(sql);
    let statement = this.rawStatements.get(sql);
    if (!statement) {
      statement = this.raw.prepare(sql).raw(true);
      if (this.rawStatements.size < STATEMENT_CACHE_LIMIT) this.rawStatements.set(sql, statement);
    }
    return statement;
  }

  prepare(sql: string): Statement {
    let statement = this.handles.get(sql);
    if (!statement) {
      statement = {
        get: (...params) => this.outside(() => this.statement(sql).get(...params)),
        all: (...params) => this.outside(() => this.statement(sql).all(...params)),
        run: (...params) => this.outside(() => ({ changes: this.statement(sql).run(...params).changes })),
        values: (...params) => this.outside(() => this.rawStatement(sql).get(...params) as unknown[] | undefined),
      };
      if (this.handles.size < STATEMENT_CACHE_LIMIT) this.handles.set(sql, statement);
    }
    return statement;
  }

  async exec(sql: string): Promise<void> {
    await this.outside(() => this.execute(sql));
  }

  /** Runs statements without parameters on the connection, counted. */
  execute(sql: string): void {
    this.onStatement?.(sql);
    this.raw.exec(sql);
  }

  async transaction<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    this.scope.check();
    return this.lock.run(() => this.scope.run(() => new SqliteConnection(this, 0).transaction(fn)));
  }

  async close(): Promise<void> {
    // Waits for the transaction in progress (and those queued) to end.
    await this.lock.run(() => this.raw.close());
  }

  /** Runs a statement outside any transaction: at once when none is open, else after the open ones. */
  private outside<T>(run: () => T): Promise<T> {
    try {
      this.scope.check();
      if (!this.lock.locked) return Promise.resolve(run());
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.lock.run(run);
  }
}

/** The connection as a transaction (depth 0) or one of its savepoints sees it, under the lock. */
class SqliteConnection implements Db {
  readonly dialect = "sqlite" as const;
  private open = true;

  constructor(private readonly db: SqliteDb, private readonly depth: number) {}

  get inTransaction(): boolean {
    return this.open;
  }

  prepare(sql: string): Statement {
    return {
      get: (...params) => this.now(() => this.db.statement(sql).get(...params)),
      all: (...params) => this.now(() => this.db.statement(sql).all(...params)),
      run: (...params) => this.now(() => ({ changes: this.db.statement(sql).run(...params).changes })),
      values: (...params) => this.now(() => this.db.rawStatement(sql).get(...params) as unknown[] | undefined),
    };
  }

  exec(sql: string): Promise<void> {
    return this.now(() => this.db.execute(sql));
  }

  /** Opens this level's transaction (BEGIN, or a savepoint inside one) and runs `fn` on a connection one level down. */
  async transaction<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    const raw = this.db.raw;
    const savepoint = `s${this.depth}`;
    this.db.execute(this.depth === 0 ? "BEGIN" : `SAVEPOINT ${savepoint}`);
    const inner = new SqliteConnection(this.db, this.depth + 1);
    try {
      const result = await fn(inner);
      inner.open = false;
      this.db.execute(this.depth === 0 ? "COMMIT" : `RELEASE SAVEPOINT ${savepoint}`);
      return result;
    } catch (error) {
      inner.open = false;
      // SQLite may have rolled the whole transaction back already (a full disk, an interrupt).
      if (raw.inTransaction) this.db.execute(this.depth === 0 ? "ROLLBACK" : `ROLLBACK TO SAVEPOINT ${savepoint}; RELEASE SAVEPOINT ${savepoint}`);
      throw error;
    }
  }

  close(): Promise<void> {
    return Promise.reject(new Error("a transaction's connection cannot close the store; close the Db that opened it"));
  }

  private now<T>(run: () => T): Promise<T> {
    try {
      if (!this.open) throw new Error("this transaction has ended; run statements on the database or a new transaction");
      return Promise.resolve(run());
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }
}

function migrate(db: Database.Database): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`store schema version ${current} is newer than this coordinator knows (${MIGRATIONS.length}); upgrade the coordinator`);
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    const migration = MIGRATIONS[version];
    db.transaction(() => {
      db.exec(typeof migration === "string" ? migration : migration.sqlite);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
