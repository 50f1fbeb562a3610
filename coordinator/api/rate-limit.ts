/**
 * Rate limits: token buckets in memory, one per API key and class, and one per account and class
 * that all the account's keys share (ACCOUNT_MULTIPLE times a key's, so minting keys does not
 * multiply the allowance). POST /v1/runs draws from the `submit` buckets (default 5 requests/s
 * sustained, burst 10 per key); every other authenticated request (/v1 and /artifacts) from the
 * `general` buckets (default 20/s, burst 40 per key). An empty bucket answers 429 rate_limited with
 * `Retry-After` in whole seconds (at least 1) until a token is back.
 */
import type { NextFunction, Request, Response } from "express";
import { authOf } from "../auth/authenticate.js";
import { AssayError } from "../errors/assay-error.js";

export interface BucketSpec {
  /** Tokens added per second (sustained requests per second). */
  perS: number;
  /** Bucket size (requests allowed at once after a quiet period). */
  burst: number;
}

export interface RateLimits {
  general: BucketSpec;
  submit: BucketSpec;
}

export const DEFAULT_RATE_LIMITS: RateLimits = { general: { perS: 20, burst: 40 }, submit: { perS: 5, burst: 10 } };

/** An account's allowance, in keys' worth: its keys together get this many times one key's rate and burst. */
export const ACCOUNT_MULTIPLE = 3;

export class TokenBucket {
  private tokens: number;
  private updatedMs: number;

  constructor(private readonly spec: BucketSpec, nowMs: number) {
    this.tokens = spec.burst;
    this.updatedMs = nowMs;
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
  for (const name of ["general", "submit"] as const) {
    const spec = limits[name];
    if (!spec || !(spec.perS > 0) || !(spec.burst >= 1)) throw new Error(`rate limit ${name} needs perS > 0 and burst >= 1; got ${JSON.stringify(spec)}`);
  }
  return limits;
}

/** Pass-through for an app built without rate limits. */
export function noLimit(_req: Request, _res: Response, next: NextFunction): void {
  next();
}

/** Middleware; mount after authenticate(). `nowMs` is injectable for tests. */
export function rateLimit(limits: RateLimits = DEFAULT_RATE_LIMITS, nowMs: () => number = Date.now) {
  validateRateLimits(limits);
  const buckets = new Map<string, TokenBucket>();
  const take = (id: string, spec: BucketSpec, now: number): number => {
    let bucket = buckets.get(id);
    if (!bucket) buckets.set(id, (bucket = new TokenBucket(spec, now)));
    return bucket.take(now);
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const { keyId, accountId } = authOf(res);
    const path = (req.baseUrl + req.path).replace(/\/+$/, "");
    const kind = req.method === "POST" && path === "/v1/runs" ? "submit" : "general";
    const what = kind === "submit" ? "POST /v1/runs" : "requests";
    const now = nowMs();
    const spec = limits[kind];
    const keyWaitS = take(`key:${keyId}:${kind}`, spec, now);
    if (keyWaitS > 0) {
      const retryAfterS = Math.max(1, Math.ceil(keyWaitS));
      throw new AssayError("rate_limited", `rate limit of ${spec.perS} ${what}/s (burst ${spec.burst}) for this key exceeded; retry after ${retryAfterS} s`, { retryAfterS });
    }
    const shared = { perS: spec.perS * ACCOUNT_MULTIPLE, burst: spec.burst * ACCOUNT_MULTIPLE };
    const accountWaitS = take(`account:${accountId}:${kind}`, shared, now);
    if (accountWaitS > 0) {
      const retryAfterS = Math.max(1, Math.ceil(accountWaitS));
      throw new AssayError("rate_limited", `rate limit of ${shared.perS} ${what}/s (burst ${shared.burst}) for this account, shared by all its keys, exceeded; retry after ${retryAfterS} s`, { retryAfterS });
    }
    next();
  };
}
