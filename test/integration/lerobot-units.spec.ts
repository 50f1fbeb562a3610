/**
 * A LeRobot-trained SO-101 policy, unchanged: a simulated SO-101 cell (the real SerialServoBus over
 * emulated Feetech STS3215 servos) with a LeRobot calibration imported runs an endpoint policy that
 * declares `units: "lerobot"` and answers in LeRobot's units, through the agent's own episode runner.
 * The goal ticks the servos received are decoded from the bytes on the wire, with a Feetech packet
 * reader written here from the protocol (0xFF 0xFF, id, length, instruction, params, checksum), and
 * must be what LeRobot's own driver writes for that action (motors_bus.py `_unnormalize`):
 *
 *   action [10, -20, 30, 0, 45, 40], use_degrees true (body joints DEGREES, gripper RANGE_0_100),
 *   calibration test/support/lerobot-calibration-file.ts:
 *     shoulder_pan  mid (758+3292)/2 = 2025:    int(10 * 4095/360 + 2025)  = int(2138.75)  = 2138
 *     shoulder_lift mid (1000+3000)/2 = 2000:   int(-20 * 4095/360 + 2000) = int(1772.5)   = 1772
 *     elbow_flex    mid (1000+3001)/2 = 2000.5: int(30 * 4095/360 + 2000.5) = int(2341.75) = 2341
 *     wrist_flex    mid (850+3190)/2 = 2020:    int(0 + 2020)              = 2020
 *     wrist_roll    mid (0+4095)/2 = 2047.5:    int(45 * 4095/360 + 2047.5) = int(2559.375) = 2559
 *     gripper       RANGE_0_100 2000..3400:     int(40/100 * 1400 + 2000)  = 2560
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EpisodeAssignment } from "../../cell-agent/episode/assignment.js";
import { realizeEpisodePlan } from "../../cell-agent/episode/plan.js";
import { runEpisode } from "../../cell-agent/episode/runner.js";
import { importLerobotCalibration, lerobotFrameSource } from "../../cell-agent/lerobot-import.js";
import { createAgentMetrics } from "../../cell-agent/metrics.js";
import type { SerialServoBus } from "../../cell-agent/devices/servo/servo-bus.js";
import { EndpointPolicyRuntime } from "../../cell-agent/policy/endpoint-runtime.js";
import { LerobotUnitsPolicyRuntime } from "../../cell-agent/policy/lerobot-units-runtime.js";
import { compileTaskMonitor } from "../../protocol/predicates/index.js";
import { pickCubeTask } from "../../simulators/physics/pick-episode.js";
import { createSimulatedCell, type SimulatedCell } from "../../simulators/sim-cell-hardware.js";
import { LEROBOT_FILE } from "../support/lerobot-calibration-file.js";
import { startLerobotEndpoint, type LerobotEndpoint } from "../support/lerobot-endpoint.js";

const ACTION = [10, -20, 30, 0, 45, 40];
const EXPECTED_GOAL_TICKS = [2138, 1772, 2341, 2020, 2559, 2560];
const GOAL_POSITION_ADDRESS = 42;
const SYNC_WRITE = 0x83;

/** Every SYNC_WRITE to Goal_Position in the host's bytes, as {id: ticks} (little-endian, sign bit 15). */
function goalWrites(written: readonly Buffer[]): Array<Record<number, number>> {
  const bytes = Buffer.concat(written);
  const out: Array<Record<number, number>> = [];
  let i = 0;
  while (i + 5 < bytes.length) {
    if (bytes[i] !== 0xff || bytes[i + 1] !== 0xff) {
      i++;
      continue;
    }
    const length = bytes[i + 3];
    const instruction = bytes[i + 4];
    const params = bytes.subarray(i + 5, i + 3 + length);
    if (instruction === SYNC_WRITE && params[0] === GOAL_POSITION_ADDRESS && params[1] === 2) {
      const goals: Record<number, number> = {};
      for (let p = 2; p + 2 < params.length; p += 3) {
        const raw = params[p + 1] | (params[p + 2] << 8);
        goals[params[p]] = raw & 0x8000 ? -(raw & 0x7fff) : raw;
      }
      out.push(goals);
    }
    i += 4 + length;
  }
  return out;
}

describe("a LeRobot-trained SO-101 policy, unchanged (simulated Feetech bus)", function () {
  this.timeout(120_000);
  let cell: SimulatedCell;
  let dir: string;
  let endpoint: LerobotEndpoint;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "assay-lerobot-units-"));
    cell = await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 27, speed: Infinity });
    endpoint = await startLerobotEndpoint(ACTION);
  });

  after(async () => {
    await endpoint?.close();
    await cell?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("writes the goal ticks LeRobot's driver would write and shows the policy its state in LeRobot units", async () => {
    const file = join(dir, "so101_follower.json");
    await writeFile(file, JSON.stringify(LEROBOT_FILE, null, 4));
    importLerobotCalibration(file, join(dir, "data"));
    // lerobot-calibrate left these offsets in the servos' Homing_Offset registers; the agent checks them.
    Object.values(LEROBOT_FILE).forEach((m) => cell.servoWire!.mock.emulator.servo(m.id).set("homingOffset", m.homing_offset));
    const bus = cell.motors as SerialServoBus;
    const policies = new LerobotUnitsPolicyRuntime(new EndpointPolicyRuntime(), lerobotFrameSource({
      dataDir: join(dir, "data"), robotModel: "so101", jointNames: cell.motors.jointNames, servoCalibration: () => cell.servoWire!.calibration,
      readHomingOffsetTicks: () => bus.readHomingOffsetTicks(),
    }));
    const task = pickCubeTask();
    const policy = {
      type: "endpoint", url: endpoint.url, latency_budget_ms: 2000,
      action_space: { type: "joint_position", dim: 6, units: "lerobot", use_degrees: true },
      observation_contract: { cameras: ["top"], state: ["joint_positions"], units: "lerobot" },
    };
    const assignment: EpisodeAssignment = {
      episodeId: "ep_lerobot_0", runId: "run_lerobot", index: 0, attempt: 1, of: 1, robot: "so101", environment: "tabletop@1",
      task, taskJson: {}, policy, perturbation: { layoutJitterMm: 0, lighting: ["nominal"], distractors: "none" }, interventions: "none",
      seed: 2701, controlRateHz: 30, maxDurationS: 3, idleEndS: 0,
    };
    const plan = realizeEpisodePlan({ task, perturbation: assignment.perturbation, seed: assignment.seed, dof: 6, environment: "tabletop@1" });
    const written = cell.servoWire!.mock.written;
    const before = written.length;
    const result = await runEpisode({
      assignment, plan, hardware: { ...cell, policies }, monitor: compileTaskMonitor({ success_predicates: task.successPredicates, stages: task.stages }),
      recordingsDir: dir, cellId: "so101-lerobot", robotModel: "so101", metrics: createAgentMetrics("so101-lerobot"), signal: new AbortController().signal,
    });
    assert.equal(result.kind, "finished", JSON.stringify(result));

    const goals = goalWrites(written.slice(before));
    assert.ok(goals.length > 10, `the policy's goals reached the bus (${goals.length} goal writes)`);
    const last = goals[goals.length - 1];
    assert.deepEqual([1, 2, 3, 4, 5, 6].map((id) => last[id]), EXPECTED_GOAL_TICKS);

    // The policy saw LeRobot units: after holding the action, the arm's joints read near it
    // (within a degree: a tick is 0.088 degrees, the encoder noise about 0.06).
    assert.ok(endpoint.observed.length > 10);
    const seen = endpoint.observed[endpoint.observed.length - 1];
    for (const joint of [0, 1, 2, 3, 4]) {
      assert.ok(Math.abs(seen[joint] - ACTION[joint]) < 1, `joint ${joint}: the policy saw ${seen[joint]}, LeRobot units of the goal ${ACTION[joint]}`);
    }
    assert.ok(seen[5] >= 0 && seen[5] <= 100, `the gripper is shown 0..100; got ${seen[5]}`);
  });

  it("refuses to start a LeRobot policy on a cell without an imported calibration, in plain words", async () => {
    const policies = new LerobotUnitsPolicyRuntime(new EndpointPolicyRuntime(), lerobotFrameSource({
      dataDir: join(dir, "empty"), robotModel: "so101", jointNames: cell.motors.jointNames, servoCalibration: () => cell.servoWire!.calibration,
    }));
    await assert.rejects(
      policies.start({ type: "endpoint", url: endpoint.url, latency_budget_ms: 100, action_space: { type: "joint_position", dim: 6, units: "lerobot" } }, { model: "so101", dof: 6 }),
      /no LeRobot calibration imported; run "cell-agent calibration import-lerobot <file\.json>"/,
    );
  });
});
