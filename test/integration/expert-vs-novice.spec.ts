/**
 * The reference policies' skill shows through the real API on a simulated fleet: pick-cube@v1 on
 * so101@3.11 cells (the suite's shared fleet: this file only submits runs and reads results), lighting
 * variation and office clutter, the expert against the novice. The expert must be better with 95%
 * confidence: its Wilson interval lies above the novice's, or the Newcombe interval of the difference
 * excludes 0.
 */
import assert from "node:assert/strict";
import { newcombeDifference } from "../../coordinator/stats/two-proportions.js";
import { wilsonInterval } from "../../coordinator/stats/wilson.js";
import { runEnd, type TestService } from "./helpers.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { README_RUN_BODY } from "../fixtures.js";
import { referenceOf } from "../support/beta-binomial-reference.js";

const EPISODES_PER_POLICY = 10;
/**
 * Lighting variation and red-ish office clutter: with contact physics a parallel gripper squares up
 * a rotated cube by itself, so the novice's ignored yaw costs little; what separates the policies
 * is perception (the novice's fixed colour rule fails in dim light and is dragged off by the red
 * mug and stapler). With color-blocks@1 the novice still picks ~80% (docs/simulation.md).
 */
const PERTURBATION = { layout_jitter_mm: 10, lighting: ["nominal", "dim", "bright", "warm"], distractors: "office-clutter@1", seed: 20251122 };

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

describe("expert beats novice on pick-cube@v1 (simulated fleet, real API)", function () {
  this.timeout(300_000);
  let service: TestService;
  useSharedFleet(["so101-b", "so101-c"], (shared) => (service = shared));

  it("the expert's success rate is higher, with a 95% interval to show it", async () => {
    const submit = async (image: string) => {
      const body = { ...README_RUN_BODY, episodes: EPISODES_PER_POLICY, perturbation: PERTURBATION, policy: { ...README_RUN_BODY.policy, image } };
      const response = await service.api("/v1/runs", { method: "POST", json: body });
      assert.equal(response.status, 201, await response.clone().text());
      return ((await response.json()) as { id: string }).id;
    };
    // Both runs queue at once and share the cells; the fixed perturbation seed gives both policies the
    // same episode seeds (the same initial conditions), and a simulated episode is deterministic for
    // its replay spec (the world is reseeded from it, whichever cell runs it), so the outcome of this
    // test is too.
    const ids = [await submit("assay/ref-policy:expert"), await submit("assay/ref-policy:novice")];
    const [expert, novice] = await Promise.all(ids.map(async (id) => (await runEnd(service, id, { deadlineMs: 280_000 })).run));
    for (const run of [expert, novice]) assert.equal(run.status, "completed", JSON.stringify(run.status_detail ?? run.status));

    const count = (run: Record<string, any>) => Math.round(run.result.success_rate * run.result.n);
    const k1 = count(expert), n1 = expert.result.n;
    const k2 = count(novice), n2 = novice.result.n;
    const w1 = wilsonInterval(k1, n1, 0.95);
    const w2 = wilsonInterval(k2, n2, 0.95);
    const diff = newcombeDifference(k1, n1, k2, n2, 0.95);
    console.log(`      expert ${k1}/${n1} = ${pct(k1 / n1)} (Wilson 95% ${pct(w1[0])}..${pct(w1[1])}); failure clusters ${JSON.stringify(expert.result.failure_clusters)}`);
    console.log(`      novice ${k2}/${n2} = ${pct(k2 / n2)} (Wilson 95% ${pct(w2[0])}..${pct(w2[1])}); failure clusters ${JSON.stringify(novice.result.failure_clusters)}`);
    console.log(`      difference ${pct(diff.diff)} (Newcombe 95% ${pct(diff.ci[0])}..${pct(diff.ci[1])})`);
    // Each run's own result carries the model-level interval over its cells, checked here against an
    // independent computation of the beta-binomial posterior (test/support/beta-binomial-reference.ts) to
    // 0.001, and, for these cells alone, the Wilson interval when the cells ran as many episodes each.
    for (const run of [expert, novice]) {
      const cells = run.result.cells.by_cell.map((c: any) => ({ k: c.successes, n: c.n }));
      const k = cells.reduce((sum: number, c: { k: number }) => sum + c.k, 0);
      const n = cells.reduce((sum: number, c: { n: number }) => sum + c.n, 0);
      assert.equal(run.result.interval_method, "beta-binomial-posterior");
      const reference = referenceOf(cells).ci;
      if (k > 0) assert.ok(Math.abs(run.result.ci95[0] - reference[0]) <= 0.001, `lower ${run.result.ci95[0]} vs ${reference[0]} for ${JSON.stringify(cells)}`);
      else assert.equal(run.result.ci95[0], 0);
      if (k < n) assert.ok(Math.abs(run.result.ci95[1] - reference[1]) <= 0.001, `upper ${run.result.ci95[1]} vs ${reference[1]} for ${JSON.stringify(cells)}`);
      else assert.equal(run.result.ci95[1], 1);
      console.log(`      ${run === expert ? "expert" : "novice"} cells ${cells.map((c: { k: number; n: number }) => `${c.k}/${c.n}`).join(", ")}: model-level ${pct(run.result.ci95[0])}..${pct(run.result.ci95[1])} `
        + `(independent ${pct(reference[0])}..${pct(reference[1])}); these cells ${pct(run.result.cells.these_cells.ci95[0])}..${pct(run.result.cells.these_cells.ci95[1])}`);
      if (cells.every((c: { n: number }) => c.n === cells[0].n)) {
        assert.deepEqual(run.result.cells.ci95_these_cells.map((x: number) => x.toFixed(6)), wilsonInterval(k, n, 0.95).map((x) => x.toFixed(6)));
      }
    }
    assert.ok(w1[0] > w2[1] || diff.ci[0] > 0, "the expert is better with 95% confidence");
  });
});
