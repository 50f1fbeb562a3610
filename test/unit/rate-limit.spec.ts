/** Token buckets per key and per account: sustained rate, burst, Retry-After, and a separate POST /v1/runs bucket. */
import assert from "node:assert/strict";
import type { NextFunction, Request, Response } from "express";
import { ACCOUNT_MULTIPLE, anonymousRateLimit, BucketTable, rateLimit, rejectedKeyLimit, TokenBucket } from "../../coordinator/api/rate-limit.js";
import { AssayError } from "../../coordinator/errors/assay-error.js";

function call(mw: ReturnType<typeof rateLimit>, keyId: string, method: string, path: string, accountId = `acct_of_${keyId}`): AssayError | undefined {
  const req = { method, baseUrl: "/v1", path } as unknown as Request;
  const res = { locals: { auth: { keyId, accountId, scope: [] } } } as unknown as Response;
  let passed = false;
  try {
    mw(req, res, (() => { passed = true; }) as NextFunction);
  } catch (error) {
    return error as AssayError;
  }
  assert.ok(passed);
  return undefined;
}

const DEFAULT_LIMITS_FOR_REJECTED = { general: { perS: 20, burst: 40 }, submit: { perS: 5, burst: 10 } };

describe("rate limits", () => {
  it("a bucket allows the burst at once, then the sustained rate", () => {
    const bucket = new TokenBucket({ perS: 2, burst: 3 }, 0);
    assert.deepEqual([bucket.take(0), bucket.take(0), bucket.take(0)], [0, 0, 0]);
    assert.equal(bucket.take(0), 0.5);
    assert.equal(bucket.take(500), 0);
    assert.equal(bucket.take(500), 0.5);
    assert.equal(bucket.take(10_000), 0, "refilled");
  });

  it("answers 429 rate_limited with a whole-second Retry-After of at least 1, per key and per class", () => {
    let now = 0;
    const mw = rateLimit({ general: { perS: 20, burst: 40 }, submit: { perS: 5, burst: 10 } }, () => now);
    for (let i = 0; i < 10; i++) assert.equal(call(mw, "key_a", "POST", "/runs"), undefined);
    const error = call(mw, "key_a", "POST", "/runs");
    assert.ok(error instanceof AssayError);
    assert.equal(error.code, "rate_limited");
    assert.equal(error.status, 429);
    assert.equal(error.retryAfterS, 1);
    // Reads and other keys have their own buckets.
    assert.equal(call(mw, "key_a", "GET", "/runs"), undefined);
    assert.equal(call(mw, "key_b", "POST", "/runs"), undefined);
    now = 200; // one token back at 5/s
    assert.equal(call(mw, "key_a", "POST", "/runs"), undefined);

    const slow = rateLimit({ general: { perS: 0.25, burst: 1 }, submit: { perS: 1, burst: 1 } }, () => 0);
    assert.equal(call(slow, "k", "GET", "/robots"), undefined);
    assert.equal(call(slow, "k", "GET", "/robots")?.retryAfterS, 4);
  });

  it("shares an account's allowance among its keys: minting keys does not multiply it", () => {
    const mw = rateLimit({ general: { perS: 20, burst: 40 }, submit: { perS: 5, burst: 10 } }, () => 0);
    // Twelve keys of one account, each within its own burst of 10 submissions: together they get ACCOUNT_MULTIPLE bursts.
    let granted = 0;
    let refused: AssayError | undefined;
    for (let key = 0; key < 12; key++) {
      for (let i = 0; i < 10; i++) {
        const error = call(mw, `key_${key}`, "POST", "/runs", "acct_many");
        if (error) refused ??= error;
        else granted++;
      }
    }
    assert.equal(granted, 10 * ACCOUNT_MULTIPLE);
    assert.equal(refused?.code, "rate_limited");
    assert.match(refused!.message, /for this account, shared by all its keys/);
    // Another account is untouched.
    assert.equal(call(mw, "key_other", "POST", "/runs", "acct_other"), undefined);
  });

  it("rejects nonsense limits at start-up", () => {
    assert.throws(() => rateLimit({ general: { perS: 0, burst: 1 }, submit: { perS: 1, burst: 1 } }), /perS > 0/);
    assert.throws(() => rateLimit({ general: { perS: 1, burst: 1 }, submit: { perS: 1, burst: 1 }, anonymousRender: { perS: 1, burst: 0 } }), /anonymousRender needs/);
    assert.throws(() => rateLimit({ general: { perS: 1, burst: 1 }, submit: { perS: 1, burst: 1 }, anonymus: { perS: 1, burst: 1 } } as never), /unknown rate limit "anonymus"/);
  });

  it("limits requests without a key per client address, and PDF renders with a tighter bucket on top", () => {
    const now = 0;
    const limits = anonymousRateLimit({ general: { perS: 20, burst: 40 }, submit: { perS: 5, burst: 10 }, anonymousRender: { perS: 1, burst: 5 } }, (req) => (req as unknown as { address: string }).address, () => now);
    const pass = (mw: typeof limits.reads, address: string): AssayError | undefined => {
      let passed = false;
      try {
        mw({ address } as unknown as Request, {} as Response, (() => { passed = true; }) as NextFunction);
      } catch (error) {
        return error as AssayError;
      }
      assert.ok(passed);
      return undefined;
    };
    // Reads: the general limit of one key (burst 40), per address.
    for (let i = 0; i < 40; i++) assert.equal(pass(limits.reads, "198.51.100.1"), undefined);
    const refused = pass(limits.reads, "198.51.100.1");
    assert.equal(refused?.code, "rate_limited");
    assert.match(refused!.message, /without a key from this address/);
    assert.equal(pass(limits.reads, "198.51.100.2"), undefined, "another client has its own bucket");
    // Renders: burst 5, then one a second.
    for (let i = 0; i < 5; i++) assert.equal(pass(limits.renders, "198.51.100.3"), undefined);
    assert.equal(pass(limits.renders, "198.51.100.3")?.retryAfterS, 1);
    assert.match(pass(limits.renders, "198.51.100.3")!.message, /1 PDF reports\/s \(burst 5\)/);
  });

  it("counts unknown or revoked keys per address and refuses that address's store reads once its bucket is empty", () => {
    let now = 0;
    const limit = rejectedKeyLimit({ ...DEFAULT_LIMITS_FOR_REJECTED, rejectedKeys: { perS: 0.5, burst: 2 } }, (req) => (req as unknown as { address: string }).address, () => now)!;
    const req = (address: string) => ({ address }) as unknown as Request;
    const refusal = (address: string): AssayError | undefined => {
      try {
        limit.admit(req(address));
        return undefined;
      } catch (error) {
        return error as AssayError;
      }
    };
    // Admitting takes nothing: only rejected keys count.
    for (let i = 0; i < 5; i++) assert.equal(refusal("198.51.100.1"), undefined);
    limit.rejected(req("198.51.100.1"));
    limit.rejected(req("198.51.100.1"));
    const refused = refusal("198.51.100.1");
    assert.equal(refused?.code, "rate_limited");
    assert.equal(refused?.retryAfterS, 2, "one token back at 0.5/s");
    assert.match(refused!.message, /unknown or revoked API key from this address \(0\.5\/s, burst 2\)/);
    assert.equal(refusal("198.51.100.2"), undefined, "another address has its own bucket");
    now = 2000;
    assert.equal(refusal("198.51.100.1"), undefined, "a token is back after 2 s");
    // The default when the option is not given, and none at all when limits are off.
    const byDefault = rejectedKeyLimit(DEFAULT_LIMITS_FOR_REJECTED, () => "198.51.100.3", () => 0)!;
    for (let i = 0; i < 20; i++) byDefault.rejected(req("x"));
    assert.match(String((() => { try { byDefault.admit(req("x")); } catch (error) { return (error as Error).message; } })()), /\(1\/s, burst 20\)/);
    assert.equal(rejectedKeyLimit("off", () => "x"), undefined);
  });

  it("forgets full buckets once the table grows, so many addresses cannot grow it without bound", () => {
    const table = new BucketTable(100);
    for (let i = 0; i < 1000; i++) table.take(`addr:${i}`, { perS: 1, burst: 2 }, i * 10_000);
    assert.ok(table.size <= 100, `${table.size} buckets kept`);
    // A bucket still being drained is kept (pruning never hands a client a fresh burst).
    const busy = new BucketTable(2);
    busy.take("a", { perS: 1, burst: 1 }, 0);
    busy.take("b", { perS: 1, burst: 1 }, 0);
    busy.take("c", { perS: 1, burst: 1 }, 0);
    assert.equal(busy.take("a", { perS: 1, burst: 1 }, 0), 1, "a's empty bucket survived the prune");
  });

  it("does not rescan the table on every new name while all its buckets are in use", () => {
    const table = new BucketTable(100);
    let scans = 0;
    const prune = (table as unknown as { prune(nowMs: number): void }).prune.bind(table);
    (table as unknown as { prune(nowMs: number): void }).prune = (nowMs) => {
      scans++;
      prune(nowMs);
    };
    // 1,000 names at one instant: every bucket is being drained, none can be dropped.
    for (let i = 0; i < 1000; i++) table.take(`key:${i}`, { perS: 1, burst: 1 }, 0);
    assert.equal(table.size, 1000);
    assert.ok(scans <= 5, `${scans} scans for 1,000 inserts`);
  });
});
