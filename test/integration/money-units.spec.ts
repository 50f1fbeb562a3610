/**
 * Money of mixed-tier runs end to end on the simulated fleet (so101-b: so101 soak tier, fr3-a: fr3
 * verify tier, both in tabletop@1): quotes priced per unit, and a run over both tiers whose Result
 * cost is the sum of its units' costs and equals the month's usage delta, split by tier.
 *
 * The run is a threshold (soak on so101, confirmation on fr3): a matrix over so101 and fr3 cannot
 * share one container or checkpoint policy (the action space, and a model's output, must match each
 * robot's 6 and 8 joints), so the mixed matrix is quoted with an endpoint policy that declares no
 * action space; a quote prices the body and never contacts the endpoint (a submission would pre-flight it).
 */
import assert from "node:assert/strict";
import { roundCents, roundHours } from "../../coordinator/runs/meters.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, type TestService } from "./helpers.js";

type Json = Record<string, any>;

const container = (dim: number) => ({
  type: "container",
  image: "assay/ref-policy:expert",
  action_space: { type: "joint_position", dim },
  observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] },
});

const THRESHOLD = {
  kind: "threshold",
  iterate_on: "so101@3.11",
  escalate_to: "fr3@5.9.0",
  environment: "tabletop@1",
  // 0.3, not kind-threshold's 0.5: the run must cross to the verify tier (both units priced), and at 0.3 two successes
  // in a row pass each phase's test (at 0.5, five), so it takes about four episodes, one at a time, not ten.
  target: { success_rate: 0.3, ci: 0.8, task: "pick-cube@v1" },
  policy: container(6),
  escalate_policy: container(8),
  monthly_cap_usd: 50,
  episodes: 30,
};

const MATRIX = {
  kind: "matrix",
  robots: ["so101@3.11", "fr3@5.9.0"],
  environments: ["tabletop@1"],
  task: "pick-cube@v1",
  episodes_per_cell: 10,
  policy: { type: "endpoint", url: "wss://policy.acme.test/act", latency_budget_ms: 100 },
};

describe("money of mixed-tier runs (integration)", function () {
  this.timeout(400_000);
  let service: TestService;

  const json = async (res: Response, status: number): Promise<Json> => {
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, JSON.stringify(body));
    return body;
  };

  // The fleet of kind-threshold.spec.ts and kind-verify.spec.ts: this file reads usage as a delta over its own run.
  useSharedFleet(["so101-b", "fr3-a"], (shared) => (service = shared));

  it("quotes a mixed-tier matrix per unit: n per unit, each at its own tier", async () => {
    const quote = await json(await service.api("/v1/quote", { method: "POST", json: MATRIX }), 200);
    assert.equal(quote.n, 20);
    assert.equal(quote.n_basis, "planned");
    const episodeS = quote.price.episode_estimate_s;
    assert.deepEqual(quote.units.map((u: Json) => [u.robot, u.n, u.tier, u.environment_class, u.robot_hour_usd]), [
      ["so101@3.11", 10, "soak", "standard", 18],
      ["fr3@5.9.0", 10, "verify", "standard", 65],
    ]);
    for (const unit of quote.units) {
      const hours = roundHours((unit.n * episodeS) / 3600);
      assert.equal(unit.robot_hours, hours);
      assert.equal(unit.cost_usd, roundCents(hours * (unit.robot_hour_usd + unit.environment_hour_usd)));
    }
    assert.equal(quote.cost_usd, roundCents(quote.units[0].cost_usd + quote.units[1].cost_usd));
    assert.equal(quote.price.tier, null);
    // Priced at the first unit's rates, it would have been far cheaper than the fr3 episodes cost.
    assert.ok(quote.cost_usd > roundCents(roundHours((20 * episodeS) / 3600) * 22));
  });

  it("a run over both tiers costs the sum of its units, and the month's usage grows by exactly that", async () => {
    const quote = await json(await service.api("/v1/quote", { method: "POST", json: THRESHOLD }), 200);
    assert.equal(quote.n_basis, "maximum"); // threshold makes episodes one at a time: quoted at 30 per phase
    assert.deepEqual(quote.units.map((u: Json) => [u.n, u.tier]), [[30, "soak"], [30, "verify"]]);

    const period = new Date().toISOString().slice(0, 7);
    const before = await json(await service.api(`/v1/usage?period=${period}`), 200);
    const created = await json(await service.api("/v1/runs", { method: "POST", json: { ...THRESHOLD, quote_id: quote.id } }), 201);
    const { run } = await runEnd(service, created.id);
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
    const [soak, verify] = run.result.units.map((u: Json) => u.result);
    assert.ok(soak.n >= 1 && verify.n >= 1, JSON.stringify(run.result.threshold));
    assert.ok(verify.cost_usd > 0 && soak.cost_usd > 0);

    // Each unit priced at its own tier (tabletop@1 is class standard, 4 $/h).
    assert.equal(soak.cost_usd, roundCents(soak.robot_hours * 18 + soak.environment_hours * 4));
    assert.equal(verify.cost_usd, roundCents(verify.robot_hours * 65 + verify.environment_hours * 4));
    assert.equal(run.result.cost_usd, roundCents(soak.cost_usd + verify.cost_usd));
    assert.equal(run.result.robot_hours, roundHours(soak.robot_hours + verify.robot_hours));
    assert.ok(run.result.cost_usd <= quote.cost_usd, "a quote at the planned maximum bounds what the run cost");

    const after = await json(await service.api(`/v1/usage?period=${period}`), 200);
    assert.equal(roundCents(after.usd_total - before.usd_total), run.result.cost_usd);
    assert.equal(roundHours(after.robot_hours.soak - before.robot_hours.soak), soak.robot_hours);
    assert.equal(roundHours(after.robot_hours.verify - before.robot_hours.verify), verify.robot_hours);
    assert.equal(roundHours(after.env_hours.standard - before.env_hours.standard), run.result.environment_hours);
  });
});
