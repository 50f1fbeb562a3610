/**
 * The pager (coordinator/fleet/attention-pager.ts): one timer per open attention on an injectable clock,
 * raised once per attention episode, disarmed when the person answers, and never raised twice across a
 * coordinator restart (the store remembers; a second pager on the same database stands for the restart).
 */
import assert from "node:assert/strict";
import { AttentionPager, outboxPage, type PagerTimers } from "../../coordinator/fleet/attention-pager.js";
import { openSqliteDatabase, type Db } from "../../coordinator/store/database.js";
import { ensureAccount } from "../../coordinator/store/accounts-repo.js";
import { insertEndpoint } from "../../coordinator/webhooks/endpoints-repo.js";
import type { AttentionPageKey } from "../../coordinator/store/attention-pages-repo.js";

/** A clock and timers that move only when the test says. */
class FakeTime implements PagerTimers {
  nowMs = Date.parse("2026-11-27T10:00:00.000Z");
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private nextId = 1;
  set(fn: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ at: this.nowMs + ms, fn, id });
    return id;
  }
  clear(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }
  pending(): number {
    return this.timers.length;
  }
  advance(ms: number): void {
    const until = this.nowMs + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers[0];
      if (!next || next.at > until) break;
      this.timers.shift();
      this.nowMs = Math.max(this.nowMs, next.at);
      next.fn();
    }
    this.nowMs = until;
  }
}

const quiet = { info: () => {}, error: () => {} };
const iso = (ms: number) => new Date(ms).toISOString();

describe("attention pager", () => {
  let time: FakeTime;
  let raised: Array<{ key: AttentionPageKey; at: string }>;
  let pager: AttentionPager;

  beforeEach(() => {
    time = new FakeTime();
    raised = [];
    pager = new AttentionPager({
      afterMs: 120_000, now: () => time.nowMs, timers: time, logger: quiet,
      raise: async (key, at) => {
        raised.push({ key, at: at.toISOString() });
        return true;
      },
    });
  });

  it("raises once when the wait passes the setting, not before", () => {
    const since = iso(time.nowMs);
    pager.observe("so101-b", { kind: "reset", episodeId: "ep_1", since });
    time.advance(119_999);
    assert.equal(raised.length, 0);
    time.advance(1);
    assert.deepEqual(raised, [{ key: { cellId: "so101-b", kind: "reset", episodeId: "ep_1", since }, at: iso(Date.parse(since) + 120_000) }]);
    // The same attention said again (a heartbeat-like repeat) does not re-arm it.
    pager.observe("so101-b", { kind: "reset", episodeId: "ep_1", since });
    time.advance(600_000);
    assert.equal(raised.length, 1);
  });

  it("is disarmed when the person answers in time, and arms a new wait afresh", () => {
    pager.observe("so101-b", { kind: "reset", episodeId: "ep_1", since: iso(time.nowMs) });
    time.advance(60_000);
    pager.observe("so101-b", undefined);
    assert.equal(time.pending(), 0);
    time.advance(600_000);
    assert.equal(raised.length, 0);
    const since = iso(time.nowMs);
    pager.observe("so101-b", { kind: "label", episodeId: "ep_1", since });
    time.advance(120_000);
    assert.equal(raised.length, 1);
    assert.equal(raised[0]!.key.kind, "label");
  });

  it("counts from when the cell began waiting, not from when the coordinator heard", () => {
    // The cell has waited 100 s already (it re-sent its attention after a reconnect).
    pager.observe("so101-a", { kind: "reset", episodeId: "ep_2", since: iso(time.nowMs - 100_000) });
    time.advance(20_000);
    assert.equal(raised.length, 1);
    // Already past due: raised at once.
    pager.observe("so101-b", { kind: "reset", episodeId: "ep_3", since: iso(time.nowMs - 500_000) });
    time.advance(0);
    assert.equal(raised.length, 2);
  });

  it("keeps one timer per cell: a new episode's wait replaces the old one", async () => {
    pager.observe("so101-b", { kind: "reset", episodeId: "ep_1", since: iso(time.nowMs) });
    time.advance(60_000);
    pager.observe("so101-b", { kind: "reset", episodeId: "ep_2", since: iso(time.nowMs) });
    assert.equal(time.pending(), 1);
    time.advance(119_000);
    assert.equal(raised.length, 0);
    time.advance(1_000);
    assert.deepEqual(raised.map((r) => r.key.episodeId), ["ep_2"]);
    await pager.stop();
    assert.equal(time.pending(), 0);
  });

  it("refuses a setting that is not a positive duration", () => {
    assert.throws(() => new AttentionPager({ afterMs: 0, raise: async () => true }), /attentionPageMs must be a positive number of milliseconds; got 0/);
  });
});

describe("attention pages through the outbox", () => {
  let db: Db;
  let time: FakeTime;
  let kicks: number;
  const OPERATOR = "acct_assay";
  const CUSTOMER = "acct_customer";
  const deliveries = async (accountId: string) => await db.prepare(
    `SELECT e.type, e.data FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN webhook_events e ON e.id = d.event_id
     WHERE w.account_id = ? ORDER BY e.created`,
  ).all(accountId) as Array<{ type: string; data: string }>;
  const newPager = () => new AttentionPager({ afterMs: 120_000, now: () => time.nowMs, timers: time, logger: quiet, raise: outboxPage(db, OPERATOR, () => kicks++) });

  beforeEach(async () => {
    db = openSqliteDatabase(":memory:");
    time = new FakeTime();
    kicks = 0;
    const at = new Date(time.nowMs);
    await ensureAccount(db, OPERATOR, "Assay operations", at.toISOString());
    await ensureAccount(db, CUSTOMER, "A customer", at.toISOString());
    await insertEndpoint(db, OPERATOR, { url: "https://ops.example/hooks", events: ["cell.attention_needed"], description: null }, at);
    await insertEndpoint(db, CUSTOMER, { url: "https://customer.example/hooks", events: ["cell.attention_needed", "run.completed"], description: null }, at);
  });

  afterEach(() => db.close());

  it("queues cell.attention_needed for the operator account only, with the cell, what it needs and since when", async () => {
    const since = iso(time.nowMs);
    newPager().observe("so101-b", { kind: "reset", episodeId: "ep_1", since });
    time.advance(125_000);
    const ops = await deliveries(OPERATOR);
    assert.equal(ops.length, 1);
    assert.equal(ops[0]!.type, "cell.attention_needed");
    assert.deepEqual(JSON.parse(ops[0]!.data), {
      cell: "so101-b", kind: "reset", needs: "set the scene, then press Scene ready", episode_id: "ep_1", since, waiting_s: 120,
    });
    assert.deepEqual(await deliveries(CUSTOMER), [], "a customer's endpoint never receives the fleet's cell events");
    assert.equal(kicks, 1);
  });

  it("never raises the same attention twice across a restart, and raises a due one at once after it", async () => {
    const since = iso(time.nowMs);
    const first = newPager();
    first.observe("so101-b", { kind: "reset", episodeId: "ep_1", since });
    time.advance(130_000);
    await first.stop();
    // A restarted coordinator hears the same attention again when the cell reconnects.
    const second = newPager();
    second.observe("so101-b", { kind: "reset", episodeId: "ep_1", since });
    time.advance(1_000);
    assert.equal((await deliveries(OPERATOR)).length, 1);
    assert.equal(kicks, 1);
    // An attention that became due while the coordinator was down is raised as soon as it is heard.
    const labelSince = iso(time.nowMs);
    await second.stop();
    time.advance(300_000);
    const third = newPager();
    third.observe("so101-b", { kind: "label", episodeId: "ep_1", since: labelSince });
    time.advance(0);
    const ops = (await deliveries(OPERATOR)).map((d) => JSON.parse(d.data) as Record<string, unknown>);
    assert.equal(ops.length, 2);
    assert.equal(ops[1]!.kind, "label");
    assert.equal(ops[1]!.waiting_s, 300);
  });
});
