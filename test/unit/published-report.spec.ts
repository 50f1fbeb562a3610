import assert from "node:assert/strict";
import { publishedReport } from "../../coordinator/reports/published-report.js";
import type { Report } from "../../coordinator/reports/report.js";

describe("published reports: no internal identifiers for anonymous readers", () => {
  const report = {
    object: "report", run_id: "run_Pub1", kind: "verification", run_kind: "run",
    result: { n: 4, success_rate: 0.5, ci95: [0.1, 0.9], interval_method: "beta-binomial-posterior" },
    resolved_pins: {
      robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1",
      models: { "acme/hold-pose": { id: "mdl_Secret123", sha256: "ab".repeat(32), bytes: 1234, source: "upload" } },
    },
    cells: { by_cell: [{ cell: "so101-b", n: 2, successes: 1, success_rate: 0.5 }, { cell: "so101-c", n: 2, successes: 1, success_rate: 0.5 }] },
    cost: { robot_hours: 0.1, environment_hours: 0.1, cost_usd: 2 },
  } as unknown as Report;

  it("numbers cells and uploaded models, keeps the sha256 that pins the model, and drops the cost", () => {
    const published = publishedReport(report);
    const text = JSON.stringify(published);
    for (const internal of ["so101-b", "so101-c", "mdl_Secret123", "cost_usd"]) assert.ok(!text.includes(internal), `${internal} in ${text}`);
    assert.deepEqual(published.cells.by_cell.map((c) => c.cell), ["cell 1", "cell 2"]);
    const models = (published.resolved_pins as { models: Record<string, { id: string; sha256: string }> }).models;
    assert.equal(models["acme/hold-pose"]!.id, "model 1");
    assert.equal(models["acme/hold-pose"]!.sha256, "ab".repeat(32));
    // The owner's own report is untouched.
    assert.match(JSON.stringify(report), /mdl_Secret123/);
  });
});
