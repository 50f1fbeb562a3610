/**
 * A cell's inbox (coordinator/fleet/cell-inbox.ts) on a real object-mode stream, the kind a gRPC
 * server call is: messages handled in arrival order, at most `high` waiting while the handler is
 * stalled (the stream paused, the rest held upstream), nothing dropped once it moves again.
 */
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { setImmediate as turn } from "node:timers/promises";
import { cellInbox } from "../../coordinator/fleet/cell-inbox.js";

function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Lets the stream and the queue run until `done()` holds; fails after a bounded number of turns. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let turns = 0; !done(); turns += 1) {
    if (turns > 10_000) assert.fail(`still waiting for ${what}`);
    await turn();
  }
}

describe("cell inbox", () => {
  it("holds at most `high` messages while the handler is stalled, then handles all of them in order", async () => {
    const stream = new PassThrough({ objectMode: true });
    const stall = gate();
    const handled: number[] = [];
    let waitingNow = 0;
    let mostWaiting = 0;
    let pauses = 0;
    const inbox = cellInbox(stream, {
      high: 8, low: 2, onError: (error) => assert.fail(String(error)), onPause: () => (pauses += 1),
      onWaiting: (change) => {
        waitingNow += change;
        mostWaiting = Math.max(mostWaiting, waitingNow);
      },
    });
    stream.on("data", (n: number) => void inbox.push(async () => {
      await stall.opened;
      handled.push(n);
    }));

    for (let n = 0; n < 500; n += 1) stream.write(n);
    await turn(); // every write and data event already issued has been delivered
    assert.equal(inbox.waiting, 8, "the stream stops delivering at the bound");
    assert.equal(inbox.paused, true);
    assert.equal(pauses, 1);
    assert.ok(stream.writableLength > 400, `the rest waits upstream (${stream.writableLength} buffered)`);

    stall.open();
    await until(() => handled.length === 500, "all 500 handled");
    await inbox.idle();
    assert.deepEqual(handled, Array.from({ length: 500 }, (_, n) => n), "every message, in arrival order");
    assert.equal(mostWaiting, 8, "never more than the bound waited");
    assert.equal(waitingNow, 0);
    assert.equal(inbox.paused, false);
    assert.ok(pauses >= 1);
  });

  it("resumes only once the backlog is down to `low`", async () => {
    const stream = new PassThrough({ objectMode: true });
    const gates = Array.from({ length: 10 }, gate);
    const inbox = cellInbox(stream, { high: 6, low: 3, onError: (error) => assert.fail(String(error)) });
    let delivered = 0;
    stream.on("data", (n: number) => {
      delivered += 1;
      void inbox.push(() => gates[n]?.opened);
    });
    for (let n = 0; n < 10; n += 1) stream.write(n);
    await turn();
    assert.equal(delivered, 6);
    gates[0].open();
    gates[1].open();
    await turn();
    assert.equal(inbox.waiting, 4, "four still wait: above low, so still paused");
    assert.equal(delivered, 6);
    gates[2].open();
    await until(() => delivered === 9, "three more delivered");
    assert.equal(inbox.waiting, 6, "three handled, three more taken: at the bound again");
    assert.equal(inbox.paused, true);
    for (const g of gates) g.open();
    await inbox.idle();
    await until(() => delivered === 10, "the last delivered");
    await inbox.idle();
    assert.equal(inbox.waiting, 0);
    assert.equal(inbox.paused, false);
  });

  it("reports a handler that throws and goes on with the next message", async () => {
    const errors: unknown[] = [];
    const stream = new PassThrough({ objectMode: true });
    const inbox = cellInbox(stream, { onError: (error) => errors.push(error) });
    const handled: string[] = [];
    await Promise.all([
      inbox.push(() => void handled.push("a")),
      inbox.push(() => {
        throw new Error("bad message");
      }),
      inbox.push(() => void handled.push("c")),
    ]);
    assert.deepEqual(handled, ["a", "c"]);
    assert.equal((errors[0] as Error).message, "bad message");
    assert.equal(inbox.waiting, 0);
  });

  it("refuses bounds that cannot work", () => {
    const stream = new PassThrough({ objectMode: true });
    assert.throws(() => cellInbox(stream, { high: 4, low: 4, onError() {} }), /0 <= low < high \(got low 4, high 4\)/);
  });
});
