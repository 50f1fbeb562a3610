import { strict as assert } from "node:assert";
import { Backoff } from "../../cell-agent/link/backoff.js";
import { CoordinatorRotation, type RotationStep } from "../../cell-agent/link/coordinator-rotation.js";

const A = "coord-a.lab:50051";
const B = "coord-b.lab:50051";
const C = "coord-c.lab:50051";

/** A rotation whose backoff has no jitter (or the given random source), 100 ms doubling to 1600 ms. */
function rotation(addresses: string[], jitter = 0, random?: () => number): CoordinatorRotation {
  return new CoordinatorRotation(addresses, new Backoff({ initialMs: 100, maxMs: 1600, jitter }, random));
}

const steps = (r: CoordinatorRotation, n: number): Array<[string, number]> =>
  Array.from({ length: n }, () => r.failed()).map((s: RotationStep) => [s.address, s.delayMs]);

describe("agent coordinator rotation", () => {
  it("starts at the first address and tries the others at once, paying the backoff once per cycle", () => {
    const r = rotation([A, B, C]);
    assert.equal(r.address, A);
    assert.deepEqual(steps(r, 9), [
      [B, 0], [C, 0], [A, 100],
      [B, 0], [C, 0], [A, 200],
      [B, 0], [C, 0], [A, 400],
    ]);
  });

  it("with one address is the plain backoff", () => {
    const r = rotation([A]);
    assert.deepEqual(steps(r, 6), [[A, 100], [A, 200], [A, 400], [A, 800], [A, 1600], [A, 1600]]);
  });

  it("after a welcomed stream breaks, moves to the next address after the first backoff delay, then cycles from there", () => {
    const r = rotation([A, B, C]);
    steps(r, 2); // A, then B failed: C is dialled, and welcomes
    assert.equal(r.address, C);
    r.welcomed();
    assert.deepEqual(steps(r, 4), [[A, 100], [B, 0], [C, 0], [A, 200]]);
  });

  it("stays where it is while welcomed: only a failure moves it", () => {
    const r = rotation([A, B]);
    r.failed();
    r.welcomed();
    assert.equal(r.address, B);
    assert.equal(r.position, 2);
    r.welcomed();
    assert.equal(r.address, B);
  });

  it("keeps the jitter on the cycle's delay, and only ever shortens it", () => {
    const r = rotation([A, B], 0.5, () => 0.999);
    assert.deepEqual(steps(r, 4).map(([, delayMs]) => delayMs), [0, 50, 0, 100]);
    const early = rotation([A, B], 0.5, () => 0);
    assert.deepEqual(steps(early, 4).map(([, delayMs]) => delayMs), [0, 100, 0, 200]);
  });

  it("after a refused token waits the slowest delay even mid-cycle, and moves on", () => {
    const r = rotation([A, B, C]);
    assert.deepEqual(r.failed({ refused: true }), { address: B, delayMs: 1600 });
    r.welcomed();
    assert.deepEqual(steps(r, 3), [[C, 100], [A, 0], [B, 0]]);
  });

  it("a local failure (no Hello) stays on the same address and pays the backoff", () => {
    const r = rotation([A, B]);
    assert.equal(r.retryDelayMs(), 100);
    assert.equal(r.address, A);
    assert.deepEqual(steps(r, 2), [[B, 0], [A, 200]]);
  });

  it("refuses an empty list", () => {
    assert.throws(() => rotation([]), /at least one coordinator address/);
  });
});
