/** Secrets the service generates for itself (HMAC keys of signed URLs): rows of `service_secrets`. */
import { randomBytes } from "node:crypto";
import type { Db } from "./database.js";
import { lockName } from "./named-lock.js";

/**
 * The secret called `name`: 32 random bytes generated and stored on first use, so what it signed
 * survives a restart. Coordinators sharing a database agree on it (the first one's insert wins
 * under a named lock).
 */
export async function ensureServiceSecret(db: Db, name: string, now: Date): Promise<Buffer> {
  return await db.transaction(async (db) => {
    await lockName(db, `service-secret:${name}`);
    const row = await db.prepare("SELECT value FROM service_secrets WHERE name = ?").get(name) as { value: string } | undefined;
    if (row) return Buffer.from(row.value, "base64url");
    const secret = randomBytes(32);
    await db.prepare("INSERT INTO service_secrets (name, value, created) VALUES (?, ?, ?)").run(name, secret.toString("base64url"), now.toISOString());
    return secret;
  });
}
