/** Connection options: defaults, validation, and what Node is given. */
import assert from "node:assert/strict";
import { compileConnectionOptions, CONNECTION_DEFAULTS, httpServerOptions } from "../../coordinator/api/connection-guard.js";

describe("connection options", () => {
  it("defaults to 10 s for headers, 5 min for a whole request, 5 s idle keep-alive and 256 connections per address", () => {
    assert.deepEqual(compileConnectionOptions(), { headersTimeoutMs: 10_000, requestTimeoutMs: 300_000, keepAliveTimeoutMs: 5_000, maxConnectionsPerAddress: 256 });
    assert.deepEqual(compileConnectionOptions({}), CONNECTION_DEFAULTS);
  });

  it("checks the timeouts often enough that a slow client is cut close to its deadline", () => {
    const options = httpServerOptions(compileConnectionOptions({ headersTimeoutMs: 400, requestTimeoutMs: 800 }));
    assert.equal(options.headersTimeout, 400);
    assert.equal(options.requestTimeout, 800);
    assert.equal(options.connectionsCheckingInterval, 100);
    assert.equal(httpServerOptions(CONNECTION_DEFAULTS).connectionsCheckingInterval, 1000);
  });

  it("rejects unknown keys, non-positive timeouts and a headers timeout above the request timeout", () => {
    assert.throws(() => compileConnectionOptions({ headerTimeoutMs: 5 } as never), /unknown connections option "headerTimeoutMs"/);
    assert.throws(() => compileConnectionOptions({ keepAliveTimeoutMs: 0 }), /keepAliveTimeoutMs must be a positive/);
    assert.throws(() => compileConnectionOptions({ headersTimeoutMs: 20_000, requestTimeoutMs: 10_000 }), /must not exceed/);
    assert.throws(() => compileConnectionOptions({ maxConnectionsPerAddress: 1.5 }), /whole number/);
  });
});
