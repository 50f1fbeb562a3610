import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { parseAssignment } from "../../cell-agent/episode/assignment.js";
import { realizeEpisodePlan } from "../../cell-agent/episode/plan.js";
import { DISTRACTOR_CLEARANCE_M } from "../../cell-agent/episode/perturbation-sets.js";

const taskJson = readFileSync(new URL("../../coordinator/catalog/tasks/pick-cube-v1.json", import.meta.url), "utf8");
const assignment = parseAssignment({
  episodeId: "ep", runId: "run", index: 0, attempt: 1, of: 1, robot: "so101@3.11", environment: "tabletop@1", taskJson, policyJson: "{}",
  perturbationJson: JSON.stringify({ layout_jitter_mm: 10, lighting: ["nominal", "dim", "bright"], distractors: "color-blocks@1", seed: 3 }),
  seed: 0, controlRateHz: 10, maxDurationS: 5, idleEndS: 0, replaySpecJson: "",
});
const plan = (seed: number, replaySpec?: Record<string, unknown>) =>
  realizeEpisodePlan({ task: assignment.task, perturbation: assignment.perturbation, seed, dof: 6, environment: "tabletop@1", replaySpec });

describe("agent episode plan", () => {
  it("is the same plan for the same seed and a different one for another seed", () => {
    assert.deepEqual(plan(42), plan(42));
    assert.notDeepEqual(plan(42).reset.objects, plan(43).reset.objects);
  });

  it("keeps the cube within randomize + jitter of its nominal pose, and homes to zeros", () => {
    for (let seed = 0; seed < 200; seed++) {
      const p = plan(seed);
      const [x, y, z] = p.reset.objects.cube.positionM;
      assert.ok(Math.abs(x - 0.22) <= 0.030 + 0.010 + 1e-9, `x ${x}`);
      assert.ok(Math.abs(y - 0.0) <= 0.050 + 0.010 + 1e-9, `y ${y}`);
      assert.equal(z, 0.015);
      assert.ok(Math.abs(p.reset.objects.cube.yawRad) <= (40 * Math.PI) / 180 + 1e-9);
      assert.deepEqual(p.reset.homeRad, [0, 0, 0, 0, 0, 0]);
    }
  });

  it("never samples a held-out instruction", () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 300; seed++) seen.add(plan(seed).instruction!);
    assert.ok(!seen.has("raise the crimson block above the table"));
    assert.deepEqual([...seen].sort(), [...assignment.task.instructions.sampledPerEpisode].sort());
  });

  it("places 2..3 color blocks at least 6 cm from the cube, and picks lighting from the list", () => {
    for (let seed = 0; seed < 100; seed++) {
      const p = plan(seed);
      const placed = p.reset.distractors.length + p.realized.distractors_unplaced.length;
      assert.ok(placed >= 2 && placed <= 3, `count ${placed}`);
      const [cx, cy] = p.reset.objects.cube.positionM;
      for (const d of p.reset.distractors) {
        assert.match(d.object, /^block-(blue|green|yellow)$/);
        assert.ok(Math.hypot(d.positionM[0] - cx, d.positionM[1] - cy) >= DISTRACTOR_CLEARANCE_M - 1e-6);
      }
      assert.ok(["nominal", "dim", "bright"].includes(p.reset.lighting));
    }
  });

  it("records a replay spec that reproduces the plan exactly", () => {
    const original = plan(7);
    assert.equal(original.replaySpec.layout_seed, 7);
    assert.equal(original.replaySpec.perturbation_rev, "assay-perturb@1");
    assert.equal(original.replaySpec.distractors, "color-blocks@1");
    const replayed = plan(999, JSON.parse(JSON.stringify(original.replaySpec)));
    assert.deepEqual(replayed.reset, original.reset);
    assert.equal(replayed.instruction, original.instruction);
    assert.deepEqual(replayed.replaySpec, original.replaySpec);
    assert.equal(replayed.realized.replayed, true);
  });
});
