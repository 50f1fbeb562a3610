/**
 * A run sized with auto(ci, moe) at a confidence other than 95% runs the episodes the sizing asks
 * for, and its Result carries the Wilson interval at that confidence beside `ci95`
 * (docs/statistics.md, "Sizing a run").
 */
import assert from "node:assert/strict";
import { clusteredRateInterval } from "../../coordinator/stats/clustered-rate.js";
import { wilsonInterval, wilsonSampleSize } from "../../coordinator/stats/wilson.js";
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
    // Both intervals are the model-level ones over the cells that ran the episodes (Wilson on one cell).
    const cells = result.cells.by_cell.map((c) => ({ k: c.successes, n: c.n }));
    assert.equal(cells.reduce((sum, c) => sum + c.n, 0), result.n);
    assert.deepEqual(result.ci95, clusteredRateInterval(cells, 0.95).ci);
    assert.deepEqual(result.ci_requested, { ci: 0.8, interval: clusteredRateInterval(cells, 0.8).ci, interval_method: result.interval_method });
    if (cells.length === 1) assert.deepEqual(result.ci_requested.interval, wilsonInterval(cells[0].k, result.n, 0.8));
  });
});
