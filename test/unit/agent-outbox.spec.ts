import { strict as assert } from "node:assert";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Outbox } from "../../cell-agent/link/outbox.js";

const started = (id: string) => ({ episodeStarted: { episodeId: id, attempt: 1, startedAtMs: 5 } });

describe("agent durable outbox", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "agent-outbox-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("numbers messages 1, 2, 3 and keeps them until acked", () => {
    const outbox = Outbox.open(dir);
    assert.deepEqual([outbox.enqueue(started("a")).seq, outbox.enqueue(started("b")).seq, outbox.enqueue(started("c")).seq], [1, 2, 3]);
    outbox.ack(2);
    assert.deepEqual(outbox.unacked().map((m) => m.episodeStarted?.episodeId), ["c"]);
    assert.equal(outbox.lastSeqAcked, 2);
    outbox.close();
  });

  it("after a restart resends what was never acked, in order, and never reuses a seq", () => {
    const first = Outbox.open(dir);
    first.enqueue(started("a"));
    first.enqueue(started("b"));
    first.enqueue(started("c"));
    first.ack(1);
    first.close();
    // a crash mid-append leaves a torn last line
    appendFileSync(join(dir, "outbox.jsonl"), '{"seq":4,"msg":"AAA');

    const second = Outbox.open(dir);
    assert.deepEqual(second.pendingAfter(0).map((m) => [m.seq, m.episodeStarted?.episodeId]), [[2, "b"], [3, "c"]]);
    assert.deepEqual(second.pendingAfter(2).map((m) => m.seq), [3]);
    assert.equal(second.lastSeqSent, 3);
    assert.equal(second.enqueue(started("d")).seq, 4);
    second.close();
  });

  it("keeps the seq counter through compaction even when everything is acked", () => {
    const outbox = Outbox.open(dir);
    for (let i = 0; i < 5; i++) outbox.enqueue(started(`e${i}`));
    outbox.ack(5);
    outbox.compact();
    outbox.close();
    const reopened = Outbox.open(dir);
    assert.equal(reopened.unacked().length, 0);
    assert.equal(reopened.enqueue(started("next")).seq, 6);
    reopened.close();
  });
});
