/**
 * Cell enrollment: a cell agent authenticates with a random bearer token that is shown once at
 * enrollment and stored only as its SHA-256. Re-enrolling a cell rotates its token (the old one
 * stops working at once); revoking refuses the cell on its next call.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../store/database.js";
import { getCellByTokenHash, revokeCellRow, upsertCellToken, type CellRow } from "../store/cells-repo.js";
import { LinkError } from "../errors/link-errors.js";

/** Prefix that tells a cell token apart from an API key in logs and secret scanners. */
const TOKEN_PREFIX = "assay_cell_";

export function hashCellToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Enrolls (or re-enrolls) a cell and returns its new token; the caller must hand it over now. */
export async function enrollCell(db: Db, cell: { cellId: string; model: string }, now: () => Date = () => new Date()): Promise<string> {
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(cell.cellId)) {
    throw new Error(`cell id must be lowercase letters, digits, "-" or "_"; got ${JSON.stringify(cell.cellId)}`);
  }
  const token = TOKEN_PREFIX + randomBytes(32).toString("base64url");
  await upsertCellToken(db, cell.cellId, cell.model, hashCellToken(token), now().toISOString());
  return token;
}

/** Revokes a cell's token; returns false when the cell was never enrolled. */
export async function revokeCell(db: Db, cellId: string, now: () => Date = () => new Date()): Promise<boolean> {
  return await revokeCellRow(db, cellId, now().toISOString());
}

/**
 * The enrolled, unrevoked cell behind an `authorization` metadata value (`Bearer <token>`);
 * throws a LinkError (UNAUTHENTICATED) otherwise.
 */
export async function authenticateCell(db: Db, authorization: string | undefined): Promise<CellRow> {
  const match = authorization ? /^Bearer\s+(\S+)$/i.exec(authorization.trim()) : null;
  if (!match) throw new LinkError("token_missing", "send metadata `authorization: Bearer <cell token>`; enroll the cell to get a token");
  const cell = await getCellByTokenHash(db, hashCellToken(match[1]));
  if (!cell) throw new LinkError("token_unknown", "this cell token is not enrolled (or was rotated); re-enroll the cell and use the new token");
  if (cell.revoked) throw new LinkError("cell_revoked", `cell ${cell.id} was revoked at ${cell.revoked}; re-enroll it to get a new token`);
  return cell;
}
