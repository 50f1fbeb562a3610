/**
 * Signed shipping-label URLs: `${baseUrl}/labels/<kit_id>.pdf?expires=<unix s>&sig=<hex>` where
 * sig = HMAC-SHA256(secret, "<kit_id>.<expires>"). The secret is generated on first use and kept
 * in `service_secrets` (name `label_url_hmac`), so links survive a restart. Links last 24 h.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Db } from "../store/database.js";
import { ensureServiceSecret } from "../store/service-secrets-repo.js";

export const LABEL_URL_TTL_MS = 24 * 60 * 60 * 1000;
const SECRET_NAME = "label_url_hmac";

/** The HMAC key, created (32 random bytes) on first call. */
export async function labelUrlSecret(db: Db, now: Date = new Date()): Promise<Buffer> {
  return await ensureServiceSecret(db, SECRET_NAME, now);
}

function signature(secret: Buffer, kitId: string, expiresS: number): string {
  return createHmac("sha256", secret).update(`${kitId}.${expiresS}`).digest("hex");
}

/** A label link valid for 24 h from `now`: `{url, expires}` as the Shipping label resource shows it. */
export async function signLabelUrl(db: Db, baseUrl: string, kitId: string, now: Date): Promise<{ url: string; expires: string }> {
  const expiresS = Math.floor((now.getTime() + LABEL_URL_TTL_MS) / 1000);
  const sig = signature(await labelUrlSecret(db, now), kitId, expiresS);
  return {
    url: `${baseUrl}/labels/${encodeURIComponent(kitId)}.pdf?expires=${expiresS}&sig=${sig}`,
    expires: new Date(expiresS * 1000).toISOString(),
  };
}

export type LabelUrlCheck = "ok" | "bad_signature" | "expired";

/** Checks a label link's query; the signature first, so an expiry is only reported for a genuine link. */
export async function checkLabelUrl(db: Db, kitId: string, expires: string | undefined, sig: string | undefined, now: Date): Promise<LabelUrlCheck> {
  if (!expires || !/^\d{1,12}$/.test(expires) || !sig || !/^[0-9a-f]{64}$/.test(sig)) return "bad_signature";
  const expected = Buffer.from(signature(await labelUrlSecret(db, now), kitId, Number(expires)), "hex");
  if (!timingSafeEqual(expected, Buffer.from(sig, "hex"))) return "bad_signature";
  return Number(expires) * 1000 <= now.getTime() ? "expired" : "ok";
}
