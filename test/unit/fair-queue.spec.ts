/**
 * The archive worker's queue is fair across accounts (coordinator/exports/fair-queue.ts): round-robin
 * by account, each account's oldest first, counting what is already being made here or on another
 * coordinator. The worker itself is driven with an in-memory job kind: the order archives are made
 * in is the order of completion a user would see.
 */
import assert from "node:assert/strict";
import { createArchiveWorker, type ArchiveJob, type ArchiveJobKind } from "../../coordinator/exports/archive-worker.js";
import { fairOrder, type QueuedArchive } from "../../coordinator/exports/fair-queue.js";

const at = (second: number) => new Date(Date.UTC(2026, 10, 27, 12, 0, second)).toISOString();
const row = (id: string, account: string, second: number): QueuedArchive => ({ id, account_id: account, created: at(second) });

describe("fair order of queued archives", () => {
  it("takes accounts in turn, each account's oldest first", () => {
    const rows = [row("a1", "A", 0), row("a2", "A", 1), row("a3", "A", 2), row("b1", "B", 5), row("c1", "C", 3), row("b2", "B", 6)];
    assert.deepEqual(fairOrder(rows, (r) => r, () => false).map((r) => r.id), ["a1", "c1", "b1", "a2", "b2", "a3"]);
  });

  it("at equal places, serves first the account started least recently", () => {
    const rows = [row("a2", "A", 1), row("b1", "B", 9)];
    const last = new Map([["A", 3]]);
    assert.deepEqual(fairOrder(rows, (r) => r, () => false, (account) => last.get(account) ?? -1).map((r) => r.id), ["b1", "a2"]);
  });

  it("counts an account's archives being made (here or leased elsewhere) against it", () => {
    const rows = [row("a1", "A", 0), row("a2", "A", 1), row("a3", "A", 2), row("b1", "B", 9)];
    const making = new Set(["a1"]);
    assert.deepEqual(fairOrder(rows, (r) => r, (r) => making.has(r.id)).map((r) => r.id), ["b1", "a2", "a3"]);
  });
});

describe("archive worker fairness", () => {
  interface Row extends ArchiveJob { status: "preparing" | "ready" }

  /** An in-memory job kind: making a row records it and marks it ready. */
  function memoryKind(rows: Row[], made: string[], onMade: () => void = () => undefined, claims: string[] = []): ArchiveJobKind<Row> {
    return {
      name: "test archive",
      listPreparing: async () => rows.filter((r) => r.status === "preparing").sort((a, b) => a.created.localeCompare(b.created)),
      async claim(id, lease) {
        claims.push(id);
        const r = rows.find((x) => x.id === id && x.status === "preparing" && (x.lease_until === null || x.lease_until < lease.now));
        if (!r) return undefined;
        r.attempts++;
        r.lease_until = lease.until;
        return { ...r };
      },
      async renew(id, until) {
        const r = rows.find((x) => x.id === id);
        if (r) r.lease_until = until;
      },
      async make(job) {
        made.push(job.id);
        const r = rows.find((x) => x.id === job.id)!;
        r.status = "ready";
        r.lease_until = null;
        onMade();
      },
      async fail() {},
      async sweep() {},
    };
  }
  const job = (id: string, account: string, second: number, lease_until: string | null = null): Row =>
    ({ id, account_id: account, created: at(second), attempts: 0, lease_until, status: "preparing" });

  it("makes account B's one export second, not behind account A's fifteen", async () => {
    const rows = [...Array.from({ length: 15 }, (_, i) => job(`a${i + 1}`, "A", i)), job("b1", "B", 20)];
    const made: string[] = [];
    const worker = createArchiveWorker({ kinds: [memoryKind(rows, made)], concurrency: 1, logger: { error: () => undefined } });
    await worker.start();
    await worker.idle();
    await worker.stop();
    assert.equal(made.length, 16);
    assert.deepEqual(made.slice(0, 3), ["a1", "b1", "a2"]);
  });

  it("leaves a row another coordinator holds alone and makes it once that lease has run out", async () => {
    const clock = { now: Date.parse(at(0)) };
    // Held by another coordinator until second 1 of the fake clock; the worker's own timer fires in real time.
    const rows = [job("x1", "A", 0, new Date(clock.now + 50).toISOString()), job("y1", "B", 1)];
    const made: string[] = [];
    let bothMade!: () => void;
    const done = new Promise<void>((resolve) => (bothMade = resolve));
    const claims: string[] = [];
    const worker = createArchiveWorker({ kinds: [memoryKind(rows, made, () => made.length === 2 && bothMade(), claims)], now: () => new Date(clock.now), logger: { error: () => undefined } });
    await worker.start();
    await worker.idle();
    assert.deepEqual(made, ["y1"], "the leased row is not claimed while its lease lasts");
    // The other coordinator died: its lease runs out, and the worker's timer for that moment takes the row.
    clock.now += 100;
    await done;
    await worker.stop();
    assert.deepEqual(made, ["y1", "x1"]);
    // Not claimed over and over while held (the worker used to retry at once, in a promise loop that froze the event loop for the lease).
    assert.deepEqual(claims, ["y1", "x1"]);
  });
});
