import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import {
  canonicalFailureCluster, deriveFailureCluster, FAILURE_CLUSTERS, isKnownFailureCluster, LEGACY_FAILURE_CLUSTERS, storedNamesOf, type FailureTrace,
} from "../../protocol/failure-clusters.js";
import { pickedSteps } from "../../coordinator/artifacts/episode-series.js";
import { lastStageOf, stageFunnel } from "../../coordinator/runs/stage-funnel.js";

/** A pick-cube episode: its events, and how far along reached -> grasped -> lifted it got. */
function episode(events: string[], reachedStages: number, ending: FailureTrace["ending"] = "time"): FailureTrace {
  return {
    ending,
    events: events.map((name) => ({ name })),
    stages: ["reached", "grasped", "lifted"].map((name, i) => ({ name, reached: i < reachedStages })),
  };
}

describe("failure clusters (protocol/failure-clusters.ts)", () => {
  it("names each cluster from what happened in a synthetic episode", () => {
    const cases: Array<[string, FailureTrace]> = [
      ["policy_error", episode(["gripper_closed", "grasp_acquired"], 2, "policy_error")],
      ["safety_limit", episode(["contact_spike"], 1, "safety_limit")],
      ["collision", episode(["contact_spike", "gripper_closed"], 1)],
      ["dropped", episode(["gripper_closed", "grasp_acquired", "object_lifted", "grasp_lost"], 3)],
      ["missed_grasp", episode(["gripper_closed", "gripper_opened", "gripper_closed"], 1)],
      ["no_attempt", episode([], 0)],
      ["timeout_after_reached", episode([], 1)],
      ["timeout_after_grasped", episode(["gripper_closed", "grasp_acquired"], 2)],
      ["timeout_after_lifted", episode(["gripper_closed", "grasp_acquired", "object_lifted"], 3)],
      ["timeout", { ending: "time", events: [{ name: "gripper_closed" }, { name: "grasp_acquired" }], stages: [] }],
      // The idle end: the same rules, then named for standing idle instead of running out of time.
      ["missed_grasp", episode(["gripper_closed"], 1, "idle")],
      ["no_attempt", episode([], 0, "idle")],
      ["idle_after_reached", episode([], 1, "idle")],
      ["idle_after_grasped", episode(["gripper_closed", "grasp_acquired"], 2, "idle")],
      ["idle", { ending: "idle", events: [{ name: "gripper_closed" }, { name: "grasp_acquired" }], stages: [] }],
    ];
    for (const [want, trace] of cases) assert.equal(deriveFailureCluster(trace), want, JSON.stringify(trace));
  });

  it("names the issue's novice (grasped every time, never lost it) by the stage it stopped at, not a bare timeout", () => {
    assert.equal(deriveFailureCluster(episode(["gripper_closed", "grasp_acquired", "object_lifted"], 2)), "timeout_after_grasped");
  });

  it("turns a task's stage name into a safe part of the cluster name", () => {
    const trace = { ending: "time" as const, events: [], stages: [{ name: "Over The Bin!", reached: true }] };
    assert.equal(deriveFailureCluster(trace), "timeout_after_over_the_bin");
  });

  it("reads a legacy name as its current one, and filters by both", () => {
    assert.equal(canonicalFailureCluster("drop"), "dropped");
    assert.equal(canonicalFailureCluster("grasp_slip"), "grasp_slip");
    assert.equal(canonicalFailureCluster(null), null);
    assert.deepEqual(storedNamesOf("dropped").sort(), ["drop", "dropped"]);
    assert.deepEqual(storedNamesOf("collision"), ["collision"]);
    for (const current of Object.values(LEGACY_FAILURE_CLUSTERS)) assert.ok(isKnownFailureCluster(current), current);
    assert.ok(isKnownFailureCluster("timeout_after_grasped"));
    assert.ok(isKnownFailureCluster("idle_after_grasped"));
    assert.ok(isKnownFailureCluster("idle"));
    assert.ok(!isKnownFailureCluster("grasp_slip"));
  });

  it("docs/failures.md lists exactly the names of the table in code, and the legacy names", () => {
    const doc = readFileSync(new URL("../../docs/failures.md", import.meta.url), "utf8");
    const section = (heading: string) => doc.split(`## ${heading}`)[1]?.split("\n## ")[0] ?? "";
    const namesIn = (text: string) => [...text.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
    assert.deepEqual(namesIn(section("The clusters")), FAILURE_CLUSTERS.map((c) => c.name));
    assert.deepEqual(namesIn(section("Names of older recordings")), Object.keys(LEGACY_FAILURE_CLUSTERS));
  });
});

describe("stage funnel (coordinator/runs/stage-funnel.ts)", () => {
  const ep = (outcome: "success" | "failure", stages: Record<string, boolean> | null) => ({ outcome, meta: null, evaluation: stages ? { stages } : null });

  it("counts, per stage in task order, the episodes that reached it and the failures that stopped there", () => {
    const funnel = stageFunnel([
      ep("success", { reached: true, grasped: true, lifted: true }),
      ep("failure", { reached: true, grasped: true, lifted: false }),
      ep("failure", { reached: true, grasped: true, lifted: false }),
      ep("failure", { reached: true, grasped: false, lifted: false }),
      ep("failure", { reached: false, grasped: false, lifted: false }),
      ep("failure", null),
    ]);
    assert.deepEqual(funnel, [
      { stage: "reached", reached: 4, of: 5, stopped: 1 },
      { stage: "grasped", reached: 3, of: 5, stopped: 2 },
      { stage: "lifted", reached: 1, of: 5, stopped: 0 },
    ]);
  });

  it("counts an intervened success as the policy's failure where it stopped", () => {
    const helped = { outcome: "success", meta: { interventions: [{ t_s: 1, kind: "on_stall" }] }, evaluation: { stages: { reached: true, grasped: false } } };
    assert.deepEqual(stageFunnel([helped]).map((r) => r.stopped), [1, 0]);
  });

  it("is empty without stages, and the last stage is null when none was reached", () => {
    assert.deepEqual(stageFunnel([ep("failure", null)]), []);
    assert.equal(lastStageOf({ stages: { reached: false } }), null);
    assert.equal(lastStageOf({ stages: { reached: true, grasped: true, lifted: false } }), "grasped");
  });
});

describe("episode series downsampling", () => {
  it("keeps every step up to max_points, else max_points evenly spaced steps with both ends", () => {
    assert.equal(pickedSteps(50, 2000).size, 50);
    const picked = [...pickedSteps(10_000, 2000)];
    assert.equal(picked.length, 2000);
    assert.equal(picked[0], 0);
    assert.equal(picked.at(-1), 9_999);
  });
});
