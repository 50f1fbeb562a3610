/**
 * Kind `verify` end to end: simulator-flagged scenarios (an Isaac Lab export) reproduced exactly on
 * the verify-tier fr3 cell, plus audit episodes; sim-vs-real agreement and ground-truth pointers.
 */
import assert from "node:assert/strict";
import { readSse, startTestService, type TestService } from "./helpers.js";

const FR3_POLICY = {
  type: "container",
  image: "assay/ref-policy:expert",
  action_space: { type: "joint_position", dim: 8 },
  observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] },
};

const ISAAC = {
  episodes: [
    { success: true, objects: { cube: { pos: [0.22, 0.0, 0.015], quat: [1, 0, 0, 0] } } },
    { success: false, objects: { cube: { pos: [0.245, 0.04, 0.015], quat: [0.9659258, 0, 0, 0.2588190] } } },
    { success: true, objects: { cube: { pos: [0.2, -0.03, 0.015], quat: [1, 0, 0, 0] } }, lighting: "dim" },
  ],
};

describe("kind verify on a simulated fleet", function () {
  this.timeout(300_000);
  let service: TestService;

  before(async () => {
    service = await startTestService({ cells: ["fr3-a"] });
  });

  after(async () => {
    await service?.stop();
  });

  const VERIFY = {
    kind: "verify", robots: ["fr3@5.9.0"], environment: "tabletop@1", task: "pick-cube@v1", policy: FR3_POLICY,
    scenarios: { format: "isaac-lab-json", source: JSON.stringify(ISAAC), count: 3 }, audit_sample: 0.3, return_ground_truth: true,
  };

  it("reproduces every scenario exactly, runs audit episodes, and reports sim-vs-real agreement", async () => {
    const created = await service.api("/v1/runs", { method: "POST", json: VERIFY });
    assert.equal(created.status, 201, await created.clone().text());
    const run = (await created.json()) as Record<string, any>;
    const events = await service.api(`/v1/runs/${run.id}/events`);
    await readSse(events, (e) => e.event === "status" && ["completed", "failed", "stopped"].includes((e.data as any).status));
    const done = (await (await service.api(`/v1/runs/${run.id}`)).json()) as Record<string, any>;
    assert.equal(done.status, "completed", JSON.stringify(done.status_detail));
    const result = done.result;
    assert.equal(result.n, 4, "3 scenarios + ceil(0.3 x 3) = 1 audit episode");
    assert.equal(result.scenarios.length, 3);
    assert.deepEqual(result.scenarios.map((s: any) => s.sim_outcome), ["success", "failure", "success"]);
    for (const s of result.scenarios) assert.ok(["success", "failure"].includes(s.real_outcome));
    assert.equal(result.audit.n, 1);
    assert.equal(result.agreement.n, 3);
    assert.ok(result.agreement.agreement_rate >= 0 && result.agreement.agreement_rate <= 1);
    assert.deepEqual(result.ground_truth.channels.slice(0, 3), ["/gt/object_poses", "/joint_targets_commanded", "/joint_states_measured"]);

    // The cell reproduced each scenario's layout exactly (replay), including the yaw from the quaternion.
    const list = (await (await service.api(`/v1/runs/${run.id}/episodes`)).json()) as { data: any[] };
    const byId = new Map(list.data.map((e) => [e.id, e]));
    const second = byId.get(result.scenarios[1].episode_id);
    assert.deepEqual(second.replay_spec.objects.cube.pose, [0.245, 0.04, 0.015, 30]);
    assert.equal(byId.get(result.scenarios[2].episode_id).replay_spec.lighting, "dim");
  });

  it("answers 422 scenario_format_invalid for a source no format parses, and refuses soak-tier robots", async () => {
    const bad = await service.api("/v1/runs", { method: "POST", json: { ...VERIFY, scenarios: { format: "isaac-lab-json", source: "<xml/>", count: 1 } } });
    assert.equal(bad.status, 422);
    assert.equal(((await bad.json()) as any).error.code, "scenario_format_invalid");
    const soak = await service.api("/v1/runs", { method: "POST", json: { ...VERIFY, robots: ["so101@3.11"], policy: { ...FR3_POLICY, action_space: { type: "joint_position", dim: 6 } } } });
    assert.equal(soak.status, 422);
    assert.match(((await soak.json()) as any).error.message, /verification-tier/);
  });
});
