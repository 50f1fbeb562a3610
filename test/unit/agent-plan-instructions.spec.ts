/**
 * Held-out instructions in the agent's episode plan: in the default "sampled" mode a held-out
 * paraphrase is never drawn; in "held_out" mode (task_json `instruction_set`) only held-out ones are,
 * and the set is recorded in /meta and the replay spec.
 */
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { parseAssignment } from "../../cell-agent/episode/assignment.js";
import { realizeEpisodePlan } from "../../cell-agent/episode/plan.js";

const catalogTask = JSON.parse(readFileSync(new URL("../../coordinator/catalog/tasks/pick-cube-v1.json", import.meta.url), "utf8"));
const task = {
  ...catalogTask,
  instructions: {
    sampled_per_episode: ["pick up the red cube", "lift the red cube off the table"],
    held_out: ["raise the crimson block above the table", "hoist the scarlet cube"],
  },
};

function planner(extra: Record<string, unknown>) {
  const a = parseAssignment({
    episodeId: "ep", runId: "run", index: 0, attempt: 1, of: 1, robot: "so101@3.11", environment: "tabletop@1",
    taskJson: JSON.stringify({ ...task, ...extra }), policyJson: "{}", perturbationJson: "{}", seed: 0, controlRateHz: 10, maxDurationS: 5, idleEndS: 0, replaySpecJson: "",
  });
  return (seed: number, replaySpec?: Record<string, unknown>) =>
    realizeEpisodePlan({ task: a.task, perturbation: a.perturbation, seed, dof: 6, environment: "tabletop@1", replaySpec });
}

describe("agent plan: instruction sets", () => {
  it("never picks a held-out instruction in sampled mode (default and explicit), across many seeds", () => {
    for (const extra of [{}, { instruction_set: "sampled" }]) {
      const plan = planner(extra);
      const seen = new Set<string>();
      for (let seed = 0; seed < 2000; seed++) {
        const p = plan(seed * 7919 + 13);
        seen.add(p.instruction!);
        assert.equal(p.realized.instruction_set, "sampled");
        assert.equal(p.replaySpec.instruction_set, "sampled");
      }
      assert.deepEqual([...seen].sort(), [...task.instructions.sampled_per_episode].sort());
    }
  });

  it("picks only held-out instructions in held_out mode, and records the set", () => {
    const plan = planner({ instruction_set: "held_out" });
    const seen = new Set<string>();
    for (let seed = 0; seed < 2000; seed++) {
      const p = plan(seed * 7919 + 13);
      seen.add(p.instruction!);
      assert.equal(p.realized.instruction, p.instruction);
      assert.equal(p.realized.instruction_set, "held_out");
      assert.equal(p.replaySpec.instruction, p.instruction);
      assert.equal(p.replaySpec.instruction_set, "held_out");
    }
    assert.deepEqual([...seen].sort(), [...task.instructions.held_out].sort());
  });

  it("draws the same instruction for the same seed, and a replay keeps instruction and set", () => {
    const plan = planner({ instruction_set: "held_out" });
    assert.equal(plan(5).instruction, plan(5).instruction);
    const original = plan(5);
    const replayed = planner({})(99, original.replaySpec as unknown as Record<string, unknown>);
    assert.equal(replayed.instruction, original.instruction);
    assert.equal(replayed.realized.instruction_set, "held_out");
  });

  it("rejects an unknown instruction_set at the assignment boundary", () => {
    assert.throws(() => planner({ instruction_set: "everything" }), /instruction_set must be "sampled" or "held_out"; got "everything"/);
  });
});
