/**
 * Recordings whose events are true (issue 25, item 6). Real episodes, back to back on one simulated
 * so101 cell (wire devices: the NatNet mocap stream, the emulated servo bus; the default engine), run by
 * the agent's own episode runner; each MCAP is read with test/support/mcap-spec-reader.ts, written from
 * the MCAP specification rather than with the writer's library. Checked in every recording:
 *   - the first /gt/object_poses sample shows the planned layout (the cube where the start /meta's
 *     perturbations_realized put it), not the scene before the reset placed it;
 *   - no stage is reached, no predicate satisfied and no object lifted in or before the step of the
 *     policy's first action (the first /joint_targets_commanded);
 *   - no event is recorded twice, and /events holds exactly the end /meta's event_count.
 * The back-to-back episodes matter: before the fix, the second one's first sample still had the
 * cube in the gripper from the first (z 0.452 m), so `reached` and object_lifted fired at t = 0.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EpisodeAssignment } from "../../cell-agent/episode/assignment.js";
import { realizeEpisodePlan } from "../../cell-agent/episode/plan.js";
import { runEpisode } from "../../cell-agent/episode/runner.js";
import { createAgentMetrics } from "../../cell-agent/metrics.js";
import { compileTaskMonitor } from "../../protocol/predicates/index.js";
import { pickCubeTask } from "../../simulators/physics/pick-episode.js";
import { createSimulatedCell, type SimulatedCell } from "../../simulators/sim-cell-hardware.js";
import { jsonMessages, readMcapFromSpec } from "../support/mcap-spec-reader.js";

const EPISODES = 3;
/** The cube's first tracked x-y within this of its planned pose: settle noise 0.5 mm, marker noise 0.2 mm, MuJoCo settling. */
const LAYOUT_TOLERANCE_M = 0.005;
/** Events that say the task progressed: none can be true before the arm has moved. */
const PROGRESS = /^(stage_reached:|predicate_satisfied:|object_lifted$|grasp_acquired$)/;

describe("episode recordings: events are true (independent MCAP reader)", function () {
  this.timeout(120_000);
  let cell: SimulatedCell;
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "assay-recording-events-"));
    cell = await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 2025, speed: Infinity });
  });

  after(async () => {
    await cell?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("starts every recording on the placed layout, reaches no stage before the first action and records each event once", async () => {
    const task = pickCubeTask();
    const metrics = createAgentMetrics("so101-rec");
    for (let index = 0; index < EPISODES; index++) {
      const assignment: EpisodeAssignment = {
        episodeId: `ep_rec_${index}`, runId: "run_rec", index, attempt: 1, of: EPISODES, robot: "so101", environment: "tabletop@1",
        task, taskJson: {}, policy: { type: "container", image: "assay/ref-policy:expert" },
        perturbation: { layoutJitterMm: 10, lighting: ["nominal"], distractors: "none" }, interventions: "none",
        seed: 4100 + index, controlRateHz: 30, maxDurationS: 12, idleEndS: 0,
      };
      const plan = realizeEpisodePlan({ task, perturbation: assignment.perturbation, seed: assignment.seed, dof: 6, environment: "tabletop@1" });
      const monitor = compileTaskMonitor({ success_predicates: task.successPredicates, stages: task.stages });
      const result = await runEpisode({
        assignment, plan, hardware: cell, monitor, recordingsDir: dir, cellId: "so101-rec", robotModel: "so101", metrics, signal: new AbortController().signal,
      });
      assert.equal(result.kind, "finished", JSON.stringify(result));
      const where = `episode ${index} (seed ${assignment.seed})`;

      const file = readMcapFromSpec(new Uint8Array(await readFile(result.mcapPath)));
      const [startMeta, endMeta] = jsonMessages(file, "/meta").map((m) => m.body);
      assert.equal(startMeta.phase, "start");
      assert.equal(endMeta.phase, "end");
      const firstActionNs = jsonMessages(file, "/joint_targets_commanded")[0]?.logTimeNs;
      assert.ok(firstActionNs !== undefined, `${where}: the policy acted`);

      // The first ground-truth sample is the placed layout.
      const [planned] = startMeta.perturbations_realized.objects.cube.realized as number[];
      const plannedY = (startMeta.perturbations_realized.objects.cube.realized as number[])[1];
      const first = jsonMessages(file, "/gt/object_poses")[0];
      assert.ok(first && first.logTimeNs <= firstActionNs, `${where}: a pose sample precedes the first action`);
      const cube = first.body.poses.cube?.position;
      assert.ok(cube, `${where}: the first /gt/object_poses sample tracks the cube; got ${JSON.stringify(first.body.poses)}`);
      assert.ok(
        Math.hypot(cube.x - planned, cube.y - plannedY) < LAYOUT_TOLERANCE_M && cube.z < 0.03,
        `${where}: the first sample puts the cube at (${cube.x.toFixed(3)}, ${cube.y.toFixed(3)}, ${cube.z.toFixed(3)}) m, the plan at (${planned.toFixed(3)}, ${plannedY.toFixed(3)})`,
      );

      const events = jsonMessages(file, "/events");
      for (const event of events.filter((e) => PROGRESS.test(e.body.name))) {
        assert.ok(event.logTimeNs > firstActionNs, `${where}: ${event.body.name} at t_s ${event.body.t_s} is recorded in or before the step of the policy's first action`);
      }
      const keys = events.map((e) => `${e.body.name}@${e.body.t_s}`);
      assert.deepEqual(keys.filter((k, i) => keys.indexOf(k) !== i), [], `${where}: events recorded twice`);
      const milestones = events.map((e) => e.body.name as string).filter((name) => /^(stage_reached|predicate_satisfied):/.test(name));
      assert.equal(new Set(milestones).size, milestones.length, `${where}: a stage or predicate reported twice: ${milestones.join(", ")}`);
      assert.equal(events.length, endMeta.event_count, `${where}: /events holds the end /meta's event_count`);
      if (result.kind === "finished" && result.outcome === "success") {
        assert.deepEqual(milestones.filter((n) => n.startsWith("stage_reached:")), ["stage_reached:reached", "stage_reached:grasped", "stage_reached:lifted"], `${where}: stages in order`);
      }
    }
  });
});
