/** API keys: rows of `api_keys`. Secrets are never stored, only their sha256. */
import { notifyChannel } from "./coordinators-repo.js";
import type { Db } from "./database.js";

/**
 * PostgreSQL channel on which a revocation announces the key's id, delivered when the revoking
 * transaction commits: the coordinators sharing the database drop the key from their caches.
 */
export const KEY_REVOCATIONS_CHANNEL = "assay_key_revocations";

export interface KeyRow {
  id: string;
  account_id: string;
  secret_sha256: string;
  hint: string;
  /** JSON array of scope strings. */
  scope: string;
  created: string;
  revoked: string | null;
}

export async function insertKey(db: Db, row: KeyRow): Promise<void> {
  await db.prepare(
    `INSERT INTO api_keys (id, account_id, secret_sha256, hint, scope, created, revoked)
     VALUES (@id, @account_id, @secret_sha256, @hint, @scope, @created, @revoked)`,
  ).run(row);
}

export async function findKeyBySecretSha256(db: Db, secretSha256: string): Promise<KeyRow | undefined> {
  return await db.prepare(`SELECT * FROM api_keys WHERE secret_sha256 = ?`).get(secretSha256) as KeyRow | undefined;
}

/** The account's keys, oldest first (revoked ones included, flagged by `revoked`). */
export async function listKeys(db: Db, accountId: string): Promise<KeyRow[]> {
  return await db.prepare(`SELECT * FROM api_keys WHERE account_id = ? ORDER BY created, id`).all(accountId) as KeyRow[];
}

export async function countKeys(db: Db, accountId: string): Promise<number> {
  return (await db.prepare(`SELECT COUNT(*) AS n FROM api_keys WHERE account_id = ?`).get(accountId) as { n: number }).n;
}

/**
 * Marks a key revoked; returns false when it does not exist or already was. On PostgreSQL the
 * revocation is announced on KEY_REVOCATIONS_CHANNEL in the same transaction (so with its commit,
 * and never without it).
 */
export async function revokeKey(db: Db, keyId: string, at: string): Promise<boolean> {
  return await db.transaction(async (tx) => {
    const revoked = (await tx.prepare(`UPDATE api_keys SET revoked = ? WHERE id = ? AND revoked IS NULL`).run(at, keyId)).changes === 1;
    if (revoked && tx.dialect === "postgres") await notifyChannel(tx, KEY_REVOCATIONS_CHANNEL, keyId);
    return revoked;
  });
}

export async function findKeyById(db: Db, keyId: string): Promise<KeyRow | undefined> {
  return await db.prepare(`SELECT * FROM api_keys WHERE id = ?`).get(keyId) as KeyRow | undefined;
}
