/**
 * The coordinator's store: one SQLite file (WAL, the default) or a PostgreSQL database
 * (ASSAY_DATABASE_URL), behind one synchronous interface, with versioned migrations applied in
 * order on open. A migration is never edited once committed; a schema change is a new entry at
 * the end (migrations.ts says what both engines accept).
 */
import Database from "better-sqlite3";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { MIGRATIONS } from "./migrations.js";
import type { Db, Statement } from "./db.js";
import { openPostgresDatabase } from "./postgres/postgres-db.js";

export type { Db, Dialect, Statement } from "./db.js";

/** Where the store lives: postgres://... or postgresql://... for PostgreSQL, else a SQLite file path (or ":memory:"). */
export function openDatabase(location: string): Db {
  return /^postgres(ql)?:\/\//.test(location) ? openPostgresDatabase(location) : openSqliteDatabase(location);
}

/** Opens (creating if needed) the SQLite store at `path` and brings its schema up to date. */
export function openSqliteDatabase(path: string): SqliteDb {
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
  return new SqliteDb(raw);
}

export class SqliteDb implements Db {
  readonly dialect = "sqlite" as const;
  constructor(readonly raw: Database.Database) {}

  get inTransaction(): boolean {
    return this.raw.inTransaction;
  }

  prepare(sql: string): Statement {
    return this.raw.prepare(sql);
  }

  transaction<A extends unknown[], T>(fn: (...args: A) => T): (...args: A) => T {
    return this.raw.transaction(fn) as unknown as (...args: A) => T;
  }

  exec(sql: string): void {
    this.raw.exec(sql);
  }

  close(): void {
    this.raw.close();
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
