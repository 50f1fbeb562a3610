/**
 * The `cells` table: enrolled cell agents, their hashed tokens, and the highest agent seq the
 * coordinator has applied for each (the dedupe point of the at-least-once CellLink delivery).
 */
import type { Db } from "./database.js";

/** A `cells` row, columns as stored. */
export interface CellRow {
  id: string;
  token_sha256: string;
  model: string;
  enrolled: string;
  revoked: string | null;
  last_seq_applied: number;
  last_seen: string | null;
  /** JSON of the last Hello. */
  hello: string | null;
}

/** Locks the cell's row until the transaction ends (PostgreSQL; see runs-repo lockRun). */
export async function lockCell(db: Db, cellId: string): Promise<void> {
  if (db.dialect === "postgres") await db.prepare("SELECT id FROM cells WHERE id = ? FOR UPDATE").get(cellId);
}

/** lockCell and getCell in one statement (on SQLite, the read alone). */
export async function lockAndGetCell(db: Db, cellId: string): Promise<CellRow | undefined> {
  return await db.prepare(`SELECT * FROM cells WHERE id = ?${db.dialect === "postgres" ? " FOR UPDATE" : ""}`).get(cellId) as CellRow | undefined;
}

/** The cells among `cellIds` that are enrolled (revoked ones included), in one statement; in no particular order. */
export async function listCellsById(db: Db, cellIds: readonly string[]): Promise<CellRow[]> {
  if (cellIds.length === 0) return [];
  const ids = db.dialect === "postgres" ? "SELECT jsonb_array_elements_text(?::jsonb)" : "SELECT value FROM json_each(?)";
  return await db.prepare(`SELECT * FROM cells WHERE id IN (${ids})`).all(JSON.stringify(cellIds)) as CellRow[];
}

export async function getCell(db: Db, cellId: string): Promise<CellRow | undefined> {
  return await db.prepare("SELECT * FROM cells WHERE id = ?").get(cellId) as CellRow | undefined;
}

/** Every enrolled cell (revoked ones included), by id. */
export async function listCells(db: Db): Promise<CellRow[]> {
  return await db.prepare("SELECT * FROM cells ORDER BY id").all() as CellRow[];
}

export async function getCellByTokenHash(db: Db, tokenSha256: string): Promise<CellRow | undefined> {
  return await db.prepare("SELECT * FROM cells WHERE token_sha256 = ?").get(tokenSha256) as CellRow | undefined;
}

/**
 * Creates the cell or, when it exists, rotates its token and clears a revocation. The seq
 * high-water mark survives re-enrollment: the agent's outbox numbering is kept across restarts.
 */
export async function upsertCellToken(db: Db, cellId: string, model: string, tokenSha256: string, at: string): Promise<void> {
  await db.prepare(
    `INSERT INTO cells (id, token_sha256, model, enrolled) VALUES (?, ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET token_sha256 = excluded.token_sha256, model = excluded.model,
       enrolled = excluded.enrolled, revoked = NULL`,
  ).run(cellId, tokenSha256, model, at);
}

/** Marks the cell revoked; returns false when no such cell is enrolled. */
export async function revokeCellRow(db: Db, cellId: string, at: string): Promise<boolean> {
  return (await db.prepare("UPDATE cells SET revoked = ? WHERE id = ?").run(at, cellId)).changes > 0;
}

/**
 * The cell's next message in order: `last_seq_applied` moves from seq - 1 to seq in one guarded update,
 * which also takes the cell's row lock (and, waiting for another holder, checks the row as it committed).
 * False when the cell is unknown or its last applied seq is not seq - 1 (a resend, or a gap): then
 * read it under lockAndGetCell.
 */
export async function advanceLastSeqApplied(db: Db, cellId: string, seq: number): Promise<boolean> {
  return (await db.prepare("UPDATE cells SET last_seq_applied = ? WHERE id = ? AND last_seq_applied = ?").run(seq, cellId, seq - 1)).changes > 0;
}

export async function setLastSeqApplied(db: Db, cellId: string, seq: number): Promise<void> {
  await db.prepare("UPDATE cells SET last_seq_applied = ? WHERE id = ?").run(seq, cellId);
}

export async function recordHello(db: Db, cellId: string, helloJson: string, at: string): Promise<void> {
  await db.prepare("UPDATE cells SET hello = ?, last_seen = ? WHERE id = ?").run(helloJson, at, cellId);
}

export async function touchCell(db: Db, cellId: string, at: string): Promise<void> {
  await db.prepare("UPDATE cells SET last_seen = ? WHERE id = ?").run(at, cellId);
}
