/**
 * The cell agent against a coordinator test double: a real gRPC server on port 0 implementing
 * CellLinkService, and tiny in-test device doubles (a 6-joint arm that tracks its targets, a
 * solid-colour camera, a mocap that sees the cube and the gripper, a clock that advances when
 * slept). Checks Hello → Welcome → AssignEpisode → EpisodeStarted/EpisodeFinished (seq, acks,
 * artifacts) → uploads with matching sha256, and a dropped stream followed by a resend.
 */
import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { EventEmitter, once } from "node:events";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Server, ServerCredentials, status, type ServerDuplexStream, type ServerReadableStream, type sendUnaryData } from "@grpc/grpc-js";
import jpeg from "jpeg-js";
import { startCellAgent, type CellAgent } from "../../cell-agent/agent.js";
import { compileAgentConfig } from "../../cell-agent/config.js";
import type { CellHardware, ResetPlan } from "../../cell-agent/hardware/types.js";
import {
  CellLinkService, type AgentMessage, type ArtifactChunk, type ArtifactProgress, type ArtifactRef, type CoordinatorMessage, type Hello,
} from "../../protocol/gen/cell.js";
import { Watched } from "../support/watched.js";

const TASK_JSON = readFileSync(new URL("../../coordinator/catalog/tasks/pick-cube-v1.json", import.meta.url), "utf8");
const TOKEN = "cell-token-so101-a";

/** The coordinator test double: applies sequenced messages once, acks, takes uploads. */
class FakeCoordinator extends EventEmitter {
  readonly server = new Server();
  port = 0;
  lastSeqApplied = 0;
  readonly hellos: Hello[] = [];
  readonly applied: AgentMessage[] = [];
  readonly heartbeats: AgentMessage[] = [];
  readonly uploads = new Map<string, { ref: ArtifactRef; data: Buffer; complete: boolean }>();
  /** Drop the stream instead of applying the first EpisodeFinished. */
  dropOnFirstFinish = true;
  assigned = false;
  /** The latest Connect stream (to send CancelEpisode). */
  stream?: ServerDuplexStream<AgentMessage, CoordinatorMessage>;

  constructor(private readonly assign: CoordinatorMessage) {
    super();
    this.server.addService(CellLinkService, {
      connect: (call: ServerDuplexStream<AgentMessage, CoordinatorMessage>) => this.connect(call),
      artifactStatus: (call: { request: ArtifactRef }, callback: (e: null, p: ArtifactProgress) => void) => {
        const upload = this.uploads.get(call.request.fileName);
        callback(null, { receivedBytes: upload?.data.length ?? 0, complete: upload?.complete ?? false });
      },
      uploadArtifact: (call: ServerReadableStream<ArtifactChunk, ArtifactProgress>, callback: sendUnaryData<ArtifactProgress>) => {
        let ref: ArtifactRef | undefined;
        call.on("data", (chunk: ArtifactChunk) => {
          ref ??= chunk.ref;
          const upload = this.uploads.get(ref!.fileName) ?? { ref: ref!, data: Buffer.alloc(0), complete: false };
          assert.equal(chunk.offset, upload.data.length, "chunks continue at the coordinator's offset");
          upload.data = Buffer.concat([upload.data, Buffer.from(chunk.data)]);
          if (chunk.last) upload.complete = createHash("sha256").update(upload.data).digest("hex") === ref!.sha256;
          this.uploads.set(ref!.fileName, upload);
        });
        call.on("end", () => {
          const upload = this.uploads.get(ref!.fileName)!;
          callback(null, { receivedBytes: upload.data.length, complete: upload.complete });
          if (upload.complete) this.emit("uploaded", upload.ref);
        });
      },
    });
  }

  private connect(call: ServerDuplexStream<AgentMessage, CoordinatorMessage>): void {
    if (call.metadata.get("authorization")[0] !== `Bearer ${TOKEN}`) {
      call.emit("error", { code: status.UNAUTHENTICATED, details: "unknown cell token" });
      return;
    }
    this.stream = call;
    call.on("data", (message: AgentMessage) => {
      if (message.hello) {
        this.hellos.push(message.hello);
        call.write({ welcome: { sessionId: `s${this.hellos.length}`, lastSeqApplied: this.lastSeqApplied, serverTimeMs: Date.now(), heartbeatIntervalMs: 0 } });
        if (!this.assigned) {
          this.assigned = true;
          call.write(this.assign);
        }
        this.emit("hello", message.hello);
        return;
      }
      if (message.seq === 0) {
        this.heartbeats.push(message);
        return;
      }
      if (message.seq <= this.lastSeqApplied) {
        call.write({ ack: { seq: message.seq } });
        return;
      }
      if (message.episodeFinished && this.dropOnFirstFinish) {
        this.dropOnFirstFinish = false;
        call.end(); // the stream goes away before the message is applied or acked
        this.emit("dropped");
        return;
      }
      assert.equal(message.seq, this.lastSeqApplied + 1, "sequenced messages arrive in order without gaps");
      this.applied.push(message);
      this.lastSeqApplied = message.seq;
      call.write({ ack: { seq: message.seq } });
      this.emit("applied", message);
    });
    call.on("error", () => undefined);
    call.on("end", () => call.end());
  }

  async listen(): Promise<string> {
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (error, port) => (error ? reject(error) : resolve(port))));
    return `127.0.0.1:${this.port}`;
  }
}

/** Device doubles over one tiny world: joints 0..2 are the gripper's x, y, z; joint 5 the gripper opening. */
function fakeCell(): CellHardware & { world: { cube: [number, number, number]; holding: boolean }; pressEstop(): void; releaseEstop(): void; torque: boolean[] } {
  let nowNs = 0n;
  const positions = [0.15, 0.1, 0.12, 0, 0, 1];
  const world = { cube: [0.22, 0, 0.015] as [number, number, number], holding: false };
  const listeners: Array<() => void> = [];
  let pressed = false;
  const torque: boolean[] = [];
  const step = () => {
    const [x, y, z] = positions;
    const near = Math.hypot(x - world.cube[0], y - world.cube[1], z - world.cube[2]) < 0.03;
    if (!world.holding && near && positions[5] < 0.2) world.holding = true;
    if (world.holding && positions[5] > 0.5) world.holding = false;
    if (world.holding) world.cube = [x, y, z];
  };
  const rgb = Buffer.alloc(32 * 24 * 3);
  for (let i = 0; i < rgb.length; i += 3) rgb.set([200, 30, 30], i);
  const rgba = Buffer.alloc(32 * 24 * 4, 255);
  for (let i = 0; i < rgba.length; i += 4) rgba.set([200, 30, 30], i);
  const jpegBytes = jpeg.encode({ width: 32, height: 24, data: rgba }, 80).data;
  return {
    world,
    torque,
    pressEstop: () => {
      pressed = true;
      listeners.forEach((l) => l());
    },
    releaseEstop: () => {
      pressed = false;
    },
    clock: {
      nowNs: () => nowNs,
      sleepUntil: async (tNs) => {
        if (tNs > nowNs) nowNs = tNs;
        step();
        await new Promise((resolve) => setImmediate(resolve));
      },
    },
    motors: {
      jointNames: ["shoulder_pan", "shoulder_lift", "elbow_flex", "wrist_flex", "wrist_roll", "gripper"],
      readFirmware: async () => "3.11",
      readState: async () => ({ tNs: nowNs, positionRad: [...positions], velocityRadS: new Array(6).fill(0), currentA: new Array(6).fill(0.1), temperatureC: new Array(6).fill(31) }),
      writeGoalPositions: async (targets) => {
        targets.forEach((t, i) => (positions[i] = t));
      },
      setTorque: async (enabled) => {
        torque.push(enabled);
      },
    },
    cameras: [{ name: "top", rateHz: 10, capture: async () => ({ tNs: nowNs, width: 32, height: 24, jpeg: jpegBytes, rgb }) }],
    gripper: { read: async () => ({ tNs: nowNs, opening: positions[5], holding: world.holding }) },
    wristFt: { read: async () => ({ tNs: nowNs, forceN: [0, 0, world.holding ? 0.5 : 0], torqueNm: [0, 0, 0] }) },
    mocap: {
      readPoses: async () => ({
        tNs: nowNs,
        poses: [
          { name: "cube", positionM: [...world.cube], orientation: [0, 0, 0, 1] },
          { name: "gripper", positionM: [positions[0], positions[1], positions[2]], orientation: [0, 0, 0, 1] },
        ],
      }),
    },
    estop: { isPressed: () => pressed, onTrigger: (listener) => (listeners.push(listener), () => undefined) },
    scene: {
      reset: async (plan: ResetPlan) => {
        world.cube = [...plan.objects.cube.positionM];
        world.holding = false;
        positions.splice(0, 6, 0.15, 0.1, 0.12, 0, 0, 1);
        return { resetS: 2 };
      },
    },
    policies: {
      available: () => ["assay/ref-policy:expert"],
      // A scripted "expert" that reads the world: approach, close, lift.
      start: async () => {
        let tS = 0;
        let periodS = 0.1;
        return {
          reset: async (info) => {
            periodS = 1 / info.controlRateHz;
          },
          act: async () => {
            tS += periodS;
            const [cx, cy, cz] = world.cube;
            if (tS < 1) return [cx, cy, cz, 0, 0, 1];
            if (tS < 1.5) return [cx, cy, cz, 0, 0, 0];
            return [cx, cy, 0.12, 0, 0, 0];
          },
          close: async () => undefined,
        };
      },
    },
    close: async () => undefined,
  };
}

describe("cell agent over CellLink (coordinator test double)", function () {
  this.timeout(20_000);
  let dataDir: string;
  let coordinator: FakeCoordinator;
  let agent: CellAgent | undefined;
  const log = new Watched<string>();
  const lines = log.items;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "agent-link-"));
    log.clear();
  });
  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
    coordinator?.server.forceShutdown();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const config = (address: string, token = TOKEN) => compileAgentConfig({
    cellId: "so101-a", coordinatorAddress: address, cellToken: token, robotModel: "so101", environment: "tabletop@1", dataDir,
    heartbeatIntervalMs: 100, reconnect: { initialMs: 20, maxMs: 200, jitter: 0.5 }, uploadChunkBytes: 4096,
  });

  it("runs an assigned episode, reports it with seq and artifacts, survives a dropped stream, and uploads both files", async () => {
    coordinator = new FakeCoordinator({
      assignEpisode: {
        episodeId: "ep_1", runId: "run_1", index: 0, attempt: 1, of: 1, robot: "so101@3.11", environment: "tabletop@1", taskJson: TASK_JSON,
        policyJson: JSON.stringify({ type: "container", image: "assay/ref-policy:expert", observation_contract: { cameras: ["top"], state: ["joint_positions", "gripper_state"] } }),
        perturbationJson: JSON.stringify({ layout_jitter_mm: 5, lighting: ["nominal", "dim"], distractors: "color-blocks@1", seed: 1 }),
        seed: 1234, controlRateHz: 10, maxDurationS: 8, idleEndS: 0, replaySpecJson: "",
      },
    });
    const address = await coordinator.listen();
    const uploaded = new Map<string, ArtifactRef>();
    const bothUploaded = new Promise<void>((resolve) => coordinator.on("uploaded", (ref: ArtifactRef) => {
      uploaded.set(ref.kind, ref);
      if (uploaded.size === 2) resolve();
    }));
    agent = await startCellAgent(config(address), fakeCell(), { log: (line) => log.push(line) });
    await bothUploaded;

    assert.ok(coordinator.hellos.length >= 2, "the agent reconnected after the drop");
    const [first, second] = coordinator.hellos;
    assert.equal(first.cellId, "so101-a");
    assert.equal(first.firmware, "3.11");
    assert.equal(first.lastSeqSent, 0);
    assert.deepEqual(first.policyImages, ["assay/ref-policy:expert"]);
    assert.ok(first.instruments.some((i) => i.kind === "camera" && i.name === "top" && i.rateHz === 10));
    assert.equal(second.lastSeqSent, 2, "the second Hello says seq 2 was sent");

    const [started, finished] = coordinator.applied;
    assert.equal(started.seq, 1);
    assert.equal(started.episodeStarted?.episodeId, "ep_1");
    assert.equal(finished.seq, 2, "EpisodeFinished resent with its original seq after the drop");
    const episode = finished.episodeFinished!;
    assert.equal(episode.outcome, "success", `outcome ${episode.outcome} ${episode.failureCluster}`);
    assert.equal(episode.failureCluster, "");
    assert.equal(episode.resetS, 2);
    assert.ok(episode.durationS > 2 && episode.durationS < 8, `duration ${episode.durationS}`);
    const evaluation = JSON.parse(episode.evaluationJson);
    assert.deepEqual(evaluation.stages, { reached: true, grasped: true, lifted: true });
    const replay = JSON.parse(episode.replaySpecJson);
    assert.equal(replay.layout_seed, 1234);
    assert.equal(replay.distractors, "color-blocks@1");
    assert.equal(replay.perturbation_rev, "assay-perturb@1");
    assert.ok(["nominal", "dim"].includes(replay.lighting));
    const meta = JSON.parse(episode.metaJson);
    assert.equal(meta.firmware, "3.11");
    assert.equal(meta.seed, 1234);
    assert.equal(meta.perturbations_realized.layout_seed, 1234);

    assert.deepEqual(episode.artifacts.map((a) => a.kind).sort(), ["mcap", "video"]);
    for (const ref of episode.artifacts) {
      const stored = coordinator.uploads.get(ref.fileName)!;
      assert.ok(stored.complete, `${ref.fileName} stored`);
      assert.equal(stored.data.length, ref.bytes);
      assert.equal(createHash("sha256").update(stored.data).digest("hex"), ref.sha256);
    }
    assert.equal(coordinator.uploads.get("ep_1.mp4")!.data.subarray(4, 8).toString(), "ftyp", "the video is an MP4");
    assert.equal(coordinator.uploads.get("ep_1.mcap")!.data.subarray(1, 5).toString(), "MCAP");

    await agent.settled();
    const left = readdirSync(join(dataDir, "outbox"));
    assert.deepEqual(left, [], "uploaded files are deleted locally");
    assert.ok(coordinator.heartbeats.some((h) => h.heartbeat?.state === "idle"));
    assert.equal(agent.state(), "idle");
  });

  it("logs a refused token in plain words and keeps retrying", async () => {
    coordinator = new FakeCoordinator({});
    const address = await coordinator.listen();
    agent = await startCellAgent(config(address, "wrong-token"), fakeCell(), { log: (line) => log.push(line) });
    await log.until((all) => all.some((l) => l.includes("refused this cell's token")));
    assert.ok(lines.find((l) => l.startsWith("the coordinator refused this cell's token: unknown cell token")), lines.join("\n"));
  });

  it("on e-stop turns torque off, aborts the episode, reports it, and takes no work until reset", async () => {
    const task = { ...JSON.parse(TASK_JSON), success_predicates: [{ lifted: "pose(cube).z > 5" }] };
    coordinator = new FakeCoordinator({
      assignEpisode: {
        episodeId: "ep_2", runId: "run_2", index: 0, attempt: 1, of: 1, robot: "so101@3.11", environment: "tabletop@1", taskJson: JSON.stringify(task),
        policyJson: "{}", perturbationJson: "{}", seed: 5, controlRateHz: 10, maxDurationS: 3600, idleEndS: 0, replaySpecJson: "",
      },
    });
    coordinator.dropOnFirstFinish = false;
    const address = await coordinator.listen();
    const cell = fakeCell();
    const interrupted = new Promise<AgentMessage>((resolve) => coordinator.on("applied", (m: AgentMessage) => m.episodeInterrupted && resolve(m)));
    coordinator.once("applied", () => cell.pressEstop()); // EpisodeStarted
    agent = await startCellAgent(config(address), cell, { log: (line) => log.push(line) });
    const message = await interrupted;
    assert.equal(message.episodeInterrupted!.episodeId, "ep_2");
    assert.equal(message.episodeInterrupted!.reason, "estop");
    assert.equal(cell.torque.at(-1), false, "torque is off");
    const safety = coordinator.applied.find((m) => m.safetyEvent)!.safetyEvent!;
    assert.equal(safety.kind, "estop_triggered");
    assert.ok(safety.latencyMs >= 0 && safety.latencyMs < 1000, `latency ${safety.latencyMs}`);
    await agent.settled();
    assert.equal(agent.state(), "estopped");
    assert.throws(() => agent!.resetEstop(), /still pressed/);
    cell.releaseEstop();
    agent.resetEstop();
    assert.equal(agent.state(), "idle");
  });

  const longAssign = (episodeId: string, maxDurationS: number): CoordinatorMessage => ({
    assignEpisode: {
      episodeId, runId: "run_3", index: 0, attempt: 2, of: 1, robot: "so101@3.11", environment: "tabletop@1",
      taskJson: JSON.stringify({ ...JSON.parse(TASK_JSON), success_predicates: [{ lifted: "pose(cube).z > 5" }] }),
      policyJson: "{}", perturbationJson: "{}", seed: 5, controlRateHz: 10, maxDurationS, idleEndS: 0, replaySpecJson: "",
    },
  });

  it("on CancelEpisode aborts and holds (torque stays on), reports the attempt cancelled, never finished, and takes work again", async () => {
    coordinator = new FakeCoordinator(longAssign("ep_3", 3600));
    coordinator.dropOnFirstFinish = false;
    const address = await coordinator.listen();
    const cell = fakeCell();
    // Cancel once the policy drives the arm (torque on, the first goals written). EpisodeStarted goes
    // out before the scene reset and the policy start; a cancel that lands then ends the attempt
    // before torque is on, so there is nothing to hold and no protective stop to count.
    const writeGoalPositions = cell.motors.writeGoalPositions.bind(cell.motors);
    let cancelSent = false;
    cell.motors.writeGoalPositions = async (targets) => {
      await writeGoalPositions(targets);
      if (cell.torque.at(-1) === true && !cancelSent) {
        cancelSent = true;
        coordinator.stream!.write({ cancelEpisode: { episodeId: "ep_3", reason: "finished elsewhere" } });
      }
    };
    const interrupted = new Promise<AgentMessage>((resolve) => coordinator.on("applied", (m: AgentMessage) => m.episodeInterrupted && resolve(m)));
    agent = await startCellAgent(config(address), cell, { log: (line) => log.push(line) });
    const message = (await interrupted).episodeInterrupted!;
    assert.deepEqual([message.episodeId, message.attempt, message.reason, message.detail], ["ep_3", 2, "cancelled", "finished elsewhere"]);
    await agent.settled();
    assert.equal(coordinator.applied.filter((m) => m.episodeFinished).length, 0);
    assert.notEqual(cell.torque.at(-1), false, "a cancel holds position; it does not cut torque");
    assert.match(await agent.metrics.getSingleMetricAsString("assay_agent_protective_stops_total"), /cause="cancelled"[^\n]* 1/);
    assert.equal(agent.state(), "idle");
    assert.ok(lines.some((l) => /the coordinator cancelled episode ep_3: finished elsewhere; aborting and holding position/.test(l)), lines.join("\n"));
    assert.deepEqual(readdirSync(join(dataDir, "outbox")), [], "nothing queued for upload");
  });

  it("a CancelEpisode that lands while the attempt is wrapping up still reports it cancelled, and keeps the recording on the cell", async () => {
    coordinator = new FakeCoordinator(longAssign("ep_4", 1));
    coordinator.dropOnFirstFinish = false;
    const address = await coordinator.listen();
    const cell = fakeCell();
    // The attempt reaches its time limit; while the runner closes the policy (after the control loop), the cancel arrives.
    const startPolicy = cell.policies.start.bind(cell.policies);
    cell.policies.start = async (...args) => {
      const session = await startPolicy(...args);
      return {
        ...session,
        close: async () => {
          coordinator.stream!.write({ cancelEpisode: { episodeId: "ep_4", reason: "finished elsewhere" } });
          await log.until((all) => all.some((l) => l.includes("cancelled episode ep_4")));
          await session.close();
        },
      };
    };
    const interrupted = new Promise<AgentMessage>((resolve) => coordinator.on("applied", (m: AgentMessage) => m.episodeInterrupted && resolve(m)));
    agent = await startCellAgent(config(address), cell, { log: (line) => log.push(line) });
    const message = (await interrupted).episodeInterrupted!;
    assert.deepEqual([message.episodeId, message.reason], ["ep_4", "cancelled"]);
    await agent.settled();
    assert.equal(coordinator.applied.filter((m) => m.episodeFinished).length, 0, "no EpisodeFinished for a cancelled attempt");
    assert.deepEqual(readdirSync(join(dataDir, "outbox")), [], "nothing queued for upload");
    assert.ok(readdirSync(join(dataDir, "recordings")).includes("ep_4.mcap.interrupted"), readdirSync(join(dataDir, "recordings")).join(", "));
    assert.ok(lines.some((l) => /episode ep_4 was cancelled as it finished \(finished elsewhere\)/.test(l)), lines.join("\n"));
  });
});
