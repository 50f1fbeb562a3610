/**
 * The pause of an intervention a person performs, seen from the episode runner on a simulated so101
 * (in-process devices): a policy that holds still stalls; from the offer until the person's Done the
 * policy gets no step and the bus holds the arm where it was (goal = the position measured when the
 * episode paused, torque on); after Done the policy steps again and the episode records the help with
 * `by: "operator"`. A second episode where nobody comes: the offer lapses and the episode goes on
 * untouched, the wait left out of the policy's time.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EpisodeAssignment } from "../../cell-agent/episode/assignment.js";
import { InterventionGate, type InterventionOffer } from "../../cell-agent/episode/intervention-gate.js";
import { realizeEpisodePlan, type EpisodePlan } from "../../cell-agent/episode/plan.js";
import { runEpisode } from "../../cell-agent/episode/runner.js";
import type { CellHardware, PolicySession } from "../../cell-agent/hardware/types.js";
import { createAgentMetrics } from "../../cell-agent/metrics.js";
import { compileTaskMonitor } from "../../protocol/predicates/index.js";
import { pickCubeTask } from "../../simulators/physics/pick-episode.js";
import { createSimulatedCell, type SimulatedCell } from "../../simulators/sim-cell-hardware.js";

describe("intervention pause on the episode runner (simulated so101)", function () {
  this.timeout(120_000);
  let dir: string;
  let cell: SimulatedCell;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "assay-intervention-hold-"));
    cell = await createSimulatedCell({ model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 7, speed: Infinity, devices: "in-process", engine: "kinematic" });
  });
  after(async () => {
    await cell?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Runs one on_stall episode with a policy that keeps the arm at home (so it stalls), counting its steps. */
  const episode = async (index: number, gate: InterventionGate, steps: { count: number }, writes: Array<{ paused: boolean; goals: number[] }> = []) => {
    const task = pickCubeTask();
    const dof = cell.world.embodiment.dof;
    const assignment: EpisodeAssignment = {
      episodeId: `ep_hold_${index}`, runId: "run_hold", index, attempt: 1, of: 2, robot: "so101", environment: "tabletop@1",
      task, taskJson: {}, policy: { type: "container", image: "test/still" },
      perturbation: { layoutJitterMm: 0, lighting: ["nominal"], distractors: "none" }, interventions: "on_stall",
      seed: 900 + index, controlRateHz: 30, maxDurationS: 8, idleEndS: 0,
    };
    const plan: EpisodePlan = realizeEpisodePlan({ task, perturbation: assignment.perturbation, seed: assignment.seed, dof, environment: "tabletop@1" });
    const still: CellHardware["policies"] = {
      available: () => ["test/still"],
      start: async (): Promise<PolicySession> => ({
        reset: async () => undefined,
        act: async () => {
          steps.count += 1;
          return [...plan.reset.homeRad];
        },
        close: async () => undefined,
      }),
    };
    // The bus as the runner drives it, with every goal write noted (and whether the episode was paused then).
    const bus = cell.motors;
    const motors = Object.assign(Object.create(bus) as typeof bus, {
      writeGoalPositions: async (goals: readonly number[]) => {
        writes.push({ paused: gate.current !== null, goals: [...goals] });
        return bus.writeGoalPositions(goals);
      },
    });
    const hardware: CellHardware = Object.assign(Object.create(cell) as SimulatedCell, { policies: still, motors });
    const monitor = compileTaskMonitor({ success_predicates: task.successPredicates, stages: task.stages });
    return runEpisode({
      assignment, plan, hardware, monitor, recordingsDir: dir, cellId: "so101-hold", robotModel: "so101", metrics: createAgentMetrics("so101-hold"),
      signal: new AbortController().signal, interventionGate: gate,
    });
  };

  it("holds the arm with no policy steps from the offer to Done, then goes on and records the help", async () => {
    const gate = new InterventionGate();
    const steps = { count: 0 };
    const seen: { offered?: { steps: number; positionRad: number[]; writes: number }; pressedGoals?: number[]; doneSteps?: number } = {};
    const writes: Array<{ paused: boolean; goals: number[] }> = [];
    gate.subscribe((offer: InterventionOffer | null) => {
      if (offer?.phase === "offered") {
        seen.offered = { steps: steps.count, positionRad: [...cell.world.servos.positionRad], writes: writes.length };
        // The person walks over: a later turn of the event loop, as a station's answer is.
        setImmediate(() => gate.press(offer.episodeId));
      } else if (offer?.phase === "holding") {
        seen.pressedGoals = [...cell.world.servos.goalRad];
        setTimeout(() => {
          seen.doneSteps = steps.count;
          gate.done(offer.episodeId, "slid the cube back");
        }, 50);
      }
    });
    const result = await episode(0, gate, steps, writes);
    assert.equal(result.kind, "finished", JSON.stringify(result));
    if (result.kind !== "finished") return;
    assert.ok(seen.offered && seen.pressedGoals && seen.doneSteps !== undefined, "the person was asked, pressed Intervene and Done");
    // The last write before the person was asked is the hold: the measured positions (encoder noise and all), not the
    // policy's home targets; while paused nothing more is written.
    const hold = writes[seen.offered.writes - 1]!.goals;
    assert.notDeepEqual(hold, steps.count > 0 ? writes.find((w) => !w.paused)!.goals : [], "the hold is not the policy's target");
    hold.forEach((goal, i) => assert.ok(Math.abs(goal - seen.offered!.positionRad[i]!) < 0.01, `joint ${i}: hold ${goal}, position ${seen.offered!.positionRad[i]}`));
    assert.equal(writes.filter((w) => w.paused).length, 0, "no goal written while paused");
    assert.equal(seen.doneSteps, seen.offered.steps, "no policy step while the episode was paused");
    assert.ok(steps.count > seen.offered.steps, "the policy steps again after Done");
    // The hold: the goal is where the arm was when the episode paused (within encoder noise of the measurement).
    seen.pressedGoals.forEach((goal, i) => assert.ok(Math.abs(goal - seen.offered!.positionRad[i]!) < 0.01, `joint ${i}: goal ${goal}, position ${seen.offered!.positionRad[i]}`));
    const [help] = result.interventions;
    assert.equal(help?.by, "operator");
    assert.equal(help?.kind, "on_stall");
    assert.ok(help!.offered_t_s! >= 5, JSON.stringify(help));
    assert.match(help!.detail, /slid the cube back; the simulated world: re-homed the arm/);
    assert.ok(result.events.some((e) => e.name === "intervention:on_stall"));
    assert.equal(gate.current, null);
  });

  it("an offer nobody takes lapses; the episode goes on untouched", async () => {
    const gate = new InterventionGate({ offerTimeoutMs: 30 });
    const steps = { count: 0 };
    const result = await episode(1, gate, steps);
    assert.equal(result.kind, "finished", JSON.stringify(result));
    if (result.kind !== "finished") return;
    assert.deepEqual(result.interventions, []);
    const unanswered = result.events.filter((e) => e.name === "intervention_unanswered:on_stall");
    assert.ok(unanswered.length >= 1, result.events.map((e) => e.name).join(", "));
    assert.match(unanswered[0]!.detail, /Nobody pressed Intervene within 0 s; the episode goes on untouched/);
    assert.equal(result.meta.interventions_mode, "on_stall");
  });
});
