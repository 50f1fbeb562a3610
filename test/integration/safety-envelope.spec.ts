/**
 * The safety envelope on every kind of bus (issue 27, item 4): a policy that jumps is clamped, then
 * stopped with failure cluster safety_limit, and the cell runs its next episode. The buses are the
 * real drivers on emulated wires: Feetech STS3215 (so101), Dynamixel X (the fr3 stand-in), ALOHA on its
 * two follower-arm Dynamixel buses (XM540-W270 / XM430-W350, issue 27 item 5) and a ROS robot through the
 * simulated rosbridge (g1). The change-per-step limit is the robot catalogue's for the model. The recordings are read with the MCAP reader written
 * from the specification (test/support/mcap-spec-reader.ts).
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EpisodeAssignment } from "../../cell-agent/episode/assignment.js";
import { realizeEpisodePlan } from "../../cell-agent/episode/plan.js";
import { runEpisode, type EpisodeResult } from "../../cell-agent/episode/runner.js";
import type { CellHardware, PolicySession } from "../../cell-agent/hardware/types.js";
import { createAgentMetrics } from "../../cell-agent/metrics.js";
import { ENVELOPE_DEFAULTS, compileSafetyEnvelopeOptions } from "../../cell-agent/safety/envelope.js";
import { compileTaskMonitor } from "../../protocol/predicates/index.js";
import { RosMotorBus } from "../../cell-agent/devices/ros/ros-motor-bus.js";
import { SerialServoBus } from "../../cell-agent/devices/servo/servo-bus.js";
import { pickCubeTask } from "../../simulators/physics/pick-episode.js";
import { createSimulatedCell, type SimulatedCell } from "../../simulators/sim-cell-hardware.js";
import { FirmwareLabelledBus } from "../../simulators/servo-bus/world-servo-bridge.js";
import { jsonMessages, readMcapFromSpec } from "../support/mcap-spec-reader.js";

/** The jump the policy asks for each step, rad: far beyond the envelope's default 0.5 rad per step. */
const JUMP_RAD = 1.2;

/** A policy that throws the arm's base joint from one side to the other every control step. */
function jumpingPolicy(cell: SimulatedCell, goalsSeen: number[][]): CellHardware["policies"] {
  const yaw = cell.world.embodiment.armJoints[0];
  return {
    available: () => ["test/jumper"],
    start: async (): Promise<PolicySession> => {
      let k = 0;
      return {
        reset: async () => undefined,
        act: async () => {
          // What the bus actually holds as goals now: the previous step's write, as the world received it.
          goalsSeen.push([...cell.world.servos.goalRad]);
          const target = new Array<number>(cell.world.embodiment.dof).fill(0);
          target[yaw] = k++ % 2 === 0 ? JUMP_RAD : -JUMP_RAD;
          return target;
        },
        close: async () => undefined,
      };
    },
  };
}

describe("safety envelope on emulated buses", function () {
  this.timeout(180_000);
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "assay-envelope-"));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const cases = [
    { model: "so101", firmware: "3.11", bus: "Feetech STS3215", driver: SerialServoBus },
    { model: "fr3", firmware: "5.9.0", bus: "Dynamixel X", driver: FirmwareLabelledBus },
    { model: "aloha", firmware: "2.1", bus: "two Dynamixel buses (left and right follower arms)", driver: FirmwareLabelledBus },
    { model: "g1", firmware: "1.4.2", bus: "ROS (rosbridge)", driver: RosMotorBus },
  ] as const;

  for (const { model, firmware, bus, driver } of cases) {
    it(`${model} on ${bus}: a policy that jumps is clamped, then stopped with safety_limit; the next episode runs`, async () => {
      const cell = await createSimulatedCell({ model, firmware, environment: "tabletop@1", seed: 31, speed: Infinity });
      try {
        assert.ok(cell.motors instanceof driver, `${model} gets the ${bus} driver`);
        const dof = cell.world.embodiment.dof;
        const task = pickCubeTask();
        // The catalogue's change-per-step limit of each joint (firmware-pins/catalog.json, safety.maxStepRad).
        const maxStepRad = compileSafetyEnvelopeOptions({}, { model, jointNames: cell.motors.jointNames }).maxStepRad;
        const yaw = cell.world.embodiment.armJoints[0];
        const metrics = createAgentMetrics(`${model}-env`);
        const episode = async (index: number, hardware: CellHardware, policy: Record<string, unknown>): Promise<EpisodeResult> => {
          const assignment: EpisodeAssignment = {
            episodeId: `ep_env_${model}_${index}`, runId: "run_env", index, attempt: 1, of: 2, robot: model, environment: "tabletop@1",
            task, taskJson: {}, policy,
            perturbation: { layoutJitterMm: 0, lighting: ["nominal"], distractors: "none" }, interventions: "none",
            seed: 500 + index, controlRateHz: 30, maxDurationS: 6, idleEndS: 0,
          };
          const plan = realizeEpisodePlan({ task, perturbation: assignment.perturbation, seed: assignment.seed, dof, environment: "tabletop@1" });
          const monitor = compileTaskMonitor({ success_predicates: task.successPredicates, stages: task.stages });
          return runEpisode({ assignment, plan, hardware, monitor, recordingsDir: dir, cellId: `${model}-env`, robotModel: model, metrics, signal: new AbortController().signal });
        };

        const goalsSeen: number[][] = [];
        const jumper: CellHardware = Object.assign(Object.create(cell) as SimulatedCell, { policies: jumpingPolicy(cell, goalsSeen) });
        const jumped = await episode(0, jumper, { type: "container", image: "test/jumper" });
        assert.equal(jumped.kind, "finished", JSON.stringify(jumped));
        if (jumped.kind !== "finished") return;
        assert.equal(jumped.outcome, "failure");
        assert.equal(jumped.failureCluster, "safety_limit");
        const names = jumped.events.map((e) => e.name);
        assert.equal(names.filter((n) => n === "safety_clamp").length, ENVELOPE_DEFAULTS.consecutiveClampLimit, names.join(", "));
        assert.equal(names.filter((n) => n === "safety_limit").length, 1);
        assert.match(jumped.events.find((e) => e.name === "safety_limit")!.detail, /10 control steps in a row/);

        // The recording says the same: clamps on /events, every commanded goal within the step limit of the one before.
        const file = readMcapFromSpec(new Uint8Array(await readFile(jumped.mcapPath)));
        const events = jsonMessages(file, "/events").map((m) => m.body);
        const clamps = events.filter((e) => e.name === "safety_clamp");
        assert.equal(clamps.length, ENVELOPE_DEFAULTS.consecutiveClampLimit);
        const first = JSON.parse(clamps[0].detail) as Array<{ kind: string; joint: string; requested: number; applied: number }>;
        assert.equal(first[0].kind, "max_step");
        assert.equal(first[0].joint, cell.motors.jointNames[cell.world.embodiment.armJoints[0]]);
        assert.equal(first[0].requested, JUMP_RAD);
        assert.ok(events.some((e) => e.name === "safety_limit"));
        const endMeta = jsonMessages(file, "/meta").map((m) => m.body).find((m) => m.phase === "end");
        assert.equal(endMeta.safety_clamps, ENVELOPE_DEFAULTS.consecutiveClampLimit, "the end /meta counts the clamps");
        assert.equal(endMeta.outcome.failure_cluster, "safety_limit");
        const commanded = jsonMessages(file, "/joint_targets_commanded").map((m) => m.body.position as number[]);
        assert.ok(commanded.length >= ENVELOPE_DEFAULTS.consecutiveClampLimit);
        for (let k = 1; k < commanded.length; k++) {
          commanded[k].forEach((v, j) => assert.ok(Math.abs(v - commanded[k - 1][j]) <= maxStepRad[j] + 1e-9, `step ${k} joint ${j}: ${commanded[k - 1][j]} -> ${v}`));
        }
        // And the bus: the goals the world's actuators received never jumped by more than a step (plus one servo tick).
        const tick = (2 * Math.PI) / 4096;
        for (let k = 1; k < goalsSeen.length; k++) {
          goalsSeen[k].forEach((v, j) => assert.ok(Math.abs(v - goalsSeen[k - 1][j]) <= maxStepRad[j] + tick, `bus goal ${j} between steps ${k - 1} and ${k}: ${goalsSeen[k - 1][j]} -> ${v}`));
        }
        assert.ok(goalsSeen.some((g) => g.some((v) => Math.abs(v) > 0.8 * maxStepRad[yaw])), "the clamped goals did reach the bus");
        if (model === "aloha") {
          // Both arms' buses carried the episode's goals: SYNC_WRITE (0x83) to Goal Position (116) on each.
          const buses = cell.servoWire!.buses;
          assert.deepEqual(buses.map((b) => b.name), ["left", "right"]);
          for (const b of buses) {
            const goalWrites = b.mock.written.filter((p) => p[7] === 0x83 && p[8] === 116 && p[9] === 0);
            assert.ok(goalWrites.length >= ENVELOPE_DEFAULTS.consecutiveClampLimit, `bus ${b.name}: ${goalWrites.length} goal writes`);
          }
        }
        const counted = await metrics.registry.getSingleMetricAsString("assay_agent_safety_clamps_total");
        assert.match(counted, /kind="max_step"[^}]*} 10$/m, counted);

        // The cell is not stopped: torque stays on and the next episode, with the reference policy, runs to its end.
        const next = await episode(1, cell, { type: "container", image: "assay/ref-policy:expert" });
        assert.equal(next.kind, "finished", JSON.stringify(next));
        if (next.kind === "finished") assert.notEqual(next.failureCluster, "safety_limit", JSON.stringify(next.events.filter((e) => e.name.startsWith("safety"))));
      } finally {
        await cell.close();
      }
    });
  }
});
