/**
 * The coordinator's SQLite store: one file, WAL, versioned migrations applied in order on open.
 * A migration is never edited once committed; a schema change is a new entry at the end.
 */
import Database from "better-sqlite3";
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { MIGRATIONS } from "./migrations.js";

export type Db = Database.Database;

/** Opens (creating if needed) the store at `path` and brings its schema up to date. */
export function openDatabase(path: string): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  // The file holds webhook secrets, signing keys and key hashes: readable by the coordinator's user only.
  if (path !== ":memory:") for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
  // FULL, not NORMAL: an acknowledged episode must survive a power cut, not only a process crash.
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`store schema version ${current} is newer than this coordinator knows (${MIGRATIONS.length}); upgrade the coordinator`);
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
