/**
 * A kind's sequential test continued from the previous episode's (coordinator/kinds/sequential-replay.ts): the same
 * decision and state as a replay from the first episode after every episode, whatever the evidence does between two
 * replays (grows, an episode's outcome or cell changes, one drops out, a step the memo took is rolled back), with the
 * test fed about once per episode instead of once per episode per episode.
 */
import assert from "node:assert/strict";
import { createCellThresholdTest } from "../../coordinator/stats/cell-threshold.js";
import type { ThresholdDecision } from "../../coordinator/stats/sequential-threshold.js";
import { createReplayMemo, replaySequential, type ReplayStep } from "../../coordinator/kinds/sequential-replay.js";
import { mulberry32 } from "../../protocol/prng.js";

type Step = { success: boolean; cell: string };
const CONTINUE = "continue" as ThresholdDecision;

describe("sequential tests continued from the previous episode's", () => {
  it("decide and stand as a replay from the start does, after every episode, with the test fed about once an episode", async () => {
    let fed = 0;
    const create = () => {
      const test = createCellThresholdTest({ target: 0.6, alpha: 0.05, maxEpisodes: 5000 });
      return { update: (s: Step) => (fed++, test.update(s.success, s.cell)), state: () => test.state() };
    };
    // At the target the test seldom decides; well above it, it passes early and later episodes must not move it.
    const decisions = new Set<string>();
    for (const [seed, rate] of [[3, 0.6], [2, 0.85]] as const) {
      const next = mulberry32(seed);
      const memo = createReplayMemo();
      const evidence: Array<ReplayStep<Step> & { id: string }> = [];
      const stepOf = (id: string): ReplayStep<Step> & { id: string } => {
        const step = { success: next() < rate, cell: `cell-${Math.floor(next() * 3)}` };
        return { id, signature: `${id} ${step.success} ${step.cell}`, step };
      };
      let withMemo = 0;
      let fromStart = 0;
      for (let i = 0; i < 150; i++) {
        evidence.push(stepOf(`ep_${i}`));
        const roll = next();
        // Now and then an earlier episode is judged again, or drops out (invalidated), as episodes can.
        if (roll < 0.02 && evidence.length > 2) evidence[Math.floor(next() * evidence.length)] = stepOf(`ep_again_${i}`);
        else if (roll < 0.04 && evidence.length > 2) evidence.splice(Math.floor(next() * evidence.length), 1);
        fed = 0;
        const continued = await replaySequential(evidence, create, { memo, key: "run_x/soak", perTurn: 64, continueDecision: CONTINUE });
        withMemo += fed;
        // A transaction rolled back: the memo took a step the evidence no longer has.
        if (roll > 0.98) evidence.pop();
        fed = 0;
        const replayed = await replaySequential(evidence, create, { key: "run_x/soak", perTurn: 64, continueDecision: CONTINUE });
        fromStart += fed;
        if (roll > 0.98) {
          // Compared on what the evidence is now: the memo replays it again from the start.
          fed = 0;
          const again = await replaySequential(evidence, create, { memo, key: "run_x/soak", perTurn: 64, continueDecision: CONTINUE });
          withMemo += fed;
          assert.deepEqual([again.decision, again.test.state()], [replayed.decision, replayed.test.state()], `seed ${seed}, episode ${i}, after a rollback`);
          continue;
        }
        assert.deepEqual([continued.decision, continued.test.state()], [replayed.decision, replayed.test.state()], `seed ${seed}, episode ${i}`);
        decisions.add(replayed.decision);
      }
      console.log(`      seed ${seed}: the test was fed ${withMemo} times with the memo, ${fromStart} replaying from the start`);
      assert.ok(withMemo < fromStart / 5, `fed ${withMemo} times with the memo against ${fromStart}`);
    }
    // Both undecided tests (the one at the target, throughout) and decided ones were compared.
    assert.ok(decisions.has("continue") && decisions.has("pass"), [...decisions].join(", "));
  });

  it("keeps the tests of the runs used last, and starts another key's test from the start", async () => {
    const memo = createReplayMemo(2);
    let created = 0;
    const create = () => (created++, { update: (s: number) => (s > 100 ? "stop" : "continue") });
    const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ signature: String(i), step: i }));
    for (const key of ["a", "b", "a", "c", "a", "b"]) await replaySequential(steps(3), create, { memo, key, perTurn: 64, continueDecision: "continue" as "continue" | "stop" });
    // a, b made; a kept; c made (b dropped, least recently used); a kept; b made again.
    assert.equal(created, 4);
  });
});
