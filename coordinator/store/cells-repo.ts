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
export function lockCell(db: Db, cellId: string): void {
  if (db.dialect === "postgres") db.prepare("SELECT id FROM cells WHERE id = ? FOR UPDATE").get(cellId);
}

export function getCell(db: Db, cellId: string): CellRow | undefined {
  return db.prepare("SELECT * FROM cells WHERE id = ?").get(cellId) as CellRow | undefined;
}

/** Every enrolled cell (revoked ones included), by id. */
export function listCells(db: Db): CellRow[] {
  return db.prepare("SELECT * FROM cells ORDER BY id").all() as CellRow[];
}

export function getCellByTokenHash(db: Db, tokenSha256: string): CellRow | undefined {
  return db.prepare("SELECT * FROM cells WHERE token_sha256 = ?").get(tokenSha256) as CellRow | undefined;
}

/**
 * Creates the cell or, when it exists, rotates its token and clears a revocation. The seq
 * high-water mark survives re-enrollment: the agent's outbox numbering is kept across restarts.
 */
export function upsertCellToken(db: Db, cellId: string, model: string, tokenSha256: string, at: string): void {
  db.prepare(
    `INSERT INTO cells (id, token_sha256, model, enrolled) VALUES (?, ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET token_sha256 = excluded.token_sha256, model = excluded.model,
       enrolled = excluded.enrolled, revoked = NULL`,
  ).run(cellId, tokenSha256, model, at);
}

/** Marks the cell revoked; returns false when no such cell is enrolled. */
export function revokeCellRow(db: Db, cellId: string, at: string): boolean {
  return db.prepare("UPDATE cells SET revoked = ? WHERE id = ?").run(at, cellId).changes > 0;
}

export function setLastSeqApplied(db: Db, cellId: string, seq: number): void {
  db.prepare("UPDATE cells SET last_seq_applied = ? WHERE id = ?").run(seq, cellId);
}

export function recordHello(db: Db, cellId: string, helloJson: string, at: string): void {
  db.prepare("UPDATE cells SET hello = ?, last_seen = ? WHERE id = ?").run(helloJson, at, cellId);
}

export function touchCell(db: Db, cellId: string, at: string): void {
  db.prepare("UPDATE cells SET last_seen = ? WHERE id = ?").run(at, cellId);
}
