/**
 * Bearer authentication and scope authorization for /v1 and /artifacts: one middleware pair.
 * `authenticate` resolves the key (401 invalid_api_key when missing, malformed, unknown or revoked),
 * through the coordinator's ApiKeyCache (api-key-cache.ts) or straight from the store;
 * `authorize` looks the route up in ROUTE_SCOPES (404 when absent, 403 when the key lacks scope).
 */
import type { IncomingMessage } from "node:http";
import type { NextFunction, Request, Response } from "express";
import { AssayError } from "../errors/assay-error.js";
import type { Db } from "../store/database.js";
import { findKeyBySecretSha256, type KeyRow } from "../store/keys-repo.js";
import { ApiKeyCache } from "./api-key-cache.js";
import { hashSecret, isWellFormedSecret } from "./api-keys.js";
import { findRouteScope } from "./route-scopes.js";
import type { Scope } from "./scopes.js";

export interface AuthContext {
  keyId: string;
  accountId: string;
  scope: readonly Scope[];
}

/** The authenticated caller of a request that passed `authenticate`. */
export function authOf(res: Response): AuthContext {
  const auth = res.locals.auth as AuthContext | undefined;
  if (!auth) throw new Error("authOf called on a route that is not behind authenticate()");
  return auth;
}

/** The sha256 of the bearer secret in `header`; throws invalid_api_key saying what was wrong with it. */
function bearerSecretSha256(header: string | undefined): string {
  if (!header) throw new AssayError("invalid_api_key", "missing Authorization header; send \"Authorization: Bearer asy_live_...\"");
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AssayError("invalid_api_key", "Authorization header must be \"Bearer <API key>\"");
  const secret = match[1];
  if (!isWellFormedSecret(secret)) throw new AssayError("invalid_api_key", "malformed API key; live keys start with asy_live_");
  return hashSecret(secret);
}

/** The caller of a found key row; throws invalid_api_key when there is none or it was revoked. */
function authContextOf(row: KeyRow | undefined): AuthContext {
  if (!row) throw new AssayError("invalid_api_key", "unknown API key");
  if (row.revoked) throw new AssayError("invalid_api_key", `API key ${row.id} was revoked at ${row.revoked}`);
  return { keyId: row.id, accountId: row.account_id, scope: JSON.parse(row.scope) as Scope[] };
}

/**
 * Resolves a bearer secret to its key, from `keys` (the cache) or the store; throws invalid_api_key
 * with a message saying what was wrong.
 */
export async function resolveBearer(keys: Db | ApiKeyCache, header: string | undefined, guard?: RejectedKeyGuard): Promise<AuthContext> {
  const secretSha256 = bearerSecretSha256(header);
  const held = keys instanceof ApiKeyCache ? keys.cached(secretSha256) : undefined;
  if (held) return authContextOf(held);
  guard?.limit.admit(guard.req);
  const row = keys instanceof ApiKeyCache ? await keys.find(secretSha256) : await findKeyBySecretSha256(keys, secretSha256);
  if (guard && (!row || row.revoked)) guard.limit.rejected(guard.req);
  return authContextOf(row);
}

/** Bad API keys per client address (api/rate-limit.ts `rejectedKeyLimit`): asked before a store read, told of each bad key. */
export interface RejectedKeyLimit {
  /** Throws 429 rate_limited when the request's address has no rejected lookups left. */
  admit(req: IncomingMessage): void;
  /** Counts a well-formed key that turned out unknown or revoked against the request's address. */
  rejected(req: IncomingMessage): void;
}

/** The limit a bearer read outside the /v1 middleware (streams, /metrics) is counted against, with its request. */
export interface RejectedKeyGuard {
  limit: RejectedKeyLimit;
  req: IncomingMessage;
}

/**
 * The middleware. With `rejected`, a key the coordinator has not verified before is read from the store only while
 * the client's address has rejected lookups left (429 otherwise), and every unknown or revoked key is counted.
 */
export function authenticate(keys: Db | ApiKeyCache, rejected?: RejectedKeyLimit) {
  // The caller of each key row the cache holds, parsed once: a held row is the same object on every hit.
  const heldContexts = new WeakMap<KeyRow, AuthContext>();
  return (req: Request, res: Response, next: NextFunction): void | Promise<void> => {
    const secretSha256 = bearerSecretSha256(req.headers.authorization); // what req.get("authorization") reads
    // A key the cache holds is answered in this turn of the loop; any other is read from the store.
    const held = keys instanceof ApiKeyCache ? keys.cached(secretSha256) : undefined;
    if (held) {
      let auth = heldContexts.get(held);
      if (!auth) heldContexts.set(held, (auth = authContextOf(held)));
      res.locals.auth = auth;
      return next();
    }
    rejected?.admit(req);
    const found = keys instanceof ApiKeyCache ? keys.find(secretSha256) : findKeyBySecretSha256(keys, secretSha256);
    return found.then((row) => {
      if (!row || row.revoked) rejected?.rejected(req);
      res.locals.auth = authContextOf(row);
      next();
    });
  };
}

export function authorize() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const route = findRouteScope(req.method, req.baseUrl + req.path);
    if (!route) throw new AssayError("not_found", `no such endpoint: ${req.method} ${req.baseUrl + req.path}`);
    const auth = authOf(res);
    if (!route.scopes.some((scope) => auth.scope.includes(scope))) {
      throw new AssayError("insufficient_scope", `${route.method} ${route.path} needs scope ${route.scopes.join(" or ")}; this key has ${auth.scope.join(", ") || "no scopes"}`);
    }
    next();
  };
}
