/**
 * Task Specs: rows of `tasks`. A frozen revision is addressed `<name>@v<N>` (N = `version`).
 * Readers return `TaskRecord`s, whose JSON columns (spec, signatures, pilot) are parsed here once.
 */
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

/** A task as the coordinator reads it: the row with its JSON columns parsed. */
export interface TaskRecord extends Omit<TaskRow, "spec" | "signatures" | "pilot"> {
  /** The Task Spec's creation fields (coordinator/tasks/validate-task.ts TaskSpecFields). */
  spec: Record<string, unknown>;
  signatures: string[];
  /** `{run_id, robot, episodes, amendments}` once piloted. */
  pilot: Record<string, unknown> | null;
}

/** Parses a `tasks` row once, at the store's edge. */
export function taskRecordOf(row: TaskRow): TaskRecord {
  return {
    ...row,
    spec: JSON.parse(row.spec) as Record<string, unknown>,
    signatures: JSON.parse(row.signatures) as string[],
    pilot: row.pilot === null ? null : (JSON.parse(row.pilot) as Record<string, unknown>),
  };
}

const one = (row: unknown): TaskRecord | undefined => (row ? taskRecordOf(row as TaskRow) : undefined);
const many = (rows: unknown[]): TaskRecord[] => (rows as TaskRow[]).map(taskRecordOf);

export async function insertTask(db: Db, row: TaskRow): Promise<void> {
  await db.prepare(
    `INSERT INTO tasks (id, account_id, name, version, status, visibility, created, frozen, spec, signatures, pilot)
     VALUES (@id, @account_id, @name, @version, @status, @visibility, @created, @frozen, @spec, @signatures, @pilot)`,
  ).run(row);
}

export async function getTask(db: Db, id: string): Promise<TaskRecord | undefined> {
  return one(await db.prepare(`SELECT * FROM tasks WHERE id = ?`).get(id));
}

/**
 * What an account may see of tasks: its own in any status, and other accounts' published frozen
 * revisions. Another account's draft or piloting task is invisible even when marked published, so
 * no answer tells its existence (or status) apart from a name nobody uses.
 */
const VISIBLE = `(account_id = @accountId OR (visibility = 'published' AND status = 'frozen'))`;

/** A task by id, visible to the account (its own, or a published frozen revision). */
export async function findVisibleTaskById(db: Db, accountId: string, id: string): Promise<TaskRecord | undefined> {
  return one(await db.prepare(`SELECT * FROM tasks WHERE id = @id AND ${VISIBLE}`).get({ id, accountId }));
}

/** The frozen revision `<name>@v<version>` visible to the account. */
export async function findVisibleFrozenRevision(db: Db, accountId: string, name: string, version: number): Promise<TaskRecord | undefined> {
  return one(await db
    .prepare(`SELECT * FROM tasks WHERE name = @name AND version = @version AND status = 'frozen' AND ${VISIBLE}`)
    .get({ name, version, accountId }));
}

/** The newest frozen revision of `name` visible to the account. */
export async function findNewestFrozenRevision(db: Db, accountId: string, name: string): Promise<TaskRecord | undefined> {
  return one(await db
    .prepare(`SELECT * FROM tasks WHERE name = @name AND status = 'frozen' AND ${VISIBLE} ORDER BY version DESC LIMIT 1`)
    .get({ name, accountId }));
}

/** Any task named `name` visible to the account (to explain why a bare name did not resolve). */
export async function listVisibleTasksNamed(db: Db, accountId: string, name: string): Promise<TaskRecord[]> {
  return many(await db.prepare(`SELECT * FROM tasks WHERE name = @name AND ${VISIBLE} ORDER BY created`).all({ name, accountId }));
}

/** The account that owns task name `name` (whoever created it first), or undefined when unused. */
export async function accountOwningTaskName(db: Db, name: string): Promise<string | undefined> {
  const row = await db.prepare(`SELECT account_id FROM tasks WHERE name = ? ORDER BY created, id LIMIT 1`).get(name) as { account_id: string | null } | undefined;
  return row?.account_id ?? undefined;
}

const READABLE = VISIBLE;

/** A task the account may read: its own (any status), or anyone's published frozen revision. */
export async function findReadableTaskById(db: Db, accountId: string, id: string): Promise<TaskRecord | undefined> {
  return one(await db.prepare(`SELECT * FROM tasks WHERE id = @id AND ${READABLE}`).get({ id, accountId }));
}

/** Tasks the account may read, newest first (created, then id, descending); `before` is a cursor id. */
export async function listReadableTasks(db: Db, query: { accountId: string; limit: number; before?: string }): Promise<TaskRecord[]> {
  const cursor = query.before
    ? `AND (created, id) < (SELECT created, id FROM tasks WHERE id = @before)`
    : "";
  return many(await db
    .prepare(`SELECT * FROM tasks WHERE ${READABLE} ${cursor} ORDER BY created DESC, id DESC LIMIT @limit`)
    .all({ accountId: query.accountId, before: query.before ?? null, limit: query.limit }));
}

/**
 * The task a run pins, whoever owns it: `<name>@v<N>` (a frozen revision) or a task id (a pilot's
 * draft). The run was validated against the account's visibility when it was submitted.
 */
export async function findPinnedTask(db: Db, pin: string): Promise<TaskRecord | undefined> {
  const revision = /^(.+)@v(\d+)$/.exec(pin);
  return revision
    ? one(await db.prepare(`SELECT * FROM tasks WHERE name = ? AND version = ?`).get(revision[1], Number(revision[2])))
    : one(await db.prepare(`SELECT * FROM tasks WHERE id = ?`).get(pin));
}

/** Highest frozen version of `name` (0 when none): a freeze takes this + 1. */
export async function maxFrozenVersion(db: Db, name: string): Promise<number> {
  const row = await db.prepare(`SELECT MAX(version) AS v FROM tasks WHERE name = ? AND status = 'frozen'`).get(name) as { v: number | null };
  return row.v ?? 0;
}

/** Replaces a draft's or piloting task's spec (and name, visibility, pilot, which amend may change). */
export async function updateTaskSpec(db: Db, id: string, fields: { name: string; visibility: string; spec: string; pilot: string | null }): Promise<void> {
  await db.prepare(`UPDATE tasks SET name = @name, visibility = @visibility, spec = @spec, pilot = @pilot WHERE id = @id`).run({ id, ...fields });
}

/** Records a pilot: status piloting and the pilot JSON. */
export async function setTaskPilot(db: Db, id: string, pilot: string): Promise<void> {
  await db.prepare(`UPDATE tasks SET status = 'piloting', pilot = ? WHERE id = ?`).run(pilot, id);
}

/** Gives a task an owner, its signatures and frozen timestamp (a catalogue fixture stored by an older coordinator, adopted). */
export async function adoptTaskRow(db: Db, id: string, fields: { accountId: string; signatures: string; frozen: string }): Promise<void> {
  await db.prepare(`UPDATE tasks SET account_id = ?, signatures = ?, frozen = ? WHERE id = ?`).run(fields.accountId, fields.signatures, fields.frozen, id);
}

/** Whether `name`@v`version` is a frozen task published to everyone. */
export async function isPublishedTaskRevision(db: Db, name: string, version: number): Promise<boolean> {
  return await db.prepare("SELECT 1 FROM tasks WHERE name = ? AND version = ? AND status = 'frozen' AND visibility = 'published'").get(name, version) !== undefined;
}

/** Freezes a task at `version` with its frozen timestamp and signatures. */
export async function freezeTaskRow(db: Db, id: string, fields: { version: number; frozen: string; signatures: string }): Promise<void> {
  await db.prepare(`UPDATE tasks SET status = 'frozen', version = @version, frozen = @frozen, signatures = @signatures WHERE id = @id`).run({ id, ...fields });
}
