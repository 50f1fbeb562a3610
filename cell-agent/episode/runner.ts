/**
 * Runs one episode: reset the scene to the plan, start the policy, then a fixed-rate control loop on
 * the hardware clock (read sensors, capture cameras at their own rates, act, command, record, feed
 * the task monitor) until the task succeeded 0.5 s ago, the robot stood idle for the plan's `idle_end_s`
 * with the task unfinished (runs without interventions: an `idle_end` event, failure cluster `idle...`)
 * or `max_duration_s` ran out. Everything the
 * loop sees and commands goes into the episode's MCAP; one camera's JPEGs ("top" preferred) go into an MP4.
 *
 * Interventions (the run's `interventions` mode): with `on_stall` the loop asks the cell's
 * Intervention hook for a nudge whenever the StallDetector says the episode stalled; with `scripted`
 * it asks once, SCRIPTED_INTERVENTION_AT_S into the episode. The loop pauses while the hand is in
 * the scene, then goes on. Each one is an `intervention:<kind>` event on /events and an entry
 * `{t_s, kind, detail, duration_s}` of the end /meta's `interventions` list (present unless "none").
 *
 * On a cell where a person answers (`interventionGate`: a real cell, or a simulated one in operator
 * mode) the loop instead holds the arm (goal = present position, torque on, no policy steps) and
 * offers the intervention at the operator station until the person has pressed Intervene and Done, or
 * the offer lapsed (operator-intervention.ts). That pause does not count against `max_duration_s`;
 * the entry then also carries `by: "operator"` and its timestamps.
 */
import { join } from "node:path";
import type { CameraFrame, CellHardware, InterventionKind, JointState, ObjectPose, Observation, PolicySession, Wrench } from "../hardware/types.js";
import type { AgentMetrics } from "../metrics.js";
import { PolicyEndpointTimeout, PolicyStepMissed } from "../policy/latency-budget.js";
import type { EstopTrip } from "../safety/estop-watch.js";
import { SafetyEnvelope, clampEventDetail, compileSafetyEnvelopeOptions, type SafetyEnvelopeOptions } from "../safety/envelope.js";
import { MissedPeriodMonitor, holdPosition, protectiveStopEvent } from "../safety/protective-stop.js";
import { McapRecorder } from "../recording/mcap-recorder.js";
import type { ChunkCompressor } from "../recording/chunk-compressor.js";
import { EpisodeVideos, type EpisodeVideoFile } from "../recording/episode-videos.js";
import type { EpisodeAssignment } from "./assignment.js";
import { CameraSkewStats } from "./camera-skew.js";
import { EventDetector, type EpisodeEvent } from "./event-detector.js";
import { failureClusterOf } from "./failure-cluster.js";
import { captureDueCameras, signalFrameOf, type CameraSchedule, type CaptureSinks } from "./control-step.js";
import { buildObservation, contractOf } from "./observation.js";
import type { EpisodePlan } from "./plan.js";
import { FINGERTIP_PROGRESS_M, JOINT_PROGRESS_RAD, StallDetector } from "./stall-detector.js";
import type { InterventionGate } from "./intervention-gate.js";
import { OperatorInterventions, type AttendOutcome, type InterventionRecord } from "./operator-intervention.js";
import type { TaskMonitor, TaskStatus } from "./task-monitor.js";
import type { LiveTap } from "../link/live-feed.js";
import { abortOf, EpisodeAbort, throwIfAborted, type InterruptReason } from "./episode-abort.js";
import { episodeMetaCommon } from "./episode-meta.js";

export interface EpisodeContext {
  assignment: EpisodeAssignment;
  plan: EpisodePlan;
  hardware: CellHardware;
  monitor: TaskMonitor;
  /** Where `<episode_id>.mcap` and `<episode_id>.mp4` are written. */
  recordingsDir: string;
  /** The agent's zstd worker for the recording's chunks; without one the recorder starts its own. */
  chunkCompressor?: ChunkCompressor;
  cellId: string;
  robotModel: string;
  metrics: AgentMetrics;
  /** Aborted with an EpisodeAbort as reason (e-stop, cancel, link loss). */
  signal: AbortSignal;
  /** The e-stop watcher's latest trip: an e-stop abort records its torque-off latency on /events. */
  lastEstopTrip?: () => EstopTrip | undefined;
  /** Late control steps in a row before the arm holds (default 3). */
  missedPeriodLimit?: number;
  /** Live viewers' tap: frames and joint readings by reference, nothing encoded or copied here. */
  live?: LiveTap;
  /** Instrument kinds the task's success predicates and stages read (a lost one ends the episode); default all. */
  scoredInstruments?: readonly string[];
  /** An instrument failed MAX_INSTRUMENT_MISSES_IN_A_ROW reads in a row (the agent reports it down). */
  onInstrumentLost?: (instrument: { kind: string; name: string }, detail: string) => void;
  /** The safety envelope every policy target passes (default: the envelope's defaults for `robotModel`). */
  envelope?: SafetyEnvelopeOptions;
  /**
   * A person answers interventions at the operator station (see the header); default none: the
   * hardware's Intervention hook nudges, or the episode records `intervention_unavailable`.
   */
  interventionGate?: InterventionGate;
}

export type { InterventionRecord };

export type EpisodeResult =
  | {
      kind: "finished";
      outcome: "success" | "failure";
      failureCluster: string;
      durationS: number;
      resetS: number;
      evaluation: TaskStatus;
      events: EpisodeEvent[];
      interventions: InterventionRecord[];
      meta: Record<string, unknown>;
      mcapPath: string;
      /** Every camera's episode video, the primary camera's (kind `video`) first. */
      videos: EpisodeVideoFile[];
      /** The last frame each camera captured: what a judge endpoint is shown (docs/judges.md). */
      finalFrames: Array<{ camera: string; frame: CameraFrame }>;
    }
  | { kind: "interrupted"; reason: InterruptReason; detail: string; durationS: number; mcapPath?: string; instrument?: { kind: string; name: string } };

/** Success must hold this long before the episode stops, so the recording shows it settled. */
const SUCCESS_HOLD_S = 0.5;
/** Episode time of the one nudge of `interventions: "scripted"`, seconds. */
export const SCRIPTED_INTERVENTION_AT_S = 4;
/** Interventions per episode at most; a policy that stalls again after this many keeps its failure. */
export const MAX_INTERVENTIONS_PER_EPISODE = 3;
/** Consecutive failed bus reads or writes before the episode is abandoned as a hardware fault. */
const MAX_BUS_ERRORS_IN_A_ROW = 3;
/**
 * Failed reads in a row after which an instrument counts as lost. An instrument the task's predicates
 * read then ends the episode as `instrument_lost` (unscorable: requeued, never counted); one they do
 * not read is only reported (`onInstrumentLost`) and the episode goes on without it.
 */
export const MAX_INSTRUMENT_MISSES_IN_A_ROW = 3;

export async function runEpisode(ctx: EpisodeContext): Promise<EpisodeResult> {
  const { assignment, plan, hardware, monitor, metrics, signal } = ctx;
  const { motors, clock } = hardware;
  const dof = motors.jointNames.length;
  const envelope = new SafetyEnvelope(ctx.envelope ?? compileSafetyEnvelopeOptions({}, { model: ctx.robotModel, jointNames: motors.jointNames }));
  const episodeId = assignment.episodeId;
  const recorder = await McapRecorder.create(ctx.recordingsDir, episodeId, {
    jointNames: motors.jointNames, cameraNames: hardware.cameras.map((c) => c.name), robotModel: ctx.robotModel, compressor: ctx.chunkCompressor,
  });
  const videos = new EpisodeVideos(ctx.recordingsDir, episodeId, hardware.cameras);
  const events: EpisodeEvent[] = [];
  let loopStartNs = clock.nowNs();
  const elapsedS = () => Number(clock.nowNs() - loopStartNs) / 1e9;
  let resetS = 0;
  let session: PolicySession | undefined;
  const interventions: InterventionRecord[] = [];
  let cameraSkew = new CameraSkewStats();

  const metaCommon = () => episodeMetaCommon(assignment, plan, hardware, ctx);

  /** Holds at `positionRad` (measured this step) and records it as the step's target. */
  const hold = async (positionRad: readonly number[]): Promise<void> => {
    await motors.writeGoalPositions(positionRad).catch(() => metrics.busErrors.inc());
    envelope.held(positionRad);
    recorder.jointTargets(clock.nowNs(), positionRad);
  };
  /** The policy's targets, or "hold" when its reply missed the latency budget this step. */
  const actOrHold = async (policy: PolicySession, observation: Observation): Promise<number[] | "hold"> => {
    try {
      return await policy.act(observation);
    } catch (error) {
      if (error instanceof PolicyStepMissed) {
        metrics.policyStepMisses.inc();
        return "hold";
      }
      throw error;
    }
  };

  // Any abort but an e-stop (which already cut torque) holds the arm where it is at once, even
  // while the loop still awaits the policy: goals = measured, torque stays on.
  let abortHold: Promise<unknown> = Promise.resolve();
  let torqueEnabled = false;
  const onAbort = () => {
    const abort = abortOf(signal);
    if (!abort || abort.reason === "estop" || !torqueEnabled) return;
    metrics.protectiveStops.inc({ cause: abort.reason });
    abortHold = holdPosition(motors).catch(() => undefined);
  };
  signal.addEventListener("abort", onAbort, { once: true });

  try {
    recorder.meta(clock.nowNs(), { phase: "start", ...(await metaCommon()) });
    resetS = (await hardware.scene.reset(plan.reset)).resetS;
    throwIfAborted(signal);
    let policy: PolicySession;
    try {
      const cameras = Object.fromEntries(hardware.cameras.flatMap((c) => (c.calibration ? [[c.name, { width: c.calibration.width, height: c.calibration.height }]] : [])));
      policy = session = await hardware.policies.start(assignment.policy, { model: ctx.robotModel, dof, cameras }, { runId: assignment.runId });
      await policy.reset({ seed: assignment.seed, instruction: plan.instruction, controlRateHz: assignment.controlRateHz });
    } catch (error) {
      throw new EpisodeAbort("policy_error", `the policy did not start: ${(error as Error).message}`);
    }
    throwIfAborted(signal);
    await motors.setTorque(true);
    torqueEnabled = true;
    throwIfAborted(signal);

    const contract = contractOf(assignment.policy);
    const detector = new EventDetector({
      nominalZM: Object.fromEntries(Object.entries(assignment.task.initialConditions).map(([name, c]) => [name, c.pose[2]])),
    });
    const periodNs = BigInt(Math.round(1e9 / assignment.controlRateHz));
    const cameraSchedules: CameraSchedule[] = hardware.cameras.map((camera) => ({ camera, periodNs: BigInt(Math.round(1e9 / camera.rateHz)), nextCaptureNs: undefined }));
    const frames = new Map<string, CameraFrame>();
    cameraSkew = new CameraSkewStats();
    const captureSinks: CaptureSinks = { frames, recorder, live: ctx.live, skew: cameraSkew };
    /** The previous step's events from the monitor's status: already recorded, fed to the monitor with this step. */
    let fedBack: EpisodeEvent[] = [];
    let successAtS: number | undefined;
    let busErrors = 0;
    let policyFailure: string | undefined;
    /** Why the safety envelope's stop rule ended the episode (failure cluster safety_limit). */
    let safetyStop: string | undefined;
    const stall = new StallDetector();
    // The idle end: a robot that stands still with the task unfinished is not going to finish it; ending
    // the episode there saves the robot's time (runs with interventions ask a person instead: the stall above).
    const idle = assignment.idleEndS > 0 && assignment.interventions === "none" ? new StallDetector(assignment.idleEndS) : undefined;
    let idleEnded = false;
    const operator = ctx.interventionGate && assignment.interventions !== "none"
      ? new OperatorInterventions({ gate: ctx.interventionGate, episodeId, plan: plan.reset, elapsedS, worldHands: hardware.intervention })
      : undefined;
    /** Episode seconds the episode was paused for a person: not the policy's time (max_duration_s leaves them out). */
    let heldS = 0;
    const record = (event: EpisodeEvent) => {
      events.push(event);
      recorder.event(clock.nowNs(), event);
    };
    /** Asks the cell for a hand in the scene, records it, and returns the intervention's event. */
    const intervene = async (kind: InterventionKind, tS: number): Promise<EpisodeEvent> => {
      if (!hardware.intervention) {
        return { tS, name: `intervention_unavailable:${kind}`, detail: "this cell has no intervention hook (no technician on hand); the episode goes on untouched" };
      }
      try {
        const { durationS, detail } = await hardware.intervention.intervene(kind, plan.reset);
        interventions.push({ t_s: tS, kind, detail, duration_s: durationS });
        return { tS, name: `intervention:${kind}`, detail };
      } catch (error) {
        return { tS, name: `intervention_failed:${kind}`, detail: (error as Error).message };
      }
    };
    /**
     * One read of an instrument: a failure leaves the frame without it; MAX_INSTRUMENT_MISSES_IN_A_ROW
     * in a row mark it lost and, when the task reads it, end the episode as unscorable.
     */
    const misses = new Map<string, number>();
    const lost = new Set<string>();
    const instrumentRead = async <T>(kind: string, read: (() => Promise<T>) | undefined): Promise<T | undefined> => {
      if (!read || lost.has(kind)) return undefined;
      try {
        const value = await read();
        misses.set(kind, 0);
        return value;
      } catch (error) {
        const count = (misses.get(kind) ?? 0) + 1;
        misses.set(kind, count);
        if (count < MAX_INSTRUMENT_MISSES_IN_A_ROW) return undefined;
        const detail = `instrument ${kind} stopped answering (${count} failed reads in a row: ${(error as Error).message})`;
        lost.add(kind);
        ctx.onInstrumentLost?.({ kind, name: "" }, detail);
        if (!ctx.scoredInstruments || ctx.scoredInstruments.includes(kind)) {
          throw new EpisodeAbort("instrument_lost", `${detail}; the task's predicates read it, so this attempt cannot be scored and is run again`, { kind, name: "" });
        }
        return undefined;
      }
    };
    // Bound once: a new bound function every step is a new call target in instrumentRead each time.
    const readGripper = hardware.gripper?.read.bind(hardware.gripper);
    const readWristFt = hardware.wristFt?.read.bind(hardware.wristFt);
    const readMocap = hardware.mocap?.readPoses.bind(hardware.mocap);
    const lateness = new MissedPeriodMonitor({ limit: ctx.missedPeriodLimit });
    loopStartNs = clock.nowNs();
    let deadlineNs = loopStartNs;

    // The loop is a function of its own: runEpisode resumes at every await of the loop, so V8 compiled the
    // whole ~370-line function with TurboFan (0.4-0.5 s of compile CPU), and the code after the loop, never
    // run when it was compiled, deoptimized it at every episode's end ("insufficient type feedback"): one
    // compile per episode. This closure holds only the loop (its compiles took 150-260 ms and did not deopt
    // over 6 episodes; a new closure per episode is still compiled again about every other episode), and
    // runEpisode is no longer hot. docs/simulation.md has the figures.
    const controlLoop = async (): Promise<void> => {
      for (;;) {
        throwIfAborted(signal);
        const nowNs = clock.nowNs();
        metrics.controlJitterS.observe(Math.max(0, Number(nowNs - deadlineNs) / 1e9));
        const tS = Number(nowNs - loopStartNs) / 1e9;
        /** This step's own events (protective stop, policy error): recorded and fed to the monitor with this step. */
        const stepEvents: EpisodeEvent[] = [];

        let joints: JointState | undefined;
        let gripper: { opening: number; holding: boolean } | undefined;
        let wrench: Wrench | undefined;
        let poses: { tNs: bigint; poses: ObjectPose[] } | undefined;
        try {
          [joints, gripper, wrench, poses] = await Promise.all([
            motors.readState(),
            instrumentRead("gripper_state", readGripper),
            instrumentRead("ft_wrist", readWristFt),
            instrumentRead("mocap", readMocap),
          ]);
          busErrors = 0;
        } catch (error) {
          if (error instanceof EpisodeAbort) throw error; // instrument_lost: not a bus error
          metrics.busErrors.inc();
          if (++busErrors >= MAX_BUS_ERRORS_IN_A_ROW) throw new EpisodeAbort("hardware_fault", `sensor reads failed ${busErrors} times in a row: ${(error as Error).message}`);
        }
        if (joints) {
          recorder.jointStates(nowNs, joints);
          ctx.live?.joints(joints.positionRad);
        }
        if (wrench) recorder.wrench(nowNs, wrench);
        if (poses) recorder.objectPoses(nowNs, poses.tNs, poses.poses);

        const captured = await captureDueCameras(cameraSchedules, nowNs, captureSinks);
        // Every camera's video gets each frame it captured: one video frame per captured frame.
        for (const { camera } of captured) await videos.addFrame(camera.name, frames.get(camera.name)!);

        if (policyFailure === undefined) {
          try {
            const observation = buildObservation(contract, { tNs: nowNs, joints, gripperOpening: gripper?.opening, wrench, frames, instruction: plan.instruction });
            const targets = await actOrHold(policy, observation);
            throwIfAborted(signal); // never command the motors after an e-stop or abort
            const { decision, startsHold } = lateness.step(clock.nowNs() - (deadlineNs + periodNs), periodNs);
            if (decision !== "act") {
              // The action is more than a period old: never send it.
              if (decision === "hold" && joints) await hold(joints.positionRad);
              if (startsHold) {
                metrics.protectiveStops.inc({ cause: "missed_periods" });
                stepEvents.push({ tS, name: protectiveStopEvent("missed_periods"), detail: `${ctx.missedPeriodLimit ?? 3} control steps in a row finished more than one period late; holding position` });
              }
            } else if (targets === "hold") {
              if (joints) await hold(joints.positionRad);
            } else if (!Array.isArray(targets) || targets.length !== dof || !targets.every(Number.isFinite)) {
              policyFailure = `the policy returned ${Array.isArray(targets) ? `${targets.length} targets` : typeof targets}, but ${ctx.robotModel} takes ${dof} finite joint targets (${motors.jointNames.join(", ")})`;
            } else if (!envelope.canLimit(joints?.positionRad)) {
              // No previous goal and no joint reading this step: the envelope has nothing to limit the step against,
              // so nothing is sent (the arm stays where it is) rather than unchecked targets.
            } else {
              // The one place a policy's targets meet the safety envelope, on every kind of bus.
              const safe = envelope.step(targets, joints?.positionRad);
              if (safe.clamps.length > 0) {
                for (const clamp of safe.clamps) metrics.safetyClamps.inc({ kind: clamp.kind });
                stepEvents.push({ tS, name: "safety_clamp", detail: clampEventDetail(safe.clamps) });
              }
              if (safe.stop !== undefined) {
                safetyStop = safe.stop;
                metrics.protectiveStops.inc({ cause: "safety_limit" });
                stepEvents.push({ tS, name: "safety_limit", detail: safe.stop });
                if (joints) await hold(joints.positionRad);
              } else {
                await motors.writeGoalPositions(safe.commandRad).catch((error: Error) => {
                  metrics.busErrors.inc();
                  if (++busErrors >= MAX_BUS_ERRORS_IN_A_ROW) throw new EpisodeAbort("hardware_fault", `goal writes failed ${busErrors} times in a row: ${error.message}`);
                });
                recorder.jointTargets(nowNs, safe.commandRad);
              }
            }
          } catch (error) {
            if (error instanceof EpisodeAbort) throw error;
            if (error instanceof PolicyEndpointTimeout) {
              if (joints) await hold(joints.positionRad);
              metrics.protectiveStops.inc({ cause: "policy_endpoint_timeout" });
              const event = { tS, name: protectiveStopEvent("policy_endpoint_timeout"), detail: error.message };
              events.push(event);
              recorder.event(nowNs, event);
              throw new EpisodeAbort("policy_endpoint_timeout", error.message);
            }
            policyFailure = `the policy's act() failed: ${(error as Error).message}`;
          }
          if (policyFailure !== undefined) stepEvents.push({ tS, name: "policy_error", detail: policyFailure });
        }

        const signals = signalFrameOf(tS, motors.jointNames, joints, gripper, wrench, poses?.poses);
        const physical = detector.fromSignals(signals);
        monitor.update({ ...signals, events: [...fedBack, ...stepEvents, ...physical].map((e) => e.name) });
        const status = monitor.status();
        const logical = detector.fromStatus(tS, status);
        // Each event is recorded once, in the step it happened.
        for (const event of [...stepEvents, ...physical, ...logical]) {
          events.push(event);
          recorder.event(nowNs, event);
        }
        // Events from the monitor's status reach the monitor with the next frame (not the recording again).
        fedBack = logical;
        if (status.success && successAtS === undefined) successAtS = tS;
        if (policyFailure !== undefined || safetyStop !== undefined) break;
        if (successAtS !== undefined && tS - successAtS >= SUCCESS_HOLD_S) break;
        if (tS - heldS >= assignment.maxDurationS) break;
        const fingertipM = poses?.poses.find((p) => p.name === "gripper")?.positionM;
        if (idle?.update({ tS, jointsRad: joints?.positionRad, fingertipM, succeeded: status.success })) {
          idleEnded = true;
          record({ tS, name: "idle_end", detail: `the robot stood idle for ${assignment.idleEndS} s with the task unfinished (no joint moved more than ${JOINT_PROGRESS_RAD} rad, the fingertip less than ${FINGERTIP_PROGRESS_M * 1000} mm); the episode ends unsuccessful` });
          break;
        }

        if (assignment.interventions !== "none" && interventions.length < MAX_INTERVENTIONS_PER_EPISODE && (!operator || operator.offers < MAX_INTERVENTIONS_PER_EPISODE)) {
          const due = assignment.interventions === "on_stall"
            ? stall.update({ tS, jointsRad: joints?.positionRad, fingertipM, succeeded: status.success })
            : tS >= SCRIPTED_INTERVENTION_AT_S && interventions.length === 0 && !events.some((e) => e.name.endsWith(":scripted"));
          if (due && operator) {
            // A person is asked to come: no policy steps; the bus holds where the arm is until they are done.
            if (joints) await hold(joints.positionRad);
            else await holdPosition(motors).catch(() => metrics.busErrors.inc());
            let attended: AttendOutcome;
            try {
              attended = await operator.attend(assignment.interventions, tS, signal);
            } catch (error) {
              throwIfAborted(signal);
              throw new EpisodeAbort("operator_abort", `${(error as Error).message}; this attempt ends and runs again`);
            }
            if (attended.record) interventions.push(attended.record);
            record(attended.event);
            heldS += attended.pausedS;
            throwIfAborted(signal);
            deadlineNs = clock.nowNs();
            stall.restart({ tS: elapsedS() });
            envelope.restart();
          } else if (due) {
            const event = await intervene(assignment.interventions, tS);
            events.push(event);
            recorder.event(clock.nowNs(), event);
            throwIfAborted(signal);
            // The pause is the technician's, not a late control step: the schedule starts over.
            deadlineNs = clock.nowNs();
            stall.restart({ tS: elapsedS() });
            envelope.restart();
          }
        }

        deadlineNs += periodNs;
        const afterNs = clock.nowNs();
        if (afterNs > deadlineNs) {
          const missed = (afterNs - deadlineNs) / periodNs + 1n;
          metrics.missedPeriods.inc(Number(missed));
          deadlineNs += missed * periodNs;
        }
        await clock.sleepUntil(deadlineNs);
      }
    };
    await controlLoop();

    const evaluation = monitor.status();
    const success = successAtS !== undefined && policyFailure === undefined && safetyStop === undefined;
    const durationS = elapsedS();
    const failureCluster = success ? "" : failureClusterOf(events, evaluation.stages, policyFailure !== undefined ? "policy_error" : safetyStop !== undefined ? "safety_limit" : idleEnded ? "idle" : "time");
    const outcome = { outcome: success ? "success" : "failure", failure_cluster: failureCluster, duration_s: durationS, reset_s: resetS };
    session = undefined;
    await policy.close().catch(() => undefined);
    const meta = {
      phase: "end", ...(await metaCommon()), outcome, event_count: events.length, safety_clamps: envelope.clampCount,
      ...(policy.image ? { policy_image: policy.image } : {}),
      ...(hardware.cameras.length > 1 ? { camera_sync: cameraSkew.summary() } : {}),
      // Which camera's video is the episode's `video` artifact (the others are `video:<camera>`).
      ...(videos.primaryCamera !== undefined ? { video_camera: videos.primaryCamera } : {}),
      ...(assignment.interventions !== "none" ? { interventions_mode: assignment.interventions, interventions } : {}),
    };
    recorder.meta(clock.nowNs(), meta);
    const mcapPath = join(ctx.recordingsDir, `${episodeId}.mcap`);
    await recorder.finish(mcapPath);
    const videoFiles = await videos.finish();
    const finished = {
      kind: "finished" as const, outcome: success ? "success" as const : "failure" as const, failureCluster, durationS, resetS, evaluation, events, interventions, meta,
      mcapPath, videos: videoFiles,
    };
    // The final frames are pictures (JPEG bytes, bigint capture times): kept out of the result's JSON and of
    // comparisons of results (non-enumerable), which describe what happened; the agent hands them to a judge.
    return Object.defineProperty(finished, "finalFrames", { value: [...frames].map(([camera, frame]) => ({ camera, frame })), enumerable: false }) as typeof finished & { finalFrames: Array<{ camera: string; frame: CameraFrame }> };
  } catch (error) {
    const abort = error instanceof EpisodeAbort ? error : abortOf(signal) ?? new EpisodeAbort("hardware_fault", (error as Error).message);
    await abortHold;
    const tS = elapsedS();
    if (abort.reason === "estop") {
      const outcome = await ctx.lastEstopTrip?.()?.torqueOff;
      const detail = outcome ? JSON.stringify({ latency_ms: Number(outcome.latencyMs.toFixed(3)), ...(outcome.error ? { error: outcome.error } : {}) }) : abort.detail;
      recorder.event(clock.nowNs(), { tS, name: "estop_triggered", detail });
    } else if (abort.reason === "link_lost") {
      recorder.event(clock.nowNs(), { tS, name: protectiveStopEvent("link_lost"), detail: `${abort.detail}; holding position, torque on; this episode will not resume` });
    }
    await session?.close().catch(() => undefined);
    await videos.abort();
    const durationS = elapsedS();
    recorder.meta(clock.nowNs(), { phase: "end", outcome: { interrupted: abort.reason, detail: abort.detail, duration_s: durationS } });
    const mcapPath = join(ctx.recordingsDir, `${episodeId}.mcap.interrupted`);
    const kept = await recorder.finish(mcapPath).then(() => true, () => false);
    return { kind: "interrupted", reason: abort.reason, detail: abort.detail, durationS, mcapPath: kept ? mcapPath : undefined, ...(abort.instrument ? { instrument: abort.instrument } : {}) };
  } finally {
    signal.removeEventListener("abort", onAbort);
    ctx.interventionGate?.withdraw();
  }
}
