import { strict as assert } from "node:assert";
import { LatestFrameGate, type GateClock } from "../../coordinator/streams/webrtc/latest-frame-gate.js";

/** A clock whose timers fire only when the test advances it. */
class ManualClock implements GateClock {
  private now = 1000;
  private timers = new Map<number, { atMs: number; callback: () => void }>();
  private nextId = 1;

  nowMs(): number {
    return this.now;
  }

  setTimeout(callback: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { atMs: this.now + delayMs, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.timers].filter(([, t]) => t.atMs <= until).sort((a, b) => a[1].atMs - b[1].atMs)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.now = due[1].atMs;
      due[1].callback();
    }
    this.now = until;
  }
}

function gateWith(minIntervalMs: number, accepts: () => boolean = () => true) {
  const clock = new ManualClock();
  const written: Array<{ frame: number; atMs: number }> = [];
  const gate = new LatestFrameGate<number>({
    minIntervalMs,
    clock,
    write: (frame) => {
      written.push({ frame, atMs: clock.nowMs() });
      return accepts();
    },
  });
  return { clock, gate, written };
}

/** Offers `count` frames, one every `periodMs` (frame i offered at i * periodMs from now). */
function feed(clock: ManualClock, gate: LatestFrameGate<number>, count: number, periodMs: number): number {
  const startMs = clock.nowMs();
  for (let i = 0; i < count; i++) {
    clock.advance(startMs + i * periodMs - clock.nowMs());
    gate.offer(i);
  }
  return startMs;
}

describe("webrtc latest-frame gate", () => {
  it("writes each frame as it arrives while the source keeps within the bound", () => {
    const { clock, gate, written } = gateWith(100);
    const startMs = feed(clock, gate, 20, 100);
    assert.deepEqual(written, Array.from({ length: 20 }, (_, i) => ({ frame: i, atMs: startMs + i * 100 })));
  });

  it("halves a source twice as fast as the bound without delaying any frame", () => {
    const { clock, gate, written } = gateWith(100);
    const startMs = feed(clock, gate, 40, 50);
    // After the saved-up burst, every other frame, each written when it arrived.
    assert.ok(written.length >= 20 && written.length <= 22, `${written.length} written`);
    for (const { frame, atMs } of written) assert.equal(atMs, startMs + frame * 50);
  });

  it("thins a source slightly faster than the bound by dropping, not by delaying", () => {
    const { clock, gate, written } = gateWith(1000 / 15);
    const startMs = feed(clock, gate, 160, 1000 / 16);
    assert.ok(written.length >= 150 && written.length <= 152, `${written.length} of 160 written`);
    for (const { frame, atMs } of written) assert.equal(atMs, startMs + (frame * 1000) / 16, `frame ${frame} delayed`);
    assert.equal(gate.counts.dropped, 160 - written.length);
  });

  it("writes a held frame one interval later when nothing newer comes (the source paused)", () => {
    const { clock, gate, written } = gateWith(100);
    gate.offer(0);
    gate.offer(1); // burst
    gate.offer(2); // held: no token
    assert.deepEqual(written.map((w) => w.frame), [0, 1]);
    clock.advance(99);
    assert.deepEqual(written.map((w) => w.frame), [0, 1]);
    clock.advance(1);
    assert.deepEqual(written, [{ frame: 0, atMs: 1000 }, { frame: 1, atMs: 1000 }, { frame: 2, atMs: 1100 }]);
  });

  it("while the sink is busy it keeps only the newest frame, and writes it on ready()", () => {
    let accepting = false;
    const { clock, gate, written } = gateWith(10, () => accepting);
    gate.offer(1); // written; the sink reports busy
    for (const frame of [2, 3, 4]) {
      clock.advance(50);
      gate.offer(frame);
    }
    clock.advance(500);
    assert.deepEqual(written.map((w) => w.frame), [1]);
    accepting = true;
    gate.ready();
    assert.deepEqual(written.map((w) => w.frame), [1, 4]);
    assert.deepEqual(gate.counts, { offered: 4, written: 2, dropped: 2 });
  });

  it("writes nothing after close(), including a held frame", () => {
    const { clock, gate, written } = gateWith(100);
    for (const frame of [1, 2, 3]) gate.offer(frame);
    gate.close();
    clock.advance(500);
    gate.offer(4);
    assert.deepEqual(written.map((w) => w.frame), [1, 2]);
  });

  it("rejects an interval that is not positive, with the offending value", () => {
    assert.throws(() => new LatestFrameGate({ minIntervalMs: 0, write: () => true }), /got 0/);
  });
});
