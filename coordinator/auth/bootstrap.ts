/** First-start bootstrap: the default account and its admin key. */
import type { Db } from "../store/database.js";
import { DEFAULT_ACCOUNT_ID, ensureAccount } from "../store/accounts-repo.js";
import { countKeys } from "../store/keys-repo.js";
import { createApiKey, isWellFormedSecret, LIVE_KEY_PREFIX } from "./api-keys.js";
import { SCOPES } from "./scopes.js";
import { lockName } from "../store/named-lock.js";
import { transact } from "../store/tx.js";

/**
 * Ensures account `acct_default` exists and, when it has no key yet (first start), creates an admin
 * key holding every scope. With `apiKey` (ASSAY_API_KEY) that exact secret becomes the admin key; it
 * must look like `asy_live_` + 16..128 base62 characters. The secret is returned only when created.
 * NOTE: only the first start creates a key. A later start with a different ASSAY_API_KEY creates nothing
 * (create further keys with POST /v1/keys).
 */
export async function ensureAdminKey(db: Db, options: { apiKey?: string; now?: Date } = {}): Promise<{ created: boolean; secret?: string }> {
  const now = options.now ?? new Date();
  if (options.apiKey !== undefined && !isWellFormedSecret(options.apiKey)) {
    throw new Error(`ASSAY_API_KEY must be ${LIVE_KEY_PREFIX} followed by 16..128 letters or digits`);
  }
  return await transact(db, async (tx) => {
    await lockName(tx, "bootstrap:admin-key");
    await ensureAccount(tx, DEFAULT_ACCOUNT_ID, "Default account", now.toISOString());
    if (await countKeys(tx, DEFAULT_ACCOUNT_ID) > 0) return { created: false };
    const { secret } = await createApiKey(tx, DEFAULT_ACCOUNT_ID, [...SCOPES], now, options.apiKey);
    return { created: true, secret };
  });
}

/**
 * Ensures the operator account (`acct_assay`, which owns the public catalogue) has a technicians' key:
 * keys:admin for kit operations and cell enrollment, runs:read to look around. Created on the first
 * start only; the secret is returned only then, like the admin key's.
 */
export async function ensureOperatorKey(db: Db, operatorAccountId: string, options: { now?: Date } = {}): Promise<{ created: boolean; secret?: string }> {
  const now = options.now ?? new Date();
  return await transact(db, async (tx) => {
    await lockName(tx, "bootstrap:operator-key");
    await ensureAccount(tx, operatorAccountId, "Assay operations", now.toISOString());
    if (await countKeys(tx, operatorAccountId) > 0) return { created: false };
    const { secret } = await createApiKey(tx, operatorAccountId, ["keys:admin", "runs:read", "streams:read"], now);
    return { created: true, secret };
  });
}
