import { strict as assert } from "node:assert";
import { Backoff } from "../../cell-agent/link/backoff.js";

describe("agent reconnect backoff", () => {
  it("doubles from initialMs up to maxMs without jitter", () => {
    const backoff = new Backoff({ initialMs: 200, maxMs: 1000, jitter: 0 });
    assert.deepEqual([1, 2, 3, 4, 5].map(() => backoff.nextDelayMs()), [200, 400, 800, 1000, 1000]);
  });

  it("jitter only shortens a delay, by at most the jitter share", () => {
    const backoff = new Backoff({ initialMs: 1000, maxMs: 1000, jitter: 0.5 }, () => 0.999);
    const delay = backoff.nextDelayMs();
    assert.ok(delay >= 500 && delay <= 1000, `delay ${delay}`);
  });

  it("reset starts over; slowest jumps to maxMs", () => {
    const backoff = new Backoff({ initialMs: 100, maxMs: 5000, jitter: 0 });
    backoff.nextDelayMs();
    backoff.nextDelayMs();
    backoff.reset();
    assert.equal(backoff.nextDelayMs(), 100);
    backoff.slowest();
    assert.equal(backoff.nextDelayMs(), 5000);
  });
});
