/** Task Specs: rows of `tasks`. A frozen revision is addressed `<name>@v<N>` (N = `version`). */
import type { Db } from "./database.js";

export interface TaskRow {
  id: string;
  account_id: string | null;
  name: string;
  version: number | null;
  status: "draft" | "piloting" | "frozen";
  visibility: "private" | "published";
  created: string;
  frozen: string | null;
  /** JSON: the Task Spec's creation fields. */
  spec: string;
  /** JSON array of signature strings. */
  signatures: string;
  pilot: string | null;
}

export function insertTask(db: Db, row: TaskRow): void {
  db.prepare(
    `INSERT INTO tasks (id, account_id, name, version, status, visibility, created, frozen, spec, signatures, pilot)
     VALUES (@id, @account_id, @name, @version, @status, @visibility, @created, @frozen, @spec, @signatures, @pilot)`,
  ).run(row);
}

export function getTaskRow(db: Db, id: string): TaskRow | undefined {
  return db.prepare(`SELECT * FROM tasks WHERE id = ?`).get(id) as TaskRow | undefined;
}

const VISIBLE = `(visibility = 'published' OR account_id = @accountId)`;

/** A task by id, visible to the account (published, or the account's own). */
export function findVisibleTaskById(db: Db, accountId: string, id: string): TaskRow | undefined {
  return db.prepare(`SELECT * FROM tasks WHERE id = @id AND ${VISIBLE}`).get({ id, accountId }) as TaskRow | undefined;
}

/** The frozen revision `<name>@v<version>` visible to the account. */
export function findVisibleFrozenRevision(db: Db, accountId: string, name: string, version: number): TaskRow | undefined {
  return db
    .prepare(`SELECT * FROM tasks WHERE name = @name AND version = @version AND status = 'frozen' AND ${VISIBLE}`)
    .get({ name, version, accountId }) as TaskRow | undefined;
}

/** The newest frozen revision of `name` visible to the account. */
export function findNewestFrozenRevision(db: Db, accountId: string, name: string): TaskRow | undefined {
  return db
    .prepare(`SELECT * FROM tasks WHERE name = @name AND status = 'frozen' AND ${VISIBLE} ORDER BY version DESC LIMIT 1`)
    .get({ name, accountId }) as TaskRow | undefined;
}

/** Any task named `name` visible to the account (to explain why a bare name did not resolve). */
export function listVisibleTasksNamed(db: Db, accountId: string, name: string): TaskRow[] {
  return db.prepare(`SELECT * FROM tasks WHERE name = @name AND ${VISIBLE} ORDER BY created`).all({ name, accountId }) as TaskRow[];
}
