/**
 * Kinds `matrix` and `transfer` end to end on the simulated fleet (so101@3.10 in so101-a,
 * so101@3.11 in so101-b): per-cell Results, regression detection against the previous matrix with
 * a `regression.detected` webhook, and the transfer gap with the source measured in the run or
 * taken from an earlier run.
 */
import assert from "node:assert/strict";
import { runEnd, startTestService, type TestService } from "./helpers.js";
import { startReceiver, type Receiver } from "./webhook-receiver.js";

const policy = (image: string) => ({
  type: "container",
  image,
  action_space: { type: "joint_position", dim: 6 },
  observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] },
});
// office-clutter@1 at this seed is hard for the novice (deterministic simulation), so the second matrix regresses.
const PERTURBATION = { layout_jitter_mm: 10, lighting: ["nominal", "dim", "bright", "warm"], distractors: "office-clutter@1", seed: 99 };

async function submitAndWait(service: TestService, body: object): Promise<Record<string, any>> {
  const created = await service.api("/v1/runs", { method: "POST", json: body });
  assert.equal(created.status, 201, await created.clone().text());
  const run = (await created.json()) as Record<string, any>;
  const { run: done } = await runEnd(service, run.id);
  assert.equal(done.status, "completed", JSON.stringify(done.status_detail));
  return done;
}

describe("kinds matrix and transfer on a simulated fleet", function () {
  this.timeout(400_000);
  let service: TestService;
  let receiver: Receiver;

  before(async () => {
    service = await startTestService({ cells: ["so101-a", "so101-b"] });
    receiver = await startReceiver(() => 200);
    const hook = await service.api("/v1/webhooks", { method: "POST", json: { url: receiver.url, events: ["regression.detected"] } });
    assert.equal(hook.status, 201);
  });

  after(async () => {
    await service?.stop();
    await receiver?.close();
  });

  const MATRIX = {
    kind: "matrix", robots: ["so101@3.10", "so101@3.11"], environments: ["tabletop@1"], task: "pick-cube@v1",
    // Five episodes a cell prove what ten did: every unit's n is the count asked for, and a novice that fails
    // (nearly) every episode where the expert succeeded regresses under the drift rule even Holm-adjusted over
    // the two cells (5/5 then 1/5, or 4/5 then 0/5, has adjusted p <= 0.03). Not three: 3/3 then 0/3 is flagged
    // (Holm-adjusted p 0.0201), but one episode turned either way is not, and an episode's outcome is a claim
    // about the simulation this test should not rest on. The episodes take 8-9 simulated s each.
    episodes_per_cell: 5, perturbation: PERTURBATION,
  };

  it("runs every robot x environment cell, then flags the cells that regressed against the previous matrix", async () => {
    const first = await submitAndWait(service, { ...MATRIX, policy: policy("assay/ref-policy:expert") });
    assert.equal(first.result.units.length, 2);
    assert.deepEqual(first.result.units.map((u: any) => u.key), ["so101@3.10/tabletop@1", "so101@3.11/tabletop@1"]);
    for (const unit of first.result.units) assert.equal(unit.result.n, MATRIX.episodes_per_cell);
    // A matrix pools no cells: the top level is its first cell.
    assert.deepEqual(first.result.population.units, ["so101@3.10/tabletop@1"]);
    assert.equal(first.result.n, MATRIX.episodes_per_cell);
    assert.equal(first.result.baseline_run_id, null);
    assert.deepEqual(first.result.regressions, []);
    assert.deepEqual(first.resolved_pins.robots, ["so101@3.10", "so101@3.11"]);

    const second = await submitAndWait(service, { ...MATRIX, policy: policy("assay/ref-policy:novice") });
    assert.equal(second.result.baseline_run_id, first.id);
    assert.equal(second.result.cells_compared.length, 2);
    assert.ok(second.result.regressions.length >= 1, JSON.stringify(second.result.cells_compared));
    for (const r of second.result.regressions) {
      assert.equal(r.regressed, true);
      assert.ok(r.p_value <= r.alpha);
      assert.ok(r.current.success_rate < r.prior.success_rate);
    }
    const received = await receiver.waitFor((list) => list.some((r) => JSON.parse(r.rawBody).data.run_id === second.id));
    const event = JSON.parse(received.find((r) => JSON.parse(r.rawBody).data.run_id === second.id)!.rawBody);
    assert.equal(event.type, "regression.detected");
    assert.equal(event.data.source, "matrix");
    assert.equal(event.data.baseline_run_id, first.id);
    assert.equal(event.data.regressions.length, second.result.regressions.length);
  });

  it("rejects a matrix cell with no installed robot, before anything runs", async () => {
    const response = await service.api("/v1/runs", { method: "POST", json: { ...MATRIX, environments: ["tabletop@1", "kitchen-replica@2"], policy: policy("assay/ref-policy:expert") } });
    assert.equal(response.status, 422);
    const body = (await response.json()) as any;
    assert.equal(body.error.code, "environment_unavailable");
    assert.match(body.error.message, /kitchen-replica@2/);
  });

  it("measures the transfer gap, running the source too when no earlier source run exists", async () => {
    // Two pairs, one source episode (were three and two): each count below is checked exactly and the gap's intervals
    // are defined at any n; the source run's count differs from the target's, so the second gap's source.n can only be
    // that run's.
    const TRANSFER = { kind: "transfer", source: "so101@3.10", target: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", episodes: 2, policy: policy("assay/ref-policy:expert"), perturbation: PERTURBATION };
    const first = await submitAndWait(service, TRANSFER);
    assert.deepEqual(first.result.units.map((u: any) => u.role), ["target", "source"]);
    const gap = first.result.gap;
    assert.equal(gap.source.measured_here, true);
    assert.equal(gap.source.run_id, first.id);
    assert.equal(gap.target.n, TRANSFER.episodes);
    assert.deepEqual(first.result.population.units, ["target"]);
    assert.equal(first.result.n, TRANSFER.episodes);
    assert.equal(gap.source.n, TRANSFER.episodes);
    // The gap's headline is the model-level difference (each side on its own cells: different robots, so different cells).
    assert.equal(gap.claim, "model");
    assert.equal(gap.method, "beta-binomial-posterior-difference");
    assert.ok(gap.ci[0] <= gap.diff && gap.diff <= gap.ci[1]);
    assert.ok(gap.probability_a_greater >= 0 && gap.probability_a_greater <= 1);
    // Beside it the claim about these cells: target and source episode i share a seed, so the paired interval over the seed pairs.
    assert.equal(gap.these_cells.claim, "these_cells");
    assert.ok(Math.abs(gap.these_cells.diff - (gap.target.success_rate - gap.source.success_rate)) < 1e-9);
    assert.ok(gap.these_cells.ci[0] <= gap.these_cells.diff && gap.these_cells.diff <= gap.these_cells.ci[1]);
    assert.equal(gap.these_cells.method, "newcombe-paired");
    assert.equal(gap.paired, true);
    assert.equal(gap.matched, true);
    assert.equal(gap.pairs, TRANSFER.episodes);

    // A plain run of the same policy on the source pin becomes the source figure of the next transfer.
    const SOURCE_EPISODES = 1;
    const sourceRun = await submitAndWait(service, { robot: "so101@3.10", environment: "tabletop@1", task: "pick-cube@v1", episodes: SOURCE_EPISODES, policy: policy("assay/ref-policy:expert") });
    const second = await submitAndWait(service, { ...TRANSFER, target: { robot: "so101@3.11" } });
    assert.deepEqual(second.result.units.map((u: any) => u.role), ["target"]);
    assert.equal(second.result.gap.source.run_id, sourceRun.id);
    assert.equal(second.result.gap.source.measured_here, false);
    assert.equal(second.result.gap.source.n, SOURCE_EPISODES);
    // An earlier run's episodes are not matched to these: the unpaired intervals (model-level from both runs' cells, and
    // Newcombe's for these cells), and the result says so.
    assert.equal(second.result.gap.method, "beta-binomial-posterior-difference");
    assert.equal(second.result.gap.these_cells.method, "newcombe-hybrid-score");
    assert.equal(second.result.gap.matched, false);
    assert.match(second.result.gap.note, new RegExp(`${sourceRun.id}: its episodes are not matched`));
  });
});
