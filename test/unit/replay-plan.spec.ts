import { strict as assert } from "node:assert";
import { replayRunShape } from "../../coordinator/replay/replay-run.js";
import type { ValidatedRun } from "../../coordinator/runs/run-request.js";
import type { EpisodeRecord } from "../../coordinator/store/episodes-repo.js";
import type { RunPlan } from "../../coordinator/store/runs-repo.js";

describe("a replay ends its episodes by the original run's rules", () => {
  const plan: RunPlan = { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 9, control_rate_hz: 30, max_duration_s: 20, idle_end_s: 5 };
  const validated = { plan } as unknown as ValidatedRun;
  const episode = { id: "ep_1", runId: "run_original", seed: 77 } as unknown as EpisodeRecord;
  const spec = { seed: 77 };

  it("keeps the original's idle end", () => {
    const shape = replayRunShape(validated, { plan: { ...plan, idle_end_s: 5 } }, episode, spec, 2);
    assert.equal(shape.plan.idle_end_s, 5);
    assert.deepEqual(shape.plan.replay_of, { run_id: "run_original", episode_id: "ep_1" });
    assert.equal(shape.episodes.length, 2);
  });

  it("has none when the original was planned before the idle end existed (it ran to max_duration_s)", () => {
    const { idle_end_s: _none, ...before } = plan;
    const shape = replayRunShape(validated, { plan: before }, episode, spec, 1);
    assert.equal("idle_end_s" in shape.plan, false);
    assert.equal(shape.plan.max_duration_s, 20);
  });
});
