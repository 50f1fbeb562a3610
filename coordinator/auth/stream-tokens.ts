/**
 * Short-lived signed stream tokens, so a browser can open a stream URL (an `<img>` MJPEG source, a
 * WebSocket) that cannot carry an Authorization header: `token=<payload>.<sig>` where payload is
 * base64url JSON `{c: cell or runs/<run>, a: account, k: key, s: scopes, r: run, e: expiry unix s}` and
 * sig = HMAC-SHA256(secret, payload), hex. The secret is generated on first use and kept in
 * `service_secrets` (`stream_token_hmac`), so tokens survive a restart.
 *
 * A token carries what it grants: the scope (`streams:read`, the only one that opens a live view),
 * the key it was minted for (a revoked key's tokens stop working, and so do the views they opened),
 * and for a customer the run it was minted for (it stops working when that run ends or the cell
 * moves on). Tokens are minted only for keys holding streams:read. Whether the account may still
 * watch is checked when the token is used and for as long as the view stays open (stream-access.ts,
 * live-access-watch.ts).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Db } from "../store/database.js";
import { findRunAccountId } from "../store/runs-repo.js";
import { ensureServiceSecret } from "../store/service-secrets-repo.js";

const SECRET_NAME = "stream_token_hmac";
/** A descriptor's URLs last 10 minutes; connect again with a fresh descriptor. */
export const STREAM_TOKEN_TTL_MS = 10 * 60_000;
/** The URL in a run's status events lasts as long as a long run's status goes unrepeated. */
export const STATUS_EVENT_TOKEN_TTL_MS = 60 * 60_000;

async function secretOf(db: Db, now: Date): Promise<Buffer> {
  return await ensureServiceSecret(db, SECRET_NAME, now);
}

/** The scope a stream token grants: the one scope that opens live views. */
export const STREAM_SCOPE = "streams:read";

export interface StreamGrant {
  /** A cell id, or `runs/<run>` (runStreamTarget) for a URL that follows a run. */
  cellId: string;
  accountId: string;
  expiresAt: Date;
  /** The key the token was minted for; absent only in tokens minted for no key (refused by viewers). */
  keyId?: string;
  /** The run whose work the token admits to; absent for operators (every cell). */
  runId?: string;
  /** Scopes granted; a token opens a live view only with streams:read. */
  scope?: string[];
}

export async function signStreamToken(db: Db, grant: StreamGrant, now: Date): Promise<string> {
  const payload = Buffer.from(JSON.stringify({
    c: grant.cellId, a: grant.accountId, e: Math.floor(grant.expiresAt.getTime() / 1000),
    ...(grant.keyId ? { k: grant.keyId } : {}), ...(grant.runId ? { r: grant.runId } : {}), s: grant.scope ?? [STREAM_SCOPE],
  })).toString("base64url");
  return `${payload}.${createHmac("sha256", await secretOf(db, now)).update(payload).digest("hex")}`;
}

export type TokenCheck = { ok: true; grant: StreamGrant } | { ok: false; reason: string };

/** Checks a token for `cellId`: signature first, then cell and expiry. */
export async function checkStreamToken(db: Db, token: string | undefined, cellId: string, now: Date): Promise<TokenCheck> {
  const [payload, sig] = (token ?? "").split(".");
  if (!payload || !sig || !/^[0-9a-f]{64}$/.test(sig)) return { ok: false, reason: "the stream token is missing or malformed; take a fresh URL from GET /v1/streams/{cell}" };
  const expected = createHmac("sha256", await secretOf(db, now)).update(payload).digest();
  if (!timingSafeEqual(expected, Buffer.from(sig, "hex"))) return { ok: false, reason: "the stream token's signature does not match; take a fresh URL from GET /v1/streams/{cell}" };
  let body: { c?: unknown; a?: unknown; e?: unknown; k?: unknown; r?: unknown; s?: unknown };
  try {
    body = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as typeof body;
  } catch {
    return { ok: false, reason: "the stream token is malformed" };
  }
  if (body.c !== cellId || typeof body.a !== "string" || typeof body.e !== "number") return { ok: false, reason: `the stream token is for another cell than ${cellId}` };
  if (body.e * 1000 <= now.getTime()) return { ok: false, reason: `the stream token expired at ${new Date(body.e * 1000).toISOString()}; take a fresh URL from GET /v1/streams/{cell}` };
  const scope = Array.isArray(body.s) ? body.s.filter((x): x is string => typeof x === "string") : [];
  if (!scope.includes(STREAM_SCOPE)) return { ok: false, reason: `the stream token does not grant ${STREAM_SCOPE}; take a fresh URL from GET /v1/streams/{cell} with a key that holds ${STREAM_SCOPE}` };
  return {
    ok: true,
    grant: {
      cellId, accountId: body.a, expiresAt: new Date(body.e * 1000), scope,
      ...(typeof body.k === "string" ? { keyId: body.k } : {}), ...(typeof body.r === "string" ? { runId: body.r } : {}),
    },
  };
}

/** `${streamsUrl}/cells/<cell>?token=...`: the WebRTC signalling URL of a cell for an account. */
export async function signallingUrl(db: Db, streamsUrl: string, grant: StreamGrant, now: Date): Promise<string> {
  return `${streamsUrl}/cells/${encodeURIComponent(grant.cellId)}?token=${await signStreamToken(db, grant, now)}`;
}

/**
 * The signalling URL a run's status event carries: the run's account may watch the cell while it runs
 * the run. `keyId`: the subscriber's key (which must hold streams:read; events.ts gives a key without
 * it no URL); without one the token admits nobody (viewers need a key in the token).
 */
export async function statusEventStreamUrl(db: Db, streamsUrl: string, runId: string, cellId: string, now: Date, keyId?: string): Promise<string | null> {
  const accountId = await findRunAccountId(db, runId);
  if (accountId === undefined) return null;
  return signallingUrl(db, streamsUrl, { cellId, accountId, runId, ...(keyId ? { keyId } : {}), expiresAt: new Date(now.getTime() + STATUS_EVENT_TOKEN_TTL_MS) }, now);
}

/** Token target of a run's stream: the pilot's `stream_url` follows the run from cell to cell. */
export function runStreamTarget(runId: string): string {
  return `runs/${runId}`;
}

/** `${streamsUrl}/runs/<run>?token=...`: signalling for whichever cell runs the run at connect time. */
export async function runStreamUrl(db: Db, streamsUrl: string, runId: string, accountId: string, keyId: string, now: Date): Promise<string> {
  const token = await signStreamToken(db, { cellId: runStreamTarget(runId), accountId, keyId, runId, expiresAt: new Date(now.getTime() + STATUS_EVENT_TOKEN_TTL_MS) }, now);
  return `${streamsUrl}/runs/${encodeURIComponent(runId)}?token=${token}`;
}
