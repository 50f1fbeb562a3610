import assert from "node:assert/strict";
import { planAssignments, type AvailableCell, type SchedulableRun } from "../../coordinator/scheduler/assignment-plan.js";

function run(id: string, priority: string, created: string, pending: number, pin = { model: "so101", firmware: "3.11", environment: "tabletop@1" }): SchedulableRun {
  return { id, priority, created, ...pin, pendingEpisodeIds: Array.from({ length: pending }, (_, i) => `${id}_${i}`) };
}

function cell(cellId: string, firmware = "3.11", model = "so101", environment = "tabletop@1"): AvailableCell {
  return { cellId, model, firmware, environment };
}

describe("scheduler assignment plan", () => {
  it("spreads a run's episodes over every matching cell, lowest index first", () => {
    const plan = planAssignments([run("r1", "standard", "2026-01-01T00:00:00Z", 5)], [cell("so101-d"), cell("so101-b"), cell("so101-c")]);
    assert.deepEqual(plan, [
      { runId: "r1", episodeId: "r1_0", cellId: "so101-b" },
      { runId: "r1", episodeId: "r1_1", cellId: "so101-c" },
      { runId: "r1", episodeId: "r1_2", cellId: "so101-d" },
    ]);
  });

  it("gives a container policy's episodes to the cells that list its image first, then to the others", () => {
    const listing = (id: string): AvailableCell => ({ ...cell(id), images: ["ghcr.io/acme/picker:3"] });
    const container = { ...run("r1", "standard", "2026-01-01T00:00:00Z", 3), image: "ghcr.io/acme/picker:3" };
    assert.deepEqual(planAssignments([container], [cell("so101-a"), listing("so101-c"), cell("so101-b")]).map((p) => p.cellId), ["so101-c", "so101-a", "so101-b"]);
    // A multi-unit pin carries the image the same way.
    const multi = { ...run("r2", "standard", "2026-01-01T00:00:00Z", 1), episodePins: { r2_0: { model: "so101", firmware: "3.11", environment: "tabletop@1", image: "ghcr.io/acme/picker:3" } } };
    assert.deepEqual(planAssignments([multi], [cell("so101-a"), listing("so101-z")]).map((p) => p.cellId), ["so101-z"]);
    // Without an image, the lowest cell id as before.
    assert.deepEqual(planAssignments([run("r3", "standard", "2026-01-01T00:00:00Z", 1)], [listing("so101-c"), cell("so101-a")]).map((p) => p.cellId), ["so101-a"]);
  });

  it("only matches cells with the plan's model, firmware and environment", () => {
    const cells = [cell("so101-a", "3.10"), cell("fr3-a", "5.9.0", "fr3"), cell("so101-x", "3.11", "so101", "kitchen-replica@2"), cell("so101-b")];
    const plan = planAssignments([run("r1", "standard", "2026-01-01T00:00:00Z", 4)], cells);
    assert.deepEqual(plan, [{ runId: "r1", episodeId: "r1_0", cellId: "so101-b" }]);
  });

  it("serves burst before standard before soak, then the oldest run first", () => {
    const runs = [
      run("soak", "soak", "2026-01-01T00:00:00Z", 3),
      run("std-new", "standard", "2026-01-03T00:00:00Z", 3),
      run("std-old", "standard", "2026-01-02T00:00:00Z", 1),
      run("burst", "burst", "2026-01-04T00:00:00Z", 1),
    ];
    const plan = planAssignments(runs, [cell("c1"), cell("c2"), cell("c3"), cell("c4"), cell("c5")]);
    assert.deepEqual(plan.map((p) => [p.runId, p.cellId]), [
      ["burst", "c1"], ["std-old", "c2"], ["std-new", "c3"], ["std-new", "c4"], ["std-new", "c5"],
    ]);
  });

  it("gives a lower-priority run the cells a higher one cannot use", () => {
    const runs = [run("burst-fr3", "burst", "2026-01-01T00:00:00Z", 5, { model: "fr3", firmware: "5.9.0", environment: "tabletop@1" }), run("soak", "soak", "2026-01-02T00:00:00Z", 5)];
    const plan = planAssignments(runs, [cell("fr3-a", "5.9.0", "fr3"), cell("so101-b")]);
    assert.deepEqual(plan.map((p) => [p.runId, p.cellId]), [["burst-fr3", "fr3-a"], ["soak", "so101-b"]]);
  });

  it("assigns nothing without idle cells or pending episodes", () => {
    assert.deepEqual(planAssignments([run("r1", "standard", "2026-01-01T00:00:00Z", 3)], []), []);
    assert.deepEqual(planAssignments([run("r1", "standard", "2026-01-01T00:00:00Z", 0)], [cell("c1")]), []);
  });
});
