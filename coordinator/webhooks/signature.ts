/**
 * The `Assay-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256>` where the HMAC key is the
 * endpoint secret (the whole `whsec_...` string, UTF-8) and the message is `<t>.<raw body>`.
 * docs/api.md has the receiver's recipe; `verifySignature` is the same check.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** Receivers reject signatures whose timestamp is older than this (replay protection). */
export const SIGNATURE_TOLERANCE_S = 300;

export function signatureHex(secret: string, timestampS: number, rawBody: string): string {
  return createHmac("sha256", secret).update(`${timestampS}.${rawBody}`, "utf8").digest("hex");
}

/** The header value for `rawBody` signed at `timestampS`. */
export function signatureHeader(secret: string, timestampS: number, rawBody: string): string {
  return `t=${timestampS},v1=${signatureHex(secret, timestampS, rawBody)}`;
}

/**
 * True when `header` carries a v1 signature of `rawBody` by `secret` made within `toleranceS` of
 * `nowS`. Several v1 entries are allowed (any one may match).
 */
export function verifySignature(secret: string, header: string, rawBody: string, nowS: number, toleranceS = SIGNATURE_TOLERANCE_S): boolean {
  const parts = header.split(",").map((p) => p.trim().split("=", 2) as [string, string | undefined]);
  const t = Number(parts.find(([k]) => k === "t")?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowS - t) > toleranceS) return false;
  const expected = Buffer.from(signatureHex(secret, t, rawBody), "hex");
  return parts.some(([k, v]) => {
    if (k !== "v1" || !v || !/^[0-9a-f]+$/i.test(v)) return false;
    const given = Buffer.from(v, "hex");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
