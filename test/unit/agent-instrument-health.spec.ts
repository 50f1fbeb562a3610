/** The agent's record of instruments that stopped answering: what heartbeats report, and the probe that brings one back. */
import assert from "node:assert/strict";
import { InstrumentHealth } from "../../cell-agent/instrument-health.js";

describe("agent instrument health", () => {
  it("reports a lost instrument once, at once, and drops it when a probe read answers", async () => {
    let mocapAnswers = false;
    let changes = 0;
    const lines: string[] = [];
    const health = new InstrumentHealth({
      probes: { mocap: async () => { if (!mocapAnswers) throw new Error("stale"); }, ft_wrist: undefined },
      onChange: () => (changes += 1),
      log: (line) => lines.push(line),
      probeIntervalMs: 60_000, // the test drives probe() itself
    });
    try {
      assert.deepEqual(health.list(), []);
      health.markDown({ kind: "mocap", name: "" }, "instrument mocap stopped answering (3 failed reads in a row: stale)");
      health.markDown({ kind: "mocap", name: "" }, "again");
      assert.deepEqual(health.list(), [{ kind: "mocap", name: "" }]);
      assert.equal(changes, 1, "the coordinator is told once (an extra heartbeat)");
      assert.match(lines[0], /^instrument mocap stopped answering/);

      await health.probe();
      assert.deepEqual(health.list(), [{ kind: "mocap", name: "" }], "still stale: still down");
      assert.equal(changes, 1);

      mocapAnswers = true;
      await health.probe();
      assert.deepEqual(health.list(), []);
      assert.equal(changes, 2);
      assert.match(lines.at(-1)!, /instrument mocap answers again/);
    } finally {
      health.stop();
    }
  });

  it("keeps an instrument it cannot probe down", async () => {
    const health = new InstrumentHealth({ probes: {}, onChange: () => undefined, log: () => undefined, probeIntervalMs: 60_000 });
    try {
      health.markDown({ kind: "operator", name: "" }, "instrument operator stopped answering");
      await health.probe();
      assert.deepEqual(health.list(), [{ kind: "operator", name: "" }]);
    } finally {
      health.stop();
    }
  });
});
