/**
 * A run sized with auto(ci, moe) at a confidence other than 95% runs the episodes the sizing asks
 * for, and its Result carries the model-level interval at that confidence beside `ci95`
 * (docs/statistics.md, "Sizing a run").
 */
import assert from "node:assert/strict";
import { betaBinomialRate } from "../../coordinator/stats/beta-binomial-rate.js";
import { wilsonSampleSize } from "../../coordinator/stats/wilson.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { README_RUN_BODY } from "../fixtures.js";
import { runEnd, type TestService } from "./helpers.js";

describe("run sizing on a simulated fleet", function () {
  this.timeout(240_000);
  let service: TestService;

  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  it("runs the episodes auto(ci=0.8, moe=0.3) sizes and reports the 80% interval beside ci95", async () => {
    const created = await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: "auto(ci=0.8, moe=0.3)" } });
    assert.equal(created.status, 201, await created.clone().text());
    const { run } = await runEnd(service, ((await created.json()) as { id: string }).id, { deadlineMs: 180_000 });
    assert.equal(run.status, "completed");
    const result = run.result as {
      n: number; success_rate: number; ci95: [number, number]; interval_method: string; cells: { by_cell: Array<{ successes: number; n: number }> };
      ci_requested: { ci: number; interval: [number, number]; interval_method: string };
    };
    assert.equal(result.n, wilsonSampleSize(0.8, 0.3));
    // Both intervals are the model-level ones over the cells that ran the episodes (one cell too).
    const cells = result.cells.by_cell.map((c) => ({ k: c.successes, n: c.n }));
    assert.equal(cells.reduce((sum, c) => sum + c.n, 0), result.n);
    assert.deepEqual(result.ci95, betaBinomialRate(cells, { ci: 0.95 }).ci);
    assert.deepEqual(result.ci_requested, { ci: 0.8, interval: betaBinomialRate(cells, { ci: 0.8 }).ci, interval_method: "beta-binomial-posterior" });
    assert.ok(result.ci_requested.interval[0] >= result.ci95[0] && result.ci_requested.interval[1] <= result.ci95[1], "the 80% interval lies inside the 95% one");
  });
});
