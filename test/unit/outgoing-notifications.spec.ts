/**
 * The cluster bus's outgoing queue (coordinator/cluster/outgoing-notifications.ts): in order, batched,
 * never the same payload twice in a batch, and bounded while the database does not take them.
 */
import assert from "node:assert/strict";
import { OutgoingNotifications, type OutgoingNotificationsOptions } from "../../coordinator/cluster/outgoing-notifications.js";

/** A sender whose statements wait until the test lets them go, one at a time. */
class HeldSender {
  readonly sent: string[][] = [];
  private readonly waiting: Array<{ batch: string[]; release: (error?: Error) => void }> = [];
  private arrived: (() => void) | undefined;

  readonly send = (batch: string[]): Promise<void> => new Promise<void>((resolve, reject) => {
    this.waiting.push({ batch: [...batch], release: (error) => (error ? reject(error) : resolve()) });
    this.arrived?.();
  });

  /** Waits for the next statement to be sent, and lets it finish (or fail). */
  async release(error?: Error): Promise<string[]> {
    while (this.waiting.length === 0) await new Promise<void>((resolve) => (this.arrived = resolve));
    const next = this.waiting.shift()!;
    this.sent.push(next.batch);
    next.release(error);
    return next.batch;
  }
}

function queueWith(sender: HeldSender, overrides: Partial<OutgoingNotificationsOptions> = {}) {
  const dropped: number[] = [];
  const errors: unknown[] = [];
  const queue = new OutgoingNotifications({
    send: sender.send,
    maxBatch: 4,
    maxBatchChars: 100,
    maxQueuedChars: 1_000,
    onDropped: (count) => dropped.push(count),
    onError: (error) => errors.push(error),
    ...overrides,
  });
  return { queue, dropped, errors };
}

describe("cluster bus: outgoing notifications", () => {
  it("sends in order, those published during a send together, at most maxBatch a statement", async () => {
    const sender = new HeldSender();
    const { queue } = queueWith(sender);
    queue.push("a");
    for (const p of ["b", "c", "d", "e", "f"]) queue.push(p);
    assert.deepEqual(await sender.release(), ["a"]);
    assert.deepEqual(await sender.release(), ["b", "c", "d", "e"]);
    assert.deepEqual(await sender.release(), ["f"]);
    await queue.idle();
    assert.deepEqual(queue.waiting, { messages: 0, chars: 0 });
  });

  it("never puts the same payload twice in one statement (PostgreSQL would deliver it once), nor more than maxBatchChars", async () => {
    const sender = new HeldSender();
    const { queue } = queueWith(sender);
    queue.push("first");
    for (const p of ["x", "y", "x", "z"]) queue.push(p);
    const long = "L".repeat(150);
    queue.push(long);
    queue.push("w".repeat(60));
    queue.push("v".repeat(60));
    await sender.release();
    assert.deepEqual(await sender.release(), ["x", "y"]);
    assert.deepEqual(await sender.release(), ["x", "z"]);
    assert.deepEqual(await sender.release(), [long], "a payload longer than a batch goes alone");
    assert.deepEqual(await sender.release(), ["w".repeat(60)]);
    assert.deepEqual(await sender.release(), ["v".repeat(60)]);
    await queue.idle();
  });

  it("keeps at most maxQueuedChars waiting while a statement hangs, drops the oldest, and says how many once drained", async () => {
    const sender = new HeldSender();
    const { queue, dropped } = queueWith(sender);
    queue.push("held");
    const payloads = Array.from({ length: 10_000 }, (_, i) => `m${String(i).padStart(5, "0")}`); // 6 characters each
    for (const p of payloads) {
      queue.push(p);
      assert.ok(queue.waiting.chars <= 1_000, `${queue.waiting.chars} characters waiting`);
    }
    assert.equal(queue.waiting.messages, 166);
    assert.deepEqual(dropped, [], "told once the queue has drained, not per message");
    await sender.release();
    const after: string[] = [];
    while (after.length < 166) after.push(...(await sender.release()));
    assert.deepEqual(after, payloads.slice(-166), "the newest, in order");
    await queue.idle();
    assert.deepEqual(dropped, [10_000 - 166]);
  });

  it("goes on with the next batch after a statement fails, and reports the failure", async () => {
    const sender = new HeldSender();
    const { queue, errors } = queueWith(sender);
    queue.push("a");
    queue.push("b");
    await sender.release(new Error("connection terminated"));
    assert.deepEqual(await sender.release(), ["b"]);
    await queue.idle();
    assert.equal(errors.length, 1);
    assert.match((errors[0] as Error).message, /connection terminated/);
  });

  it("sends what onDropped publishes (the bus's request that the others check at once)", async () => {
    const sender = new HeldSender();
    let queue!: OutgoingNotifications;
    ({ queue } = queueWith(sender, { maxQueuedChars: 10, onDropped: () => queue.push("kick") }));
    queue.push("held");
    for (const p of ["aaaa", "bbbb", "cccc", "dddd"]) queue.push(p);
    await sender.release();
    assert.deepEqual(await sender.release(), ["cccc", "dddd"]);
    assert.deepEqual(await sender.release(), ["kick"]);
    await queue.idle();
  });
});
