/**
 * A lock on a name, held until the transaction ends, for get-or-create steps that several
 * coordinators on one PostgreSQL database may run at once (the first admin key, a signing key, a
 * service secret): the second waits, then reads what the first created, instead of both creating
 * it and one failing on the unique index. SQLite has one writer: nothing to do.
 * NOTE: call it inside a transaction; outside one the lock ends with the statement.
 */
import type { Db } from "./database.js";

export async function lockName(db: Db, name: string): Promise<void> {
  if (db.dialect === "postgres") await db.prepare("SELECT pg_advisory_xact_lock(hashtext(?))").get(name);
}
