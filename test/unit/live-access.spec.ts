/**
 * Live views' lasting access (coordinator/streams/live-access-watch.ts) and the connection caps
 * (connection-caps.ts), on a real in-memory store with a fake fleet view and an injected clock.
 */
import assert from "node:assert/strict";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { AssayError } from "../../coordinator/errors/assay-error.js";
import type { FleetView } from "../../coordinator/cells/fleet-view.js";
import { RunEvents } from "../../coordinator/runs/run-events.js";
import { openSqliteDatabase } from "../../coordinator/store/database.js";
import { DEFAULT_ACCOUNT_ID, ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { revokeKey } from "../../coordinator/store/keys-repo.js";
import { insertRun } from "../../coordinator/store/runs-repo.js";
import { compileConnectionCapsOptions, ConnectionCaps } from "../../coordinator/streams/connection-caps.js";
import { createLiveAccessWatch } from "../../coordinator/streams/live-access-watch.js";
import type { ViewerGrant } from "../../coordinator/streams/stream-access.js";

describe("live access: open views re-checked while they last", () => {
  const fleet: FleetView = { connectedCells: async () => [], assignedEpisodeOf: () => undefined };

  async function setup(now: () => Date, recheckMs = 60_000) {
    const db = openSqliteDatabase(":memory:");
    await ensureAccount(db, DEFAULT_ACCOUNT_ID, "Default", new Date().toISOString());
    type Listener = (cellId: string, change: { runId: string | undefined }) => void;
    const listeners = new Set<Listener>();
    const assignments = { onAssignmentChange: (l: Listener) => (listeners.add(l), () => void listeners.delete(l)) };
    const watch = createLiveAccessWatch({ db, fleet, runEvents: new RunEvents(), assignments, now, recheckMs });
    const key = (await createApiKey(db, DEFAULT_ACCOUNT_ID, ["streams:read"], new Date())).row;
    const grant = (cellId: string, tokenExpiresAt: Date | null = null): ViewerGrant => ({ cellId, accountId: DEFAULT_ACCOUNT_ID, keyId: key.id, runId: null, tokenExpiresAt });
    return { db, watch, key, grant, assign: (cellId: string, runId?: string) => listeners.forEach((l) => l(cellId, { runId })) };
  }

  it("closes a view whose key is revoked on recheck(), once, and leaves the others open", async () => {
    const { db, watch, key, grant } = await setup(() => new Date());
    const closed: string[] = [];
    await watch.bind(grant("cell-a"), (reason) => closed.push(`a: ${reason}`));
    const other = (await createApiKey(db, DEFAULT_ACCOUNT_ID, ["streams:read"], new Date())).row;
    await watch.bind({ ...grant("cell-b"), keyId: other.id }, (reason) => closed.push(`b: ${reason}`));
    await watch.recheck();
    assert.deepEqual(closed, []);
    await revokeKey(db, key.id, new Date().toISOString());
    await watch.recheck();
    await watch.recheck();
    assert.deepEqual(closed, [`a: API key ${key.id} was revoked`]);
    watch.stop();
    await db.close();
  });

  it("re-checks a cell's views after its assignment changes, and a token's expiry on the backstop", async () => {
    let nowMs = Date.parse("2026-11-27T12:00:00Z");
    const { db, watch, grant, assign } = await setup(() => new Date(nowMs), 10);
    const reasons: string[] = [];
    const expired = new Promise<void>((resolve) => void watch.bind(grant("cell-a", new Date(nowMs + 60_000)), (reason) => {
      reasons.push(reason);
      resolve();
    }));
    nowMs += 61_000;
    // The assignment of another cell is no reason to look at this one's views ...
    assign("cell-b");
    await Promise.resolve();
    assert.deepEqual(reasons, []);
    // ... the backstop finds the expired token on its own.
    await expired;
    assert.deepEqual(reasons, ["stream token expired; take a fresh URL"]);
    watch.stop();
    await db.close();
  });

  it("closes a customer's view in the same turn as its cell is given another run's episode, and keeps the rest", async () => {
    const { db, watch, grant, assign } = await setup(() => new Date());
    for (const id of ["run_a", "run_b"]) {
      await insertRun(db, {
        id, accountId: DEFAULT_ACCOUNT_ID, kind: "run", created: new Date().toISOString(), request: { policy: { type: "container", image: "lab/p:1" } },
        resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
        plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 },
        priority: "standard", episodesTotal: 1,
      });
    }
    const closed: string[] = [];
    // Bound views of run_a on cell-a (a customer's), run_a on cell-b, and an operator's on cell-a (no run).
    await watch.bind({ ...grant("cell-a"), runId: "run_a" }, (reason) => closed.push(`customer a: ${reason}`));
    await watch.bind({ ...grant("cell-b"), runId: "run_a" }, (reason) => closed.push(`customer b: ${reason}`));
    await watch.bind(grant("cell-a"), (reason) => closed.push(`operator a: ${reason}`));
    // cell-a gets another episode of run_a, then one of run_b: closed before the listener returns, no await
    // (the episode is sent to the cell right after; its frames must not reach this viewer).
    assign("cell-a", "run_a");
    assert.deepEqual(closed, []);
    assign("cell-a", "run_b");
    assert.deepEqual(closed, ["customer a: the cell moved on to another run"]);
    // Taking an episode back says nothing about a run; the re-check that follows keeps the rest open.
    assign("cell-b");
    await watch.recheck();
    assert.deepEqual(closed, ["customer a: the cell moved on to another run"]);
    watch.stop();
    await db.close();
  });

  it("closes a view at once when its grant has already lapsed when it is bound", async () => {
    const { db, watch, key, grant } = await setup(() => new Date());
    await revokeKey(db, key.id, new Date().toISOString());
    const closed: string[] = [];
    await watch.bind(grant("cell-a"), (reason) => closed.push(reason));
    assert.equal(closed.length, 1);
    watch.stop();
    await db.close();
  });
});

describe("connection caps", () => {
  it("defaults to 10 per key and 30 per account for each kind, and rejects unknown or bad caps", () => {
    const compiled = compileConnectionCapsOptions();
    for (const kind of ["event_streams", "mjpeg_viewers", "signalling_websockets"] as const) assert.deepEqual(compiled[kind], { perKey: 10, perAccount: 30 });
    assert.equal(compiled.retryAfterS, 5);
    assert.deepEqual(compileConnectionCapsOptions({ mjpeg_viewers: { perKey: 2 } }).mjpeg_viewers, { perKey: 2, perAccount: 30 });
    assert.throws(() => compileConnectionCapsOptions({ websockets: {} } as never), /unknown connection cap\(s\): websockets/);
    assert.throws(() => compileConnectionCapsOptions({ event_streams: { perKey: 0 } }), /event_streams.perKey must be a whole number >= 1; got 0/);
  });

  it("refuses the next connection past a key's or an account's cap with 429, counts kinds apart, and frees a slot once", () => {
    const caps = new ConnectionCaps({ mjpeg_viewers: { perKey: 2, perAccount: 3 } });
    const releases = [caps.acquire("mjpeg_viewers", "k1", "acct"), caps.acquire("mjpeg_viewers", "k1", "acct")];
    assert.throws(() => caps.acquire("mjpeg_viewers", "k1", "acct"), (error: AssayError) => {
      assert.equal(error.code, "rate_limited");
      assert.equal(error.retryAfterS, 5);
      assert.match(error.message, /this key has 2 MJPEG viewers open, the most allowed per key/);
      return true;
    });
    releases.push(caps.acquire("mjpeg_viewers", "k2", "acct"));
    assert.throws(() => caps.acquire("mjpeg_viewers", "k3", "acct"), /this account has 3 MJPEG viewers open, the most allowed per account/);
    // Another kind has its own budget.
    caps.acquire("event_streams", "k1", "acct")();
    releases[0]!();
    releases[0]!();
    assert.equal(caps.count("mjpeg_viewers", { accountId: "acct" }), 2);
    caps.acquire("mjpeg_viewers", "k3", "acct");
    assert.throws(() => caps.acquire("mjpeg_viewers", "k3", "acct"), /this account has 3/);
  });
});
