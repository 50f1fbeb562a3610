/**
 * The `models` table: policy checkpoints (ONNX) an account uploads or an operator's mirror
 * supplies. A row is `uploading` until its last byte arrives and its hash checks, then `ready`;
 * it ends `failed` (wrong hash, not a model), `deleted` (by request) or `expired` (past its
 * retention). Moves are conditional UPDATEs on the status they leave, so racing requests cannot
 * both win.
 */
import type { Db } from "./database.js";
import { jsonElement, jsonObjectValues, jsonText } from "./sql-dialect.js";

export const MODEL_FORMATS = ["onnx"] as const;
export type ModelFormat = (typeof MODEL_FORMATS)[number];
export type ModelStatus = "uploading" | "ready" | "failed" | "deleted" | "expired";

export interface ModelRow {
  id: string;
  account_id: string;
  name: string;
  revision: string;
  format: ModelFormat;
  source: "upload" | "mirror";
  status: ModelStatus;
  created: string;
  bytes: number;
  sha256: string;
  received_bytes: number;
  retention: string;
  description: string | null;
  ready_at: string | null;
  ended_at: string | null;
  failure_message: string | null;
}

export type NewModel = Pick<ModelRow, "id" | "account_id" | "name" | "revision" | "format" | "source" | "created" | "bytes" | "sha256" | "retention">;

export async function insertModel(db: Db, row: NewModel): Promise<void> {
  await db.prepare(
    `INSERT INTO models (id, account_id, name, revision, format, source, status, created, bytes, sha256, retention)
     VALUES (@id, @account_id, @name, @revision, @format, @source, 'uploading', @created, @bytes, @sha256, @retention)`,
  ).run(row);
}

export async function getModel(db: Db, id: string): Promise<ModelRow | undefined> {
  return await db.prepare("SELECT * FROM models WHERE id = ?").get(id) as ModelRow | undefined;
}

/** The account's live model (uploading or ready) of this name and revision, if any. */
export async function findLiveModel(db: Db, accountId: string, name: string, revision: string): Promise<ModelRow | undefined> {
  return await db
    .prepare("SELECT * FROM models WHERE account_id = ? AND name = ? AND revision = ? AND status IN ('uploading', 'ready') ORDER BY created DESC LIMIT 1")
    .get(accountId, name, revision) as ModelRow | undefined;
}

/** An account's models, newest first; `before` is the id to page after. */
export async function listModels(db: Db, options: { accountId: string; name?: string; limit: number; before?: string }): Promise<ModelRow[]> {
  const where = ["account_id = @accountId"];
  if (options.name !== undefined) where.push("name = @name");
  if (options.before !== undefined) where.push("(created, id) < (SELECT created, id FROM models WHERE id = @before)");
  return await db
    .prepare(`SELECT * FROM models WHERE ${where.join(" AND ")} ORDER BY created DESC, id DESC LIMIT @limit`)
    .all({ accountId: options.accountId, name: options.name ?? null, before: options.before ?? null, limit: options.limit }) as ModelRow[];
}

/**
 * What an account's live models take: declared bytes of uploads in progress and ready models
 * together, and how many uploads are in progress (the quota and pending bound of model-limits.ts).
 */
export async function accountModelUsage(db: Db, accountId: string): Promise<{ bytes: number; pending: number }> {
  const row = await db
    .prepare(
      `SELECT COALESCE(SUM(bytes), 0) AS bytes, COALESCE(SUM(CASE WHEN status = 'uploading' THEN 1 ELSE 0 END), 0) AS pending
       FROM models WHERE account_id = ? AND status IN ('uploading', 'ready')`,
    )
    .get(accountId) as { bytes: number | string; pending: number | string };
  return { bytes: Number(row.bytes), pending: Number(row.pending) };
}

/** Records bytes received at `from` (the count must still be `from`); false when another request moved it. */
export async function advanceModelUpload(db: Db, id: string, from: number, to: number): Promise<boolean> {
  return (await db.prepare("UPDATE models SET received_bytes = ? WHERE id = ? AND status = 'uploading' AND received_bytes = ?").run(to, id, from)).changes === 1;
}

/** Counts every declared byte as received (a model copied in whole, from the mirror). */
export async function markModelReceived(db: Db, id: string): Promise<void> {
  await db.prepare("UPDATE models SET received_bytes = bytes WHERE id = ? AND status = 'uploading'").run(id);
}

/** Starts an upload over from byte 0 (the bytes received did not hash to the declared sha256). */
export async function restartModelUpload(db: Db, id: string): Promise<void> {
  await db.prepare("UPDATE models SET received_bytes = 0 WHERE id = ? AND status = 'uploading'").run(id);
}

export async function markModelReady(db: Db, id: string, description: unknown, at: string): Promise<boolean> {
  return (await db
    .prepare("UPDATE models SET status = 'ready', description = ?, ready_at = ? WHERE id = ? AND status = 'uploading'")
    .run(JSON.stringify(description), at, id)).changes === 1;
}

export async function markModelFailed(db: Db, id: string, message: string, at: string): Promise<boolean> {
  return (await db
    .prepare("UPDATE models SET status = 'failed', failure_message = ?, ended_at = ? WHERE id = ? AND status = 'uploading'")
    .run(message, at, id)).changes === 1;
}

/** Ends a live model as `deleted` or `expired`; false when it had already ended. */
export async function endModel(db: Db, id: string, status: "deleted" | "expired", at: string): Promise<boolean> {
  return (await db
    .prepare("UPDATE models SET status = ?, ended_at = ? WHERE id = ? AND status IN ('uploading', 'ready')")
    .run(status, at, id)).changes === 1;
}

/** Live models, for the retention sweep. */
export async function listLiveModels(db: Db): Promise<ModelRow[]> {
  return await db.prepare("SELECT * FROM models WHERE status IN ('uploading', 'ready') ORDER BY created").all() as ModelRow[];
}

/** Unfinished runs pinned to the model (`resolved_pins.models`): their episodes still need its bytes. */
export async function unfinishedRunsUsingModel(db: Db, modelId: string): Promise<string[]> {
  const rows = await db
    .prepare(
      `SELECT r.id FROM runs r
       WHERE r.status NOT IN ('completed', 'failed', 'stopped')
         AND EXISTS (SELECT 1 FROM ${jsonObjectValues(db, "r.resolved_pins", "models", "m")} WHERE ${jsonText(db, jsonElement("m"), "id")} = ?)
       ORDER BY r.created`,
    )
    .all(modelId) as Array<{ id: string }>;
  return rows.map((r) => r.id);
}
