import assert from "node:assert/strict";
import { AssayError } from "../../coordinator/errors/assay-error.js";
import { parseScenarios, sourceText } from "../../coordinator/kinds/scenarios.js";
import { refMatches } from "../../coordinator/kinds/gates.js";

const TASK_OBJECTS = { cube: "cube" };

function rejects(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => error instanceof AssayError && error.code === "scenario_format_invalid" && pattern.test(error.message));
}

describe("verify scenario formats", () => {
  it("turns an Isaac Lab export into replay specs with the simulated outcome", () => {
    const source = JSON.stringify({ episodes: [{ success: false, objects: { cube: { pos: [0.24, 0.03, 0.015], quat: [Math.SQRT1_2, 0, 0, Math.SQRT1_2] } }, lighting: "dim" }] });
    const [scenario] = parseScenarios("isaac-lab-json", source, "tabletop@1", TASK_OBJECTS);
    assert.equal(scenario.simOutcome, "failure");
    assert.deepEqual((scenario.replaySpec.objects as any).cube, { object: "cube", pose: [0.24, 0.03, 0.015, 90] });
    assert.equal(scenario.replaySpec.lighting, "dim");
    assert.equal(scenario.replaySpec.environment, "tabletop@1");
  });

  it("reads MuJoCo keyframes, Gazebo SDF poses and layout replays, from JSON text or a data: URL", () => {
    const mujoco = { keyframes: [{ success: true, bodies: { cube: { pos: [0.2, 0, 0.015], quat: [1, 0, 0, 0] } } }] };
    const dataUrl = `data:application/json;base64,${Buffer.from(JSON.stringify(mujoco)).toString("base64")}`;
    assert.equal(parseScenarios("mujoco-keyframes-json", dataUrl, "tabletop@1", TASK_OBJECTS)[0].simOutcome, "success");
    const gazebo = { worlds: [{ result: "failure", models: [{ name: "cube", pose: "0.21 -0.02 0.015 0 0 1.5707963" }, { name: "mug", pose: "0.3 0.1 0 0 0 0" }] }] };
    const [g] = parseScenarios("gazebo-sdf-poses", JSON.stringify(gazebo), "tabletop@1", TASK_OBJECTS);
    assert.deepEqual((g.replaySpec.objects as any).cube.pose, [0.21, -0.02, 0.015, 90]);
    assert.deepEqual((g.replaySpec.distractor_objects as any[]).map((d) => d.object), ["mug"]);
    const replay = [{ replay_spec: { objects: { cube: { object: "cube", pose: [0.22, 0, 0.015, 0] } }, lighting: "nominal" }, sim_outcome: "success" }];
    assert.equal(parseScenarios("layout-replay", `data:application/json,${encodeURIComponent(JSON.stringify(replay))}`, "tabletop@1", TASK_OBJECTS).length, 1);
    assert.equal(sourceText("plain"), "plain");
  });

  it("answers scenario_format_invalid for an unknown format, bad JSON or a shape no format has", () => {
    rejects(() => parseScenarios("usd", "{}", "tabletop@1", TASK_OBJECTS), /format must be one of/);
    rejects(() => parseScenarios("isaac-lab-json", "{not json", "tabletop@1", TASK_OBJECTS), /not JSON/);
    rejects(() => parseScenarios("isaac-lab-json", JSON.stringify({ keyframes: [] }), "tabletop@1", TASK_OBJECTS), /episodes must be an array/);
    rejects(() => parseScenarios("isaac-lab-json", JSON.stringify({ episodes: [{ success: true, objects: { mug: { pos: [0, 0, 0] } } }] }), "tabletop@1", TASK_OBJECTS), /no pose for the task's object "cube"/);
    rejects(() => parseScenarios("gazebo-sdf-poses", JSON.stringify({ worlds: [{ models: [{ name: "cube", pose: "1 2 3" }] }] }), "tabletop@1", TASK_OBJECTS), /SDF pose/);
  });
});

describe("gate ref patterns", () => {
  it("matches * within a path segment and ** across segments", () => {
    assert.ok(refMatches("refs/heads/main", "refs/heads/main"));
    assert.ok(!refMatches("refs/heads/main", "refs/heads/main2"));
    assert.ok(refMatches("refs/tags/v*", "refs/tags/v1.2.0"));
    assert.ok(!refMatches("refs/heads/*", "refs/heads/feature/x"));
    assert.ok(refMatches("refs/heads/**", "refs/heads/feature/x"));
    assert.ok(refMatches("refs/**/x", "refs/heads/feature/x"));
    assert.ok(refMatches("refs/heads/**", "refs/heads/"));
    assert.ok(!refMatches("refs/heads/v*.0", "refs/heads/v1.2"));
  });

  it("agrees with the glob's regular-expression reading on seeded random patterns and refs", () => {
    // The reading the matcher replaced (it backtracks, so it is only a reference here, on short inputs).
    const viaRegex = (pattern: string, ref: string) => new RegExp(`^${pattern.split("**").map((part) => part.split("*").map((lit) => lit.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*")).join(".*")}$`).test(ref);
    let seed = 12345;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const pick = (alphabet: string[], length: number) => Array.from({ length }, () => alphabet[random(alphabet.length)]).join("");
    for (let i = 0; i < 3000; i++) {
      const pattern = pick(["a", "b", "/", "*", "**", "."], 1 + random(7));
      const ref = pick(["a", "b", "/", "."], random(9));
      assert.equal(refMatches(pattern, ref), viaRegex(pattern, ref), `${pattern} vs ${ref}`);
    }
  });

  it("matches a pattern made to backtrack in linear time", () => {
    const started = performance.now();
    for (const wildcards of [10, 12, 40]) {
      const pattern = `refs/${"*a".repeat(wildcards)}x`;
      assert.equal(refMatches(pattern, `refs/${"a".repeat(200)}`), false);
    }
    // The backtracking regex took 2 s for 10 wildcards on 30 characters; this is microseconds.
    assert.ok(performance.now() - started < 200, `${(performance.now() - started).toFixed(1)} ms`);
  });
});
