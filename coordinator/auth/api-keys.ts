/**
 * API key secrets: `asy_live_<base62>`; only the sha256 of a secret is stored, plus a short hint
 * so a human can tell keys apart. The secret leaves the service once, in the creation response.
 */
import { hash, randomBytes } from "node:crypto";
import type { Db } from "../store/database.js";
import { insertKey, type KeyRow } from "../store/keys-repo.js";
import type { Scope } from "./scopes.js";

export const LIVE_KEY_PREFIX = "asy_live_";
/** Length of the random part of a generated secret (base62, about 238 bits). */
export const SECRET_RANDOM_CHARS = 40;
/** Characters of the random part kept as the hint. */
export const HINT_CHARS = 6;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const WELL_FORMED = /^asy_live_[A-Za-z0-9]{16,128}$/;

/** Uniform random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function generateSecret(): string {
  return LIVE_KEY_PREFIX + randomBase62(SECRET_RANDOM_CHARS);
}

/** True when `text` has the live-key shape (prefix plus 16..128 base62 characters). */
export function isWellFormedSecret(text: string): boolean {
  return WELL_FORMED.test(text);
}

/** The secret's sha256, hex: what the store keeps. One-shot `hash`: it is on every request's path. */
export function hashSecret(secret: string): string {
  return hash("sha256", secret, "hex");
}

export function secretHint(secret: string): string {
  return secret.slice(LIVE_KEY_PREFIX.length, LIVE_KEY_PREFIX.length + HINT_CHARS);
}

/** Creates a key for `accountId`; returns the stored row and the secret (the only time it exists). */
export async function createApiKey(db: Db, accountId: string, scope: Scope[], now: Date, secret = generateSecret()): Promise<{ row: KeyRow; secret: string }> {
  if (!isWellFormedSecret(secret)) throw new Error(`API key secret must look like ${LIVE_KEY_PREFIX} followed by 16..128 letters or digits`);
  const row: KeyRow = {
    id: `key_${randomBase62(16)}`,
    account_id: accountId,
    secret_sha256: hashSecret(secret),
    hint: secretHint(secret),
    scope: JSON.stringify([...new Set(scope)]),
    created: now.toISOString(),
    revoked: null,
  };
  await insertKey(db, row);
  return { row, secret };
}

/** The spec's API key JSON; `secret` only when given (creation response). */
export function keyView(row: KeyRow, secret?: string): Record<string, unknown> {
  return {
    object: "key",
    id: row.id,
    scope: JSON.parse(row.scope) as string[],
    hint: `${LIVE_KEY_PREFIX}${row.hint}…`,
    created: row.created,
    revoked: row.revoked,
    ...(secret ? { secret } : {}),
  };
}
