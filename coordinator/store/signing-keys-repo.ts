/** Ed25519 signing key pairs of the service and of accounts: rows of `signing_keys` (coordinator/tasks/signing-keys.ts makes them). */
import type { Db } from "./database.js";

export interface SigningKeyRow {
  id: string;
  owner: string;
  public_key_pem: string;
  private_key_pem: string;
  created: string;
}

/** A key's public columns: never the private half. */
export type PublicSigningKeyRow = Omit<SigningKeyRow, "private_key_pem">;

export async function findSigningKeyOfOwner(db: Db, owner: string): Promise<SigningKeyRow | undefined> {
  return await db.prepare(`SELECT * FROM signing_keys WHERE owner = ?`).get(owner) as SigningKeyRow | undefined;
}

export async function insertSigningKey(db: Db, row: SigningKeyRow): Promise<void> {
  await db.prepare(`INSERT INTO signing_keys (id, owner, public_key_pem, private_key_pem, created) VALUES (@id, @owner, @public_key_pem, @private_key_pem, @created)`).run(row);
}

/** Every key's public columns, oldest first. */
export async function listPublicSigningKeys(db: Db): Promise<PublicSigningKeyRow[]> {
  return await db.prepare(`SELECT id, owner, public_key_pem, created FROM signing_keys ORDER BY created, id`).all() as PublicSigningKeyRow[];
}

export async function findPublicSigningKey(db: Db, id: string): Promise<PublicSigningKeyRow | undefined> {
  return await db.prepare(`SELECT id, owner, public_key_pem, created FROM signing_keys WHERE id = ?`).get(id) as PublicSigningKeyRow | undefined;
}
