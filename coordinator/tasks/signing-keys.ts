/**
 * Ed25519 key pairs that sign frozen task specs: one for the service (created on first use, i.e.
 * the first start that seeds or freezes a task) and one per customer account, created on demand.
 * Rows of `signing_keys`; public halves are published at GET /v1/signing-keys.
 * NOTE: private keys sit in the SQLite store as PKCS#8 PEM; a production deployment keeps the
 * service key in a KMS and signs there.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { randomBase62 } from "../auth/api-keys.js";
import type { Db } from "../store/database.js";
import { lockName } from "../store/named-lock.js";
import {
  findPublicSigningKey, findSigningKeyOfOwner, insertSigningKey, listPublicSigningKeys, type PublicSigningKeyRow, type SigningKeyRow,
} from "../store/signing-keys-repo.js";
import { transact } from "../store/tx.js";

/** `owner` of the service's own key; every other owner is an account id. */
export const SERVICE_KEY_OWNER = "service";

export type { SigningKeyRow } from "../store/signing-keys-repo.js";

/** A usable key: its id (as it appears in signatures) and the private key object. */
export interface SigningKey {
  id: string;
  owner: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

function toSigningKey(row: SigningKeyRow): SigningKey {
  return { id: row.id, owner: row.owner, privateKey: createPrivateKey(row.private_key_pem), publicKey: createPublicKey(row.public_key_pem) };
}

/** The owner's key, generating and storing it when the owner has none yet. */
export async function ensureSigningKey(db: Db, owner: string, now: Date = new Date()): Promise<SigningKey> {
  return await transact(db, async (tx) => {
    await lockName(tx, `signing-key:${owner}`);
    const existing = await findSigningKeyOfOwner(tx, owner);
    if (existing) return toSigningKey(existing);
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const row: SigningKeyRow = {
      id: `sk_${randomBase62(16)}`,
      owner,
      public_key_pem: publicKey.export({ type: "spki", format: "pem" }).toString(),
      private_key_pem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      created: now.toISOString(),
    };
    await insertSigningKey(tx, row);
    return toSigningKey(row);
  });
}

/** The service's key (generated on first call). */
export async function ensureServiceKey(db: Db, now?: Date): Promise<SigningKey> {
  return await ensureSigningKey(db, SERVICE_KEY_OWNER, now);
}

/** Public view of every signing key, oldest first (service key first on a fresh store). */
export async function listSigningKeys(db: Db): Promise<PublicSigningKeyRow[]> {
  return await listPublicSigningKeys(db);
}

export async function getPublicSigningKey(db: Db, id: string): Promise<PublicSigningKeyRow | undefined> {
  return await findPublicSigningKey(db, id);
}

/** The wire form of a public key (GET /v1/signing-keys). */
export function signingKeyView(row: Omit<SigningKeyRow, "private_key_pem">): Record<string, unknown> {
  return { object: "signing_key", id: row.id, owner: row.owner, algorithm: "ed25519", public_key_pem: row.public_key_pem, created: row.created };
}
