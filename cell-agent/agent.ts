/**
 * The cell agent process core: links to the coordinator, takes one episode at a time, runs and
 * records it, reports through the durable outbox, uploads artifacts, and owns the e-stop path.
 * Device drivers and simulators build a `CellHardware` and call `startCellAgent`.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Metadata } from "@grpc/grpc-js";
import type { Registry } from "prom-client";
import type { AgentMessage, AssignEpisode, ArtifactRef, Attention, CellLinkClient, Hello } from "../protocol/gen/cell.js";
import { nextAgentState, type AgentEvent, type AgentState } from "./agent-state.js";
import { compileSafetyEnvelopeOptions } from "./safety/envelope.js";
import type { AgentConfig } from "./config.js";
import { sceneAttention } from "./devices/scene/scene-attention.js";
import type { SceneReadyGate } from "./devices/scene/scene-ready-gate.js";
import { DutyCycle } from "./duty-cycle.js";
import { parseAssignment, type EpisodeAssignment } from "./episode/assignment.js";
import { realizeEpisodePlan, type EpisodePlan } from "./episode/plan.js";
import { runEpisode, type EpisodeResult } from "./episode/runner.js";
import { EpisodeAbort } from "./episode/episode-abort.js";
import { defaultCompileTaskMonitor, type CompileTaskMonitor } from "./episode/task-monitor.js";
import type { CellHardware, PolicyRuntime } from "./hardware/types.js";
import { GrpcLink } from "./link/grpc-link.js";
import { LiveFeed } from "./link/live-feed.js";
import { Outbox } from "./link/outbox.js";
import { createAgentMetrics } from "./metrics.js";
import { CompositePolicyRuntime } from "./policy/composite-runtime.js";
import { LerobotUnitsPolicyRuntime } from "./policy/lerobot-units-runtime.js";
import { lerobotFrameSource } from "./lerobot-import.js";
import { loadCalibration, type Calibration } from "./devices/servo/calibration.js";
import { loadFirmwarePins } from "../firmware-pins/pins.js";
import { CheckpointPolicyRuntime } from "./policy/checkpoint-runtime.js";
import { EndpointPolicyRuntime } from "./policy/endpoint-runtime.js";
import { ModelCache } from "./policy/model-cache.js";
import { clearRunningMarker, recoverAfterCrash, renameFree, writeRunningMarker } from "./recovery.js";
import { EstopWatch, type EstopTrip, type TorqueOffOutcome } from "./safety/estop-watch.js";
import { ArtifactStore } from "./upload/artifact-store.js";
import { InstrumentHealth } from "./instrument-health.js";
import { cellInstruments, instrument } from "./cell-instruments.js";
import { taskInstrumentKinds } from "../protocol/predicates/index.js";
import { Uploader } from "./upload/uploader.js";
import { LabelGate } from "./episode/label-gate.js";
import { applyOperatorAnswer } from "./episode/operator-answers.js";
import { InterventionGate, interventionAttention, type InterventionGateOptions } from "./episode/intervention-gate.js";
import { splitPersonJudged } from "../protocol/predicates/index.js";
import { judgeIfNamed, type JudgeStep } from "./episode/judge-step.js";
import { episodeVerdict, type LabelStep } from "./episode/episode-verdict.js";
import { startChunkCompressor } from "./recording/chunk-compressor.js";

export const AGENT_VERSION = "0.5.0";

export interface CellAgent {
  /** Stops taking work, aborts a running episode ("agent_restart"), closes the link. Does not close the hardware. */
  stop(): Promise<void>;
  metrics: Registry;
  /** Current work state, as heartbeats report it. */
  state(): AgentState;
  /** host:port of the coordinator the cell is connected to (welcomed by), or null while it is connected to none. */
  coordinator(): string | null;
  /** Clears an e-stop so the cell takes work again; throws while the e-stop input is still pressed. */
  resetEstop(): void;
  /** Resolves when no episode is running and the upload queue is drained as far as it can be (tests). */
  settled(): Promise<void>;
}

export interface CellAgentOptions {
  /** The success-predicate compiler; default: protocol/predicates' `compileTaskMonitor`. */
  compileTaskMonitor?: CompileTaskMonitor;
  /** Where plain-language log lines go (default: console.log with a "[cell <id>]" prefix). */
  log?: (line: string) => void;
  /**
   * Policy runtimes besides the hardware's own (`hardware.policies`, which runs containers); default
   * `[new EndpointPolicyRuntime(), new CheckpointPolicyRuntime(<the cell's model cache>)]` for `type: "endpoint"` and
   * `type: "checkpoint"` policies.
   */
  policyRuntimes?: PolicyRuntime[];
  /**
   * Why the cell must take no new work right now, as "<reason>: <plain sentence>" (e.g. "disk_full: ..."),
   * or null. Checked before each assignment; while it holds, idle heartbeats report "held". Keep it cheap.
   */
  workHold?: () => string | null;
  /**
   * Where a reset that waits for a person waits (the hardware's operator scene reset). With it, the
   * agent reports `awaiting_reset` and an Attention while a reset waits, relays the operator station's
   * answer (scene ready, abort) to it, and cancels the wait when the episode is aborted. Default none.
   */
  sceneGate?: SceneReadyGate;
  /**
   * The cell's calibration of its arm's servos, for LeRobot units (docs/policies.md), when the arm
   * was not opened from `config.motors` (simulated cells). Default: the calibration file of the one
   * bus when motors.kind is "feetech".
   */
  servoCalibration?: Calibration;
  /**
   * A person beside the cell judges success (the `operator` instrument): after an episode of a task
   * with `operator.success` the agent reports `awaiting_label` and an Attention "label", waits for the
   * station's label up to `timeoutMs` (default 10 minutes), and reports the episode `unlabelled` when
   * none came. Default none (the cell does not offer `operator`).
   */
  labels?: { timeoutMs?: number };
  /**
   * A person at the operator station performs the run's interventions (on_stall, scripted): when one is
   * due the episode pauses (no policy steps, the arm held), the agent reports `intervening` and an
   * Attention "intervene" until the person has pressed Intervene and Done (or the offer lapsed), and the
   * help is recorded on the episode (episode/intervention-gate.ts). Default none: the hardware's
   * Intervention hook, if any, nudges by itself.
   */
  interventions?: Pick<InterventionGateOptions, "offerTimeoutMs" | "holdTimeoutMs">;
}

export async function startCellAgent(config: AgentConfig, hardware: CellHardware, options: CellAgentOptions = {}): Promise<CellAgent> {
  const log = options.log ?? ((line: string) => console.log(`[cell ${config.cellId}] ${line}`));
  const compileTaskMonitor = options.compileTaskMonitor ?? defaultCompileTaskMonitor;
  const recordingsDir = join(config.dataDir, "recordings");
  mkdirSync(recordingsDir, { recursive: true });
  // One zstd worker for every episode's recording, started now rather than at each episode's start.
  const chunkCompressor = startChunkCompressor();
  const metrics = createAgentMetrics(config.cellId);
  // Checked once at start: a bad envelope (a joint the robot lacks, a box without kinematics) stops the agent here, in words.
  const envelope = compileSafetyEnvelopeOptions(config.safety.envelope, { model: config.robotModel, jointNames: hardware.motors.jointNames });
  const outbox = Outbox.open(config.dataDir);
  const store = new ArtifactStore(join(config.dataDir, "outbox"));
  await store.init();
  let interruptedEpisodeId = (await recoverAfterCrash(config.dataDir, recordingsDir, outbox, log, store)) ?? "";

  // Checkpoint models come over the link, which exists further down; the cache asks for it when it fetches.
  let linkForModels: (() => { client: CellLinkClient; metadata: Metadata }) | undefined;
  const models = new ModelCache({ dir: join(config.dataDir, "models"), link: () => linkForModels?.(), log });
  const motorsConfig = config.motors;
  const policies = new LerobotUnitsPolicyRuntime(new CompositePolicyRuntime([
    ...(options.policyRuntimes ?? [new EndpointPolicyRuntime(), new CheckpointPolicyRuntime(models)]),
    hardware.policies,
  ]), lerobotFrameSource({
    dataDir: config.dataDir,
    robotModel: config.robotModel,
    jointNames: loadFirmwarePins().models.find((m) => m.id === config.robotModel)?.joints ?? hardware.motors.jointNames,
    servoCalibration: () => options.servoCalibration ?? (motorsConfig?.kind === "feetech" && motorsConfig.buses.length === 1 ? loadCalibration(motorsConfig.buses[0].calibration) : undefined),
    ...(hardware.motors.readHomingOffsetTicks ? { readHomingOffsetTicks: () => hardware.motors.readHomingOffsetTicks!() } : {}),
  }));
  metrics.watchMotorBus(hardware.motors);
  // Created before anything can move the arm; the handlers below only run on a trigger.
  const estopWatch: EstopWatch = new EstopWatch({
    input: hardware.estop,
    motors: hardware.motors,
    latchFile: join(config.dataDir, "estop-latched.json"),
    onTrip: () => onEstopTrip(),
    onTorqueOff: (outcome, trip) => onEstopTorqueOff(outcome, trip),
  });
  const motors = estopWatch.guard(hardware.motors);
  let estopEpisodeId = "";
  let state: AgentState = estopWatch.latched ? "estopped" : "idle";
  let heldReason = "";
  const move = (event: AgentEvent) => {
    state = nextAgentState(state, event);
  };
  const duty = new DutyCycle();
  // Made once the link exists (it uses its client); an e-stop can trip before that.
  let liveFeed: LiveFeed | undefined;
  let current: { assignment: EpisodeAssignment; abort: AbortController; done: Promise<void> } | undefined;
  const NO_ATTENTION: Attention = { kind: "", episodeId: "", sinceMs: 0, sceneJson: "" };
  // What the cell needs from a person now, and the wall time people spent on the current episode's resets.
  let attention: Attention = NO_ATTENTION;
  let operatorResetMs = 0;
  const labelGate = new LabelGate();
  const labelTimeoutMs = options.labels?.timeoutMs ?? 10 * 60_000;
  const interventionGate = options.interventions ? new InterventionGate(options.interventions) : undefined;
  let backlog = (await store.list()).length;
  metrics.uploadBacklog.set(backlog);

  const send = (body: Omit<AgentMessage, "seq">): AgentMessage => {
    const message = outbox.enqueue(body);
    link.send(message);
    return message;
  };

  const link: GrpcLink = new GrpcLink(config, outbox, {
    hello: async (): Promise<Hello> => ({
      cellId: config.cellId, agentVersion: AGENT_VERSION, robotModel: config.robotModel, firmware: await hardware.motors.readFirmware(),
      environment: config.environment, instruments: cellInstruments(hardware, Boolean(options.labels)), policyImages: policies.available(),
      lastSeqSent: outbox.lastSeqSent, interruptedEpisodeId, safetyState: estopWatch.latched || hardware.estop.isPressed() ? "estopped" : "ok",
    }),
    heartbeat: () => ({
      sentAtMs: Date.now(), state: state === "held" && heldReason === "firmware_mismatch" ? "firmware_mismatch" : state === "idle" && options.workHold?.() ? "held" : state,
      episodeId: current?.assignment.episodeId ?? "", dutyCyclePct: duty.percent(), uploadBacklog: backlog,
      instrumentsDown: instrumentHealth.list().map((i) => instrument(i.kind, i.name)),
    }),
    onWelcome: () => {
      interruptedEpisodeId = "";
      move("welcome");
      // Attention is live state, not durable: the coordinator (maybe another one) learns it anew.
      if (attention.kind) link.send({ seq: 0, attention });
      uploader.kick();
    },
    onAck: () => uploader.kick(),
    onAssign: (assign) => accept(assign),
    onCancel: (cancel) => {
      // The runner holds the arm where it is and ends the attempt; `report` then says "cancelled",
      // never EpisodeFinished, even if the attempt was already wrapping up.
      if (current?.assignment.episodeId === cancel.episodeId) {
        log(`the coordinator cancelled episode ${cancel.episodeId}: ${cancel.reason || "no reason given"}; aborting and holding position`);
        abortCurrent(new EpisodeAbort("cancelled", cancel.reason || "the coordinator cancelled the episode"));
      }
    },
    onOperatorAnswer: (answer) => applyOperatorAnswer(answer, {
      runningEpisodeId: () => current?.assignment.episodeId, labelGate, sceneGate: options.sceneGate, interventionGate, abort: abortCurrent, log,
    }),
    onWatch: (watch) => liveFeed?.setWatch(watch),
    onRefusal: (refusal) => {
      log(`the coordinator will not give this cell work (${refusal.code}): ${refusal.message}`);
      heldReason = refusal.code;
      move("refused");
    },
    // The link logs each disconnection and where it goes next.
    onDisconnected: (reason) => {
      liveFeed?.linkDown();
      if (current) {
        interruptedEpisodeId = current.assignment.episodeId;
        abortCurrent(new EpisodeAbort("link_lost", `the link to the coordinator went down: ${reason}`));
      }
    },
  }, log);

  // A lost instrument is told at once (an extra heartbeat, ahead of the interruption it causes).
  const instrumentHealth = new InstrumentHealth({
    probes: {
      gripper_state: hardware.gripper && (() => hardware.gripper!.read()),
      ft_wrist: hardware.wristFt && (() => hardware.wristFt!.read()),
      mocap: hardware.mocap && (() => hardware.mocap!.readPoses()),
    },
    onChange: () => link.sendHeartbeat(),
    log,
  });

  // Each of these reads link.client per call, so after a failover it reaches the new coordinator.
  linkForModels = () => ({ client: link.client, metadata: link.metadata() });
  liveFeed = new LiveFeed({ client: () => link.client, metadata: () => link.metadata(), cameras: hardware.cameras, jointNames: hardware.motors.jointNames, log });
  metrics.watchLink(config.coordinatorAddresses, () => link.coordinator);

  const uploader = new Uploader({
    store, client: () => link.client, metadata: () => link.metadata(), chunkBytes: config.uploadChunkBytes,
    ackedSeq: () => outbox.lastSeqAcked, linkUp: () => link.isWelcomed,
    onBacklog: (count) => {
      backlog = count;
      metrics.uploadBacklog.set(count);
    },
    onSetAside: (_artifact, reason) => metrics.uploadsSetAside.inc({ reason }),
    log,
  });

  /** Aborts the running episode, including a reset that waits for a person. */
  function abortCurrent(abort: EpisodeAbort): void {
    if (!current) return;
    current.abort.abort(abort);
    options.sceneGate?.cancel(abort.detail);
  }

  // A reset waiting for a person: report it (state and Attention), and count the person's time.
  const unsubscribeScene = options.sceneGate?.subscribe((pending) => {
    if (pending) {
      const since = Date.parse(pending.since);
      attention = {
        kind: "reset", episodeId: current?.assignment.episodeId ?? "", sinceMs: Number.isFinite(since) ? since : Date.now(),
        sceneJson: JSON.stringify(sceneAttention(pending, current?.assignment.task.initialConditions ?? {}, hardware.cameras)),
      };
      if (state === "busy") move("await_person");
    } else {
      if (attention.kind === "reset") operatorResetMs += Math.max(0, Date.now() - attention.sinceMs);
      attention = NO_ATTENTION;
      move("person_done");
    }
    link.send({ seq: 0, attention });
    liveFeed?.event({ type: "attention", kind: attention.kind || null, episode_id: attention.episodeId || null });
  });

  // An episode paused for a person's help: report it (Attention "intervene", and state `intervening`).
  const unsubscribeIntervention = interventionGate?.subscribe((offer) => {
    attention = offer
      ? { kind: "intervene", episodeId: offer.episodeId, sinceMs: offer.sinceMs, sceneJson: JSON.stringify(interventionAttention(offer)) }
      : NO_ATTENTION;
    if (offer && state === "busy") move("hold_for_person");
    if (!offer && state === "intervening") move("helped");
    link.send({ seq: 0, attention });
    liveFeed?.event({ type: "attention", kind: attention.kind || null, episode_id: attention.episodeId || null });
  });

  function accept(message: AssignEpisode): void {
    const hold = state === "idle" ? options.workHold?.() : null;
    if (hold) {
      log(`declined episode ${message.episodeId}: ${hold}`);
      send({ episodeInterrupted: { episodeId: message.episodeId, attempt: message.attempt, reason: "cancelled", detail: hold, durationS: 0, artifacts: [] } });
      return;
    }
    if (state !== "idle") {
      const why = state === "estopped" ? "the cell is e-stopped and must be reset before it takes work"
        : state === "busy" ? `the cell is already running episode ${current?.assignment.episodeId}`
        : `the cell is held (${heldReason})`;
      log(`declined episode ${message.episodeId}: ${why}`);
      send({ episodeInterrupted: { episodeId: message.episodeId, attempt: message.attempt, reason: state === "estopped" ? "estop" : "cancelled", detail: why, durationS: 0, artifacts: [] } });
      return;
    }
    move("assign");
    operatorResetMs = 0;
    duty.begin();
    const abort = new AbortController();
    let assignment: EpisodeAssignment;
    try {
      assignment = parseAssignment(message);
    } catch (error) {
      finishWithInterruption(message.episodeId, message.attempt, "cancelled", `the assignment could not be run: ${(error as Error).message}`);
      return;
    }
    writeRunningMarker(config.dataDir, { episode_id: assignment.episodeId, attempt: assignment.attempt, started_at_ms: Date.now() });
    send({ episodeStarted: { episodeId: assignment.episodeId, attempt: assignment.attempt, startedAtMs: Date.now() } });
    liveFeed?.event({ type: "episode_started", run_id: assignment.runId, episode_id: assignment.episodeId, index: assignment.index });
    const done = runAssigned(assignment, abort.signal)
      .then(({ plan, result }) => report(assignment, plan, result, abort.signal))
      .catch((error: Error) => {
        log(`episode ${assignment.episodeId} failed inside the agent: ${error.stack ?? error.message}`);
        finishWithInterruption(assignment.episodeId, assignment.attempt, "hardware_fault", error.message);
      })
      .finally(() => {
        current = undefined;
        uploader.kick();
      });
    current = { assignment, abort, done };
  }

  async function runAssigned(assignment: EpisodeAssignment, signal: AbortSignal): Promise<{ plan: EpisodePlan; result: EpisodeResult }> {
    const plan = realizeEpisodePlan({
      task: assignment.task, perturbation: assignment.perturbation, seed: assignment.seed, dof: hardware.motors.jointNames.length,
      environment: assignment.environment || config.environment, replaySpec: assignment.replaySpec,
    });
    const predicates = { success_predicates: assignment.task.successPredicates, stages: assignment.task.stages };
    const monitor = compileTaskMonitor(predicates);
    log(`episode ${assignment.episodeId} (run ${assignment.runId}, ${assignment.index + 1} of ${assignment.of}, attempt ${assignment.attempt}) starting: "${plan.instruction ?? ""}", lighting ${plan.reset.lighting}`);
    const result = await runEpisode({
      assignment, plan, hardware: { ...hardware, motors, policies }, monitor, recordingsDir, chunkCompressor, cellId: config.cellId, robotModel: config.robotModel, metrics, signal, live: liveFeed,
      lastEstopTrip: () => estopWatch.lastTrip(), envelope, interventionGate,
      scoredInstruments: taskInstrumentKinds(predicates),
      onInstrumentLost: (lost, detail) => instrumentHealth.markDown(lost, detail),
    });
    return { plan, result };
  }

  function finishWithInterruption(episodeId: string, attempt: number, reason: string, detail: string, durationS = 0): void {
    send({ episodeInterrupted: { episodeId, attempt, reason, detail, durationS, artifacts: [], operatorResetS: operatorResetMs / 1000 } });
    metrics.episodes.inc({ outcome: "interrupted" });
    clearRunningMarker(config.dataDir);
    duty.end();
    move("episode_end");
  }

  async function report(assignment: EpisodeAssignment, plan: EpisodePlan, result: EpisodeResult, signal: AbortSignal): Promise<void> {
    const cancel = signal.aborted && signal.reason instanceof EpisodeAbort && signal.reason.reason === "cancelled" ? signal.reason : undefined;
    if (result.kind === "finished" && cancel) {
      // Cancelled (e.g. "finished elsewhere") while the attempt was wrapping up: the coordinator no
      // longer wants its outcome, so it is reported cancelled; the recording stays on the cell.
      const kept = [await renameFree(result.mcapPath, `${result.mcapPath}.interrupted`)];
      for (const video of result.videos) kept.push(await renameFree(video.path, `${video.path}.interrupted`));
      log(`episode ${assignment.episodeId} was cancelled as it finished (${cancel.detail}); not reporting its outcome, recording kept as ${kept.join(" and ")}`);
      finishWithInterruption(assignment.episodeId, assignment.attempt, "cancelled", cancel.detail, result.durationS);
      return;
    }
    if (result.kind === "interrupted") {
      log(`episode ${assignment.episodeId} interrupted (${result.reason}): ${result.detail}`);
      if (result.reason === "policy_endpoint_timeout") {
        // Before the interruption, so the coordinator halts the run before it could requeue the episode.
        send({ safetyEvent: { kind: "protective_stop", episodeId: assignment.episodeId, latencyMs: 0, detail: "policy_endpoint_timeout", atMs: Date.now() } });
      }
      finishWithInterruption(assignment.episodeId, assignment.attempt, result.reason, result.detail, result.durationS);
      return;
    }
    const judged = await judgeIfNamed(assignment, plan.instruction ?? null, result.finalFrames, config.cellId, signal, log);
    const label = await awaitLabel(assignment, plan.instruction ?? null, signal, judged);
    if ((label.asked || judged) && signal.aborted) {
      const abort = signal.reason instanceof EpisodeAbort ? signal.reason : new EpisodeAbort("cancelled", "aborted while waiting for a label");
      finishWithInterruption(assignment.episodeId, assignment.attempt, abort.reason, `${abort.detail} (while waiting for ${label.asked ? "a person's label" : "the judge"})`, result.durationS);
      return;
    }
    const { outcome, failureCluster, evaluation } = episodeVerdict(result, label, judged, assignment.judge);
    const taken = [await store.take(assignment.episodeId, "mcap", result.mcapPath)];
    for (const video of result.videos) taken.push(await store.take(assignment.episodeId, video.kind, video.path));
    // From here to enqueue is synchronous, so the predicted seq is the one the message gets.
    const seq = outbox.nextSeqToAssign;
    for (const artifact of taken) store.announce({ ...artifact, announcedSeq: seq });
    const artifacts: ArtifactRef[] = taken.map((t) => t.ref);
    const sent = send({
      episodeFinished: {
        episodeId: assignment.episodeId, attempt: assignment.attempt, outcome, failureCluster,
        durationS: result.durationS, resetS: result.resetS, replaySpecJson: JSON.stringify(plan.replaySpec),
        metaJson: JSON.stringify(result.meta), artifacts, evaluationJson: JSON.stringify(evaluation), finishedAtMs: Date.now(),
        operatorResetS: operatorResetMs / 1000,
      },
    });
    if (sent.seq !== seq) throw new Error(`internal: EpisodeFinished got seq ${sent.seq}, artifacts were announced with ${seq}`);
    metrics.episodes.inc({ outcome });
    liveFeed?.event({ type: "episode_finished", run_id: assignment.runId, episode_id: assignment.episodeId, index: assignment.index, outcome });
    log(`episode ${assignment.episodeId} finished: ${outcome}${failureCluster ? ` (${failureCluster})` : ""} in ${result.durationS.toFixed(2)} s`);
    clearRunningMarker(config.dataDir);
    duty.end();
    move("episode_end");
  }

  /**
   * After an episode of a task judged by a person: reports `awaiting_label` and an Attention "label"
   * (no policy named: labels stay blind), and waits for the station's label or the label timeout.
   */
  async function awaitLabel(assignment: EpisodeAssignment, instruction: string | null, signal: AbortSignal, judged?: JudgeStep): Promise<LabelStep> {
    const { personJudged } = splitPersonJudged({ success_predicates: assignment.task.successPredicates });
    if (personJudged.length === 0) return { asked: false, personJudged, label: null, waitedS: 0 };
    // The judge's confident verdict outside the audit sample needs no person.
    if (judged && judged.review === null) return { asked: false, personJudged, label: null, waitedS: 0 };
    if (!options.labels) {
      log(`episode ${assignment.episodeId}: the task is judged by a person (${personJudged.join(", ")}) but this cell offers no operator; ${judged?.verdict && judged.review === "audit" ? "the judge's verdict stands" : "reported unlabelled"}`);
      return { asked: true, personJudged, label: null, waitedS: 0 };
    }
    const sinceMs = Date.now();
    // `review` tells the station why a person judges an episode a judge also saw (never the judge's verdict: the audit stays blind).
    const review = judged?.review ? { review: judged.review } : {};
    attention = { kind: "label", episodeId: assignment.episodeId, sinceMs, sceneJson: JSON.stringify({ instruction, predicates: personJudged, ...review }) };
    if (state === "busy") move("await_label");
    link.send({ seq: 0, attention });
    liveFeed?.event({ type: "attention", kind: "label", episode_id: assignment.episodeId });
    const label = await labelGate.wait(assignment.episodeId, labelTimeoutMs, signal);
    const waitedS = Math.round((Date.now() - sinceMs) / 100) / 10;
    attention = NO_ATTENTION;
    if (state === "awaiting_label") move("labelled");
    link.send({ seq: 0, attention });
    liveFeed?.event({ type: "attention", kind: null, episode_id: null });
    if (!label && !signal.aborted) log(`episode ${assignment.episodeId}: no label within ${labelTimeoutMs / 1000} s; reported unlabelled`);
    return { asked: true, personJudged, label, waitedS };
  }

  function onEstopTrip(): void {
    estopEpisodeId = current?.assignment.episodeId ?? "";
    liveFeed?.event({ type: "estop", detail: estopEpisodeId ? `e-stop pressed during episode ${estopEpisodeId}` : "e-stop pressed" });
    abortCurrent(new EpisodeAbort("estop", "the e-stop was pressed"));
    move("estop");
  }

  function onEstopTorqueOff(outcome: TorqueOffOutcome, trip: EstopTrip): void {
    metrics.estops.inc();
    const episodeId = estopEpisodeId;
    if (outcome.error) {
      log(`E-STOP: torque off FAILED after ${outcome.latencyMs.toFixed(2)} ms: ${outcome.error}; cut servo power by hand`);
      send({ safetyEvent: { kind: "estop_triggered", episodeId, latencyMs: -1, detail: `torque off failed: ${outcome.error}`, atMs: trip.atMs } });
      return;
    }
    metrics.estopLatencyS.observe(outcome.latencyMs / 1000);
    log(`E-STOP: torque off in ${outcome.latencyMs.toFixed(2)} ms${episodeId ? `; episode ${episodeId} aborted` : ""}; the cell takes no work until a technician resets it`);
    send({ safetyEvent: { kind: "estop_triggered", episodeId, latencyMs: outcome.latencyMs, detail: "torque off confirmed", atMs: trip.atMs } });
  }

  link.start();
  uploader.kick();

  return {
    metrics: metrics.registry,
    state: () => state,
    coordinator: () => link.coordinator,
    resetEstop() {
      if (state !== "estopped" && !estopWatch.latched) throw new Error(`the cell is not e-stopped (state ${state})`);
      if (current) throw new Error(`episode ${current.assignment.episodeId} is still winding down; try again in a moment`);
      estopWatch.reset(); // throws while the input is still pressed
      move("estop_reset");
      send({ safetyEvent: { kind: "estop_reset", episodeId: "", latencyMs: 0, detail: "reset with the input released", atMs: Date.now() } });
      log("e-stop reset; the cell takes work again");
    },
    async settled() {
      while (current) await current.done;
      await uploader.idle();
    },
    async stop() {
      estopWatch.close();
      // A trip or reset just before the stop: its marker file is on disk before the agent exits.
      await estopWatch.persisted();
      instrumentHealth.stop();
      abortCurrent(new EpisodeAbort("agent_restart", "the cell agent is shutting down"));
      unsubscribeScene?.();
      unsubscribeIntervention?.();
      if (current) await current.done;
      move("stop");
      uploader.stop();
      await uploader.idle();
      liveFeed?.stop();
      link.stop();
      outbox.close();
      await chunkCompressor.close();
    },
  };
}
