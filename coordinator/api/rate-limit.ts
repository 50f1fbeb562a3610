/**
 * Rate limits: token buckets in memory, one per API key and class, and one per account and class
 * that all the account's keys share (ACCOUNT_MULTIPLE times a key's: one key's worth, so an account
 * gets the same allowance however many keys it mints, and one key alone can use all of it). POST /v1/runs draws from the `submit` buckets (default 5 requests/s
 * sustained, burst 10 per key); every other authenticated request (/v1 and /artifacts) from the
 * `general` buckets (default 20/s, burst 40 per key). Requests without a key (published
 * leaderboards) draw from buckets per client address (api/client-address.ts: the socket's peer, or
 * X-Forwarded-For from a trusted proxy): `anonymous` (default: as `general`), and the PDF renders
 * also from the tighter `anonymousRender` (default 1/s, burst 5). An empty bucket answers 429
 * rate_limited with `Retry-After` in whole seconds (at least 1) until a token is back.
 */
import type { IncomingMessage } from "node:http";
import type { NextFunction, Request, Response } from "express";
import { authOf, type AuthContext, type RejectedKeyLimit } from "../auth/authenticate.js";
import { AssayError } from "../errors/assay-error.js";
import { clientAddress, type TrustedProxies } from "./client-address.js";

export interface BucketSpec {
  /** Tokens added per second (sustained requests per second). */
  perS: number;
  /** Bucket size (requests allowed at once after a quiet period). */
  burst: number;
}

export interface RateLimits {
  general: BucketSpec;
  submit: BucketSpec;
  /** Requests without a key, per client address. Default: the same as `general`. */
  anonymous?: BucketSpec;
  /** Rendered answers without a key (a leaderboard entry's report as PDF), per client address, on top of `anonymous`. Default 1/s, burst 5. */
  anonymousRender?: BucketSpec;
  /**
   * Well-formed API keys that turned out unknown or revoked, per client address. Once the bucket is empty, a key
   * the coordinator has not already verified is refused before the store is read. Default 1/s, burst 20.
   */
  rejectedKeys?: BucketSpec;
}

export const DEFAULT_RATE_LIMITS: RateLimits = { general: { perS: 20, burst: 40 }, submit: { perS: 5, burst: 10 } };

export const DEFAULT_ANONYMOUS_RENDER: BucketSpec = { perS: 1, burst: 5 };

export const DEFAULT_REJECTED_KEYS: BucketSpec = { perS: 1, burst: 20 };

const LIMIT_NAMES = ["general", "submit", "anonymous", "anonymousRender", "rejectedKeys"] as const;
const OPTIONAL_LIMITS: ReadonlySet<string> = new Set(["anonymous", "anonymousRender", "rejectedKeys"]);

/**
 * An account's allowance, in keys' worth: its keys together get this many times one key's rate and burst. One:
 * several keys of one account share one bucket (the audit of issue 24 found six keys getting three keys' worth).
 */
export const ACCOUNT_MULTIPLE = 1;

export class TokenBucket {
  private tokens: number;
  private updatedMs: number;

  constructor(private readonly spec: BucketSpec, nowMs: number) {
    this.tokens = spec.burst;
    this.updatedMs = nowMs;
  }

  /** Whether the bucket would be full at `nowMs` (then dropping it loses nothing). */
  isFull(nowMs: number): boolean {
    return this.tokens + ((nowMs - this.updatedMs) / 1000) * this.spec.perS >= this.spec.burst;
  }

  /** The seconds until a token is available at `nowMs` (0: one is), taking none. */
  waitS(nowMs: number): number {
    const tokens = Math.min(this.spec.burst, this.tokens + ((nowMs - this.updatedMs) / 1000) * this.spec.perS);
    return tokens >= 1 ? 0 : (1 - tokens) / this.spec.perS;
  }

  /** Takes a token; returns 0 when granted, otherwise the seconds until one is available. */
  take(nowMs: number): number {
    this.tokens = Math.min(this.spec.burst, this.tokens + ((nowMs - this.updatedMs) / 1000) * this.spec.perS);
    this.updatedMs = nowMs;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return (1 - this.tokens) / this.spec.perS;
  }
}

export function validateRateLimits(limits: RateLimits): RateLimits {
  for (const name of LIMIT_NAMES) {
    const spec = limits[name];
    if (spec === undefined && OPTIONAL_LIMITS.has(name)) continue;
    if (!spec || !(spec.perS > 0) || !(spec.burst >= 1)) throw new Error(`rate limit ${name} needs perS > 0 and burst >= 1; got ${JSON.stringify(spec)}`);
  }
  for (const name of Object.keys(limits)) {
    if (!(LIMIT_NAMES as readonly string[]).includes(name)) throw new Error(`unknown rate limit "${name}"; known: ${LIMIT_NAMES.join(", ")}`);
  }
  return limits;
}

/**
 * Buckets by name, created full on first use. Buckets that have refilled to full are dropped once
 * the table grows past `pruneAbove`, so a stream of new names (addresses, keys) cannot grow it forever.
 * A prune that frees little (every bucket in use) moves the next one to twice the size left, so the
 * scans cost O(1) per insert amortised however many buckets are busy.
 */
export class BucketTable {
  private readonly buckets = new Map<string, TokenBucket>();
  private pruneAt: number;

  constructor(private readonly pruneAbove = 10_000) {
    this.pruneAt = pruneAbove;
  }

  take(id: string, spec: BucketSpec, nowMs: number): number {
    let bucket = this.buckets.get(id);
    if (!bucket) {
      if (this.buckets.size >= this.pruneAt) this.prune(nowMs);
      this.buckets.set(id, (bucket = new TokenBucket(spec, nowMs)));
    }
    return bucket.take(nowMs);
  }

  /** The seconds until `id`'s bucket has a token (0 for a bucket not made yet, which starts full). */
  waitS(id: string, nowMs: number): number {
    return this.buckets.get(id)?.waitS(nowMs) ?? 0;
  }

  get size(): number {
    return this.buckets.size;
  }

  private prune(nowMs: number): void {
    for (const [id, bucket] of this.buckets) {
      if (bucket.isFull(nowMs)) this.buckets.delete(id);
    }
    this.pruneAt = Math.max(this.pruneAbove, 2 * this.buckets.size);
  }
}

function refuse(waitS: number, message: (retryAfterS: number) => string): never {
  const retryAfterS = Math.max(1, Math.ceil(waitS));
  throw new AssayError("rate_limited", message(retryAfterS), { retryAfterS });
}

/**
 * Middlewares for requests without a key, per client address (`addressOf`): `reads` for every
 * request, `renders` on top for the expensive ones (PDF). Both pass everything when limits are "off".
 */
export function anonymousRateLimit(limits: RateLimits | "off", addressOf: (req: Request) => string, nowMs: () => number = Date.now) {
  if (limits === "off") return { reads: noLimit, renders: noLimit };
  const reads = limits.anonymous ?? limits.general;
  const renders = limits.anonymousRender ?? DEFAULT_ANONYMOUS_RENDER;
  const table = new BucketTable();
  const limiter = (kind: string, spec: BucketSpec, what: string) => (req: Request, _res: Response, next: NextFunction): void => {
    const waitS = table.take(`${kind}:${addressOf(req)}`, spec, nowMs());
    if (waitS > 0) refuse(waitS, (s) => `rate limit of ${spec.perS} ${what}/s (burst ${spec.burst}) without a key from this address exceeded; retry after ${s} s`);
    next();
  };
  return { reads: limiter("reads", reads, "requests"), renders: limiter("renders", renders, "PDF reports") };
}

/** The rejected-key limit of `limits` (`rejectedKeys`, default 1/s, burst 20), or undefined when limits are "off". */
export function rejectedKeyLimit(limits: RateLimits | "off", addressOf: (req: IncomingMessage) => string, nowMs: () => number = Date.now): RejectedKeyLimit | undefined {
  if (limits === "off") return undefined;
  const spec = limits.rejectedKeys ?? DEFAULT_REJECTED_KEYS;
  const table = new BucketTable();
  return {
    admit(req) {
      const waitS = table.waitS(addressOf(req), nowMs());
      if (waitS > 0) refuse(waitS, (s) => `too many requests with an unknown or revoked API key from this address (${spec.perS}/s, burst ${spec.burst}); check the key you send and retry after ${s} s`);
    },
    rejected(req) {
      table.take(addressOf(req), spec, nowMs());
    },
  };
}

/** The rejected-key limit keyed by the client address (api/client-address.ts); null when limits are "off". */
export function rejectedKeysByAddress(limits: RateLimits | "off", trustedProxies: TrustedProxies): RejectedKeyLimit | null {
  return rejectedKeyLimit(limits, (req) => clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], trustedProxies)) ?? null;
}

/** Pass-through for an app built without rate limits. */
export function noLimit(_req: Request, _res: Response, next: NextFunction): void {
  next();
}

/** Middleware; mount after authenticate(). `nowMs` is injectable for tests. */
export function rateLimit(limits: RateLimits = DEFAULT_RATE_LIMITS, nowMs: () => number = Date.now) {
  validateRateLimits(limits);
  // Keys and accounts that come and go (revoked, deleted) leave full buckets behind; the table drops them.
  const table = new BucketTable();
  // The account's buckets of each class, made once (the limits never change).
  const shared = {
    general: { perS: limits.general.perS * ACCOUNT_MULTIPLE, burst: limits.general.burst * ACCOUNT_MULTIPLE },
    submit: { perS: limits.submit.perS * ACCOUNT_MULTIPLE, burst: limits.submit.burst * ACCOUNT_MULTIPLE },
  };
  // The bucket names of a caller, by class, made once per AuthContext (authenticate hands out the same object for
  // every request of a key it holds) instead of two template strings per request.
  const bucketIds = new WeakMap<AuthContext, { general: [string, string]; submit?: [string, string] }>();
  const idsOf = (auth: AuthContext, kind: "general" | "submit"): [string, string] => {
    let ids = bucketIds.get(auth);
    if (!ids) bucketIds.set(auth, (ids = { general: [`key:${auth.keyId}:general`, `account:${auth.accountId}:general`] }));
    return kind === "general" ? ids.general : (ids.submit ??= [`key:${auth.keyId}:submit`, `account:${auth.accountId}:submit`]);
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const auth = authOf(res);
    const kind = req.method === "POST" && (req.baseUrl + req.path).replace(/\/+$/, "") === "/v1/runs" ? "submit" : "general";
    const what = kind === "submit" ? "POST /v1/runs" : "requests";
    const buckets = idsOf(auth, kind);
    const now = nowMs();
    const spec = limits[kind];
    const keyWaitS = table.take(buckets[0], spec, now);
    if (keyWaitS > 0) {
      const retryAfterS = Math.max(1, Math.ceil(keyWaitS));
      throw new AssayError("rate_limited", `rate limit of ${spec.perS} ${what}/s (burst ${spec.burst}) for this key exceeded; retry after ${retryAfterS} s`, { retryAfterS });
    }
    const accountSpec = shared[kind];
    const accountWaitS = table.take(buckets[1], accountSpec, now);
    if (accountWaitS > 0) {
      const retryAfterS = Math.max(1, Math.ceil(accountWaitS));
      throw new AssayError("rate_limited", `rate limit of ${accountSpec.perS} ${what}/s (burst ${accountSpec.burst}) for this account, shared by all its keys, exceeded; retry after ${retryAfterS} s`, { retryAfterS });
    }
    next();
  };
}
