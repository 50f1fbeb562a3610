/**
 * Kind `verify` end to end: simulator-flagged scenarios (an Isaac Lab export) reproduced exactly on
 * the verify-tier fr3 cell, plus audit episodes; sim-vs-real agreement and the ground-truth files
 * derived from each scenario episode's MCAP.
 */
import assert from "node:assert/strict";
import { McapIndexedReader } from "@mcap/core";
import { loadMcapCompression } from "../../protocol/recording/mcap-compression.js";
import { useSharedFleet } from "../support/shared-fleet.js";
import { runEnd, type TestService } from "./helpers.js";

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

  // The fleet of kind-threshold.spec.ts and money-units.spec.ts: the verify runs go to fr3-a, the one fr3 cell.
  useSharedFleet(["so101-b", "fr3-a"], (shared) => (service = shared));

  const VERIFY = {
    kind: "verify", robots: ["fr3@5.9.0"], environment: "tabletop@1", task: "pick-cube@v1", policy: FR3_POLICY,
    scenarios: { format: "isaac-lab-json", source: JSON.stringify(ISAAC), count: 3 }, audit_sample: 0.3, return_ground_truth: true,
  };

  /**
   * The first test's run as it ended, and its ground-truth list read right at its completion: the next test checks
   * those files instead of running another verify run.
   */
  let verified: { run: Record<string, any>; done: Record<string, any>; groundTruth: { data: any[] } } | undefined;

  it("reproduces every scenario exactly, runs audit episodes, and reports sim-vs-real agreement", async () => {
    const created = await service.api("/v1/runs", { method: "POST", json: VERIFY });
    assert.equal(created.status, 201, await created.clone().text());
    const run = (await created.json()) as Record<string, any>;
    const { run: done } = await runEnd(service, run.id);
    assert.equal(done.status, "completed", JSON.stringify(done.status_detail));
    const groundTruth = (await (await service.api(`/v1/runs/${run.id}/episodes?artifact=ground_truth`)).json()) as { data: any[] };
    verified = { run, done, groundTruth };
    const result = done.result;
    // The top level is the scenario episodes (the real outcome on what the simulator flagged); the
    // ceil(0.3 x 3) = 1 audit episode is a different population, reported apart.
    assert.equal(result.n, 3);
    assert.equal(result.population.description.startsWith("the scenario episodes on"), true);
    assert.equal(result.units[0].result.n, 4);
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

  it("ships a ground-truth file per scenario episode, stored before the run completed, matching its MCAP", async () => {
    // The previous test's run (three scenario episodes and one audit episode, return_ground_truth): a second verify run
    // of its own cost two more fr3 episodes and checked nothing this one does not.
    assert.ok(verified, "the previous test's verify run completed");
    const { run, done } = verified;
    assert.equal(done.status, "completed", JSON.stringify(done.status_detail));
    assert.equal(done.result.ground_truth.format, "assay.ground_truth/1");
    assert.match(done.result.ground_truth.list_url, /episodes\?artifact=ground_truth$/);

    // Listed right at completion (the previous test's first request after the run ended): the run completed only once
    // every file existed. One per scenario episode, none for the audit episode.
    const list = verified.groundTruth;
    assert.equal(list.data.length, 3);
    assert.deepEqual(list.data.map((a) => a.episode_id).sort(), done.result.scenarios.map((s: any) => s.episode_id).sort());
    for (const a of list.data) {
      assert.equal(a.status, "stored");
      assert.equal(a.kind, "ground_truth");
      assert.match(a.url, new RegExp(`/${a.episode_id}/${a.episode_id}\\.ground_truth\\.json$`));
    }
    const fetched = await service.api(list.data[0].url);
    assert.equal(fetched.status, 200);
    assert.match(fetched.headers.get("content-type") ?? "", /application\/json/);
    const truth = (await fetched.json()) as Record<string, any>;
    assert.equal(truth.schema, "assay.ground_truth/1");
    assert.equal(truth.episode_id, list.data[0].episode_id);
    assert.equal(truth.run_id, run.id);
    assert.equal(truth.scenario_id, done.result.scenarios.find((s: any) => s.episode_id === truth.episode_id).scenario);
    assert.match(truth.robot, /^fr3/);
    assert.equal(truth.environment, "tabletop@1");
    for (const key of ["world", "orientation", "joints", "time"]) assert.ok(truth.frames[key], `frames.${key}`);

    const cube = truth.objects.cube;
    assert.ok(cube.t_s.length > 10, "cube poses over time");
    assert.equal(cube.position_m.length, cube.t_s.length);
    assert.equal(cube.orientation_xyzw.length, cube.t_s.length);
    for (const q of cube.orientation_xyzw.slice(0, 5)) assert.ok(Math.abs(Math.hypot(...q) - 1) < 1e-6, `unit quaternion ${q}`);
    const { joints } = truth;
    const dof = joints.names.length;
    assert.equal(dof, 8, "fr3: 7 arm joints and the gripper");
    assert.ok(joints.t_s.length > 10);
    for (const key of ["commanded_rad", "measured_rad", "velocity_rad_s"]) assert.equal(joints[key].length, joints.t_s.length, key);
    assert.equal(joints.t_s[0], 0);
    assert.ok(joints.t_s.every((t: number, i: number) => i === 0 || t > joints.t_s[i - 1]), "joint rows in time order");

    // The first commanded and measured samples are the MCAP's own.
    const mcaps = (await (await service.api(`/v1/runs/${run.id}/episodes?artifact=mcap`)).json()) as { data: any[] };
    const mcapUrl = mcaps.data.find((a) => a.episode_id === truth.episode_id).url;
    const bytes = new Uint8Array(await (await service.api(mcapUrl)).arrayBuffer());
    const reader = await McapIndexedReader.Initialize({
      decompressHandlers: (await loadMcapCompression()).decompressHandlers,
      readable: { size: async () => BigInt(bytes.byteLength), read: async (offset, size) => bytes.subarray(Number(offset), Number(offset + size)) },
    });
    const first = async (topic: string) => {
      for await (const message of reader.readMessages({ topics: [topic] })) return JSON.parse(new TextDecoder().decode(message.data));
      throw new Error(`no ${topic} message`);
    };
    const measured = await first("/joint_states_measured");
    const commanded = await first("/joint_targets_commanded");
    assert.deepEqual(joints.names, measured.name);
    assert.deepEqual(joints.measured_rad[0], measured.position);
    assert.deepEqual(joints.velocity_rad_s[0], measured.velocity);
    assert.deepEqual(joints.commanded_rad[0], commanded.position);
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
