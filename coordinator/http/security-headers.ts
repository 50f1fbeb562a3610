/**
 * Headers every answer carries: no MIME sniffing, no framing (clickjacking), no referrer leaking
 * signed URLs, and a Content-Security-Policy that lets an API response run nothing. Pages that
 * need more (the docs' inline style, the console's own scripts) set their own policy on top.
 * `/v1` answers are never cached anywhere: they carry secrets (new keys, cell tokens, signed
 * stream URLs) and account data.
 */
import type { NextFunction, Request, Response } from "express";

export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** The one list: express answers set it here, raw answers written on the socket (http/raw-answer.ts) copy it. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Content-Security-Policy": API_CSP,
};

const SECURITY_HEADER_ENTRIES = Object.entries(SECURITY_HEADERS);

// setHeader with the names and values as they are: what `res.set` would send for these plain
// strings, without its per-call conversions (every request passes here).
export function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  for (const [name, value] of SECURITY_HEADER_ENTRIES) res.setHeader(name, value);
  next();
}

export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader("Cache-Control", "no-store");
  next();
}
