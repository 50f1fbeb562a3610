/**
 * The coordinator's CellLink server against a scripted agent (a test double for the cell agent
 * built on the generated client): a real gRPC server on port 0, a real SQLite file in a temp dir.
 */
import { checkStreamToken } from "../../coordinator/auth/stream-tokens.js";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { status, type ServiceError } from "@grpc/grpc-js";
import { Registry } from "prom-client";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import type { AgentMessage, ArtifactChunk, ArtifactRef, Hello } from "../../protocol/gen/cell.js";
import { enrollCell, revokeCell } from "../../coordinator/fleet/enrollment.js";
import { startFleet, type Fleet } from "../../coordinator/server.js";
import { RunEvents, type RunEvent } from "../../coordinator/runs/run-events.js";
import { betaBinomialRate } from "../../coordinator/stats/beta-binomial-rate.js";
import { wilsonInterval } from "../../coordinator/stats/wilson.js";
import { getArtifact } from "../../coordinator/store/artifacts-repo.js";
import type { Db } from "../../coordinator/store/database.js";
import { getEpisode } from "../../coordinator/store/episodes-repo.js";
import { listEpisodes } from "../../coordinator/store/done-episodes-repo.js";
import * as runsRepo from "../../coordinator/store/runs-repo.js";
import { ScriptedAgent } from "../support/scripted-agent.js";
import { DiskStore } from "../../coordinator/storage/disk-store.js";
import { integrationEngine, openTestDatabase } from "../support/test-database.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const quiet = { info() {}, warn() {}, error: (line: string) => console.error(line) };

function hello(cellId: string, extra: Partial<Hello> = {}): AgentMessage {
  return {
    seq: 0,
    hello: {
      cellId, agentVersion: "test", robotModel: "so101", firmware: "3.11", environment: "tabletop@1",
      // What a tabletop@1 cell's agent reports (the scheduler gives a cell only episodes it can score).
      instruments: ["joint_states", "camera:top", "gripper_state", "ft_wrist", "mocap", "estop"].map((k) => {
        const [kind, name = ""] = k.split(":");
        return { kind, name, rateHz: kind === "camera" ? 30 : 0, width: 0, height: 0 };
      }), policyImages: ["assay/ref-policy:expert"],
      lastSeqSent: 0, interruptedEpisodeId: "", safetyState: "ok", ...extra,
    },
  };
}

function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

async function insertFixtures(db: Db, runId: string, episodes: number): Promise<void> {
  await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Test', '2026-01-01T00:00:00Z') ON CONFLICT DO NOTHING").run();
  const spec = readFileSync(join(here, "../../coordinator/catalog/tasks/pick-cube-v1.json"), "utf8");
  await db.prepare(
    `INSERT INTO tasks (id, account_id, name, version, status, visibility, created, frozen, spec)
     VALUES ('task_pick', NULL, 'pick-cube', 1, 'frozen', 'published', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', ?) ON CONFLICT DO NOTHING`,
  ).run(spec);
  await runsRepo.insertRun(db, {
    id: runId,
    accountId: "acct_1",
    kind: "run",
    created: new Date().toISOString(),
    request: { policy: { type: "container", image: "assay/ref-policy:expert" }, perturbation: { seed: 3, lighting: ["dim"] }, episodes },
    resolvedPins: { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" },
    plan: { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 11, control_rate_hz: 30, max_duration_s: 20 },
    priority: "standard",
    episodesTotal: episodes,
  });
}

describe("CellLink server (scripted agent)", function () {
  let dir: string;
  let db: Db;
  let server: Fleet;
  let events: RunEvent[];
  let metrics: Registry;
  const agents: ScriptedAgent[] = [];

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-celllink-"));
    db = await openTestDatabase(integrationEngine(), join(dir, "assay.db"));
    const runEvents = new RunEvents();
    events = [];
    runEvents.subscribe("*", (event) => events.push(event));
    metrics = new Registry();
    server = await startFleet({
      db, runEvents, pins: loadFirmwarePins(), objects: new DiskStore(join(dir, "artifacts")),
      baseUrl: "http://127.0.0.1:8080", streamsUrl: "wss://127.0.0.1:8080/streams", port: 0, metricsRegistry: metrics, logger: quiet,
    });
  });

  afterEach(async () => {
    for (const agent of agents.splice(0)) agent.close();
    await server.stop();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function agentFor(cellId: string): Promise<ScriptedAgent> {
    const agent = new ScriptedAgent(`127.0.0.1:${server.port}`, await enrollCell(db, { cellId, model: "so101" }));
    agents.push(agent);
    return agent;
  }

  it("runs a run end to end: assignment, exactly-once messages, resumable verified uploads, completion", async () => {
    await insertFixtures(db, "run_e2e", 3);
    const agent = await agentFor("so101-b");
    agent.open(hello("so101-b"));
    const welcome = await agent.next((m) => m.welcome);
    assert.equal(welcome.lastSeqApplied, 0);
    assert.equal(welcome.heartbeatIntervalMs, 1000);

    let seq = 0;
    const outcomes: Array<"success" | "failure"> = ["success", "failure", "success"];
    for (let idx = 0; idx < 3; idx++) {
      const assign = await agent.next((m) => m.assignEpisode);
      assert.equal(assign.index, idx);
      assert.equal(assign.attempt, 1);
      assert.equal(assign.of, 3);
      assert.equal(assign.robot, "so101@3.11");
      assert.equal(assign.environment, "tabletop@1");
      assert.equal(JSON.parse(assign.taskJson).rev, "pick-cube@v1");
      assert.deepEqual(JSON.parse(assign.perturbationJson), { seed: 3, lighting: ["dim"] });
      assert.equal(assign.seed, runsRepo.episodeSeed(11, idx));
      assert.deepEqual((await server.fleet.connectedCells()).map((c) => [c.cellId, c.state, c.episodeId]), [["so101-b", "busy", assign.episodeId]]);

      agent.send({ seq: ++seq, episodeStarted: { episodeId: assign.episodeId, attempt: 1, startedAtMs: Date.now() } });
      assert.equal((await agent.next((m) => m.ack)).seq, seq);
      if (idx === 0) assert.equal((await runsRepo.getRunRow(db, "run_e2e"))!.status, "running");

      const data = Buffer.from(`mcap bytes of episode ${idx} `.repeat(200));
      const ref: ArtifactRef = { episodeId: assign.episodeId, kind: "mcap", fileName: `episode-${idx}.mcap`, bytes: data.length, sha256: sha256(data) };
      const finished: Partial<AgentMessage> = {
        seq: ++seq,
        episodeFinished: {
          episodeId: assign.episodeId, attempt: 1, outcome: outcomes[idx], failureCluster: outcomes[idx] === "failure" ? "grasp_slip" : "",
          durationS: 20, resetS: 4, replaySpecJson: JSON.stringify({ environment: "tabletop@1", layout_seed: idx }), metaJson: "{}",
          artifacts: [ref], evaluationJson: JSON.stringify({ stages: { reached: true, grasped: outcomes[idx] === "success" } }), finishedAtMs: Date.now(),
        },
      };
      agent.send(finished);
      assert.equal((await agent.next((m) => m.ack)).seq, seq);
      // The same message again (an agent resending its outbox): acked, not applied twice.
      agent.send(finished);
      assert.equal((await agent.next((m) => m.ack)).seq, seq);
      assert.equal(events.filter((e) => e.type === "episode" && e.data.episode === idx + 1).length, 1);

      const half = Math.floor(data.length / 2);
      assert.deepEqual(await agent.artifactStatus(ref), { receivedBytes: 0, complete: false });
      assert.deepEqual(await agent.upload([{ ref, offset: 0, data: data.subarray(0, half), last: false }]), { receivedBytes: half, complete: false });
      const status1 = await agent.artifactStatus(ref);
      assert.equal(status1.receivedBytes, half);

      if (idx === 1) {
        // Resuming from the wrong offset is refused with the offset to resume from.
        await assert.rejects(agent.upload([{ ref, offset: 0, data: data.subarray(0, half), last: false }]), (error: ServiceError) => {
          assert.equal(error.code, status.FAILED_PRECONDITION);
          assert.match(error.details, new RegExp(`resume from ${half}$`));
          return true;
        });
        // A corrupted tail fails the hash check; the partial file is dropped and upload restarts at 0.
        const corrupt = Buffer.from(data.subarray(half));
        corrupt[0] ^= 0xff;
        await assert.rejects(agent.upload([{ ref, offset: half, data: corrupt, last: true }]), (error: ServiceError) => {
          assert.equal(error.code, status.DATA_LOSS);
          assert.match(error.details, /^artifact_corrupt: /);
          return true;
        });
        assert.deepEqual(await agent.artifactStatus(ref), { receivedBytes: 0, complete: false });
        assert.deepEqual(await agent.upload([{ ref, offset: 0, data: data.subarray(0, half), last: false }]), { receivedBytes: half, complete: false });
      }
      assert.notEqual((await runsRepo.getRunRow(db, "run_e2e"))!.status, "completed");
      assert.deepEqual(await agent.upload([{ ref, offset: half, data: data.subarray(half), last: true }]), { receivedBytes: data.length, complete: true });
      assert.deepEqual(await agent.artifactStatus(ref), { receivedBytes: data.length, complete: true });
      const stored = join(dir, "artifacts", "run_e2e", assign.episodeId, `episode-${idx}.mcap`);
      assert.deepEqual(readFileSync(stored), data);
      assert.equal((await getArtifact(db, assign.episodeId, "mcap"))!.status, "stored");
    }

    const run = (await runsRepo.getRunRow(db, "run_e2e"))!;
    assert.equal(run.status, "completed");
    const result = JSON.parse(run.result!);
    assert.equal(result.n, 3);
    assert.deepEqual(result.cells.by_cell.map((c: { successes: number; n: number }) => [c.successes, c.n]), [[2, 3]]);
    assert.deepEqual(result.ci95, betaBinomialRate([{ k: 2, n: 3 }]).ci);
    assert.deepEqual(result.cells.ci95_these_cells, wilsonInterval(2, 3));
    assert.deepEqual(result.failure_clusters, { grasp_slip: 1 });
    assert.equal(result.robot_hours, 0.02); // 3 x 24 s
    assert.equal(result.stages.grasped.n, 3);
    assert.equal((await listEpisodes(db, "run_e2e")).length, 3);
    assert.deepEqual((await listEpisodes(db, "run_e2e", { outcome: "failure" })).map((e) => e.idx), [1]);
    // The signalling URL carries a token that admits the run's account to that cell.
    const statuses = events.filter((e) => e.type === "status").map((e) => e.data as { status: string; cell: string | null; webrtc: string | null });
    for (const s of statuses.filter((x) => x.webrtc)) {
      const url = new URL(s.webrtc!);
      assert.equal(`${url.origin}${url.pathname}`, "wss://127.0.0.1:8080/streams/cells/so101-b");
      const check = await checkStreamToken(db, url.searchParams.get("token") ?? undefined, "so101-b", new Date());
      assert.ok(check.ok && check.grant.accountId === (await runsRepo.getRun(db, "run_e2e"))!.accountId, JSON.stringify(check));
    }
    assert.deepEqual(
      statuses.map((s) => ({ ...s, webrtc: s.webrtc && s.webrtc.replace(/\?token=.*$/, "") })),
      [
        { status: "scheduling", cell: "so101-b", webrtc: "wss://127.0.0.1:8080/streams/cells/so101-b" },
        { status: "running", cell: "so101-b", webrtc: "wss://127.0.0.1:8080/streams/cells/so101-b" },
        { status: "completed", cell: null, webrtc: null },
      ],
    );
    assert.deepEqual(events.filter((e) => e.type === "episode").map((e) => e.data), [
      { episode: 1, of: 3, outcome: "success", duration_s: 20 },
      { episode: 2, of: 3, outcome: "failure", duration_s: 20 },
      { episode: 3, of: 3, outcome: "success", duration_s: 20 },
    ]);
    const text = await metrics.metrics();
    assert.match(text, /assay_cell_seq_dedupes_total 3/);
    assert.match(text, /assay_episodes_assigned_total 3/);

    // A reconnecting agent learns where the coordinator stands.
    agent.disconnect();
    agent.open(hello("so101-b", { lastSeqSent: seq }));
    assert.equal((await agent.next((m) => m.welcome)).lastSeqApplied, seq);
  });

  it("records the container image an episode reports running in the run's resolved_pins.images, by digest", async () => {
    await insertFixtures(db, "run_pin", 3);
    const agent = await agentFor("so101-b");
    agent.open(hello("so101-b"));
    await agent.next((m) => m.welcome);
    const id = `sha256:${"ab".repeat(32)}`;
    const metas = [
      { policy_image: { image: "ghcr.io/acme/picker:3", id, repo_digests: [`ghcr.io/acme/picker@sha256:${"cd".repeat(32)}`] } },
      { policy_image: { image: "ghcr.io/acme/picker:3", id, repo_digests: [`ghcr.io/acme/picker@sha256:${"cd".repeat(32)}`] } },
      { policy_image: { image: "ghcr.io/acme/picker:3", id: "latest", repo_digests: [] } },
    ];
    let seq = 0;
    for (const meta of metas) {
      const assign = await agent.next((m) => m.assignEpisode);
      agent.send({
        seq: ++seq,
        episodeFinished: {
          episodeId: assign.episodeId, attempt: 1, outcome: "success", failureCluster: "", durationS: 5, resetS: 1, replaySpecJson: "{}",
          metaJson: JSON.stringify(meta), artifacts: [], evaluationJson: "{}", finishedAtMs: Date.now(),
        },
      });
      assert.equal((await agent.next((m) => m.ack)).seq, seq);
    }
    const pins = JSON.parse((await runsRepo.getRunRow(db, "run_pin"))!.resolved_pins) as Record<string, unknown>;
    // The same image twice is one entry; an id that is not a sha256 digest is not recorded.
    assert.deepEqual(pins.images, { "ghcr.io/acme/picker:3": { ids: [id], repo_digests: [`ghcr.io/acme/picker@sha256:${"cd".repeat(32)}`] } });
    assert.equal(pins.robot, "so101@3.11", "the other pins stay");
  });

  it("refuses unknown and revoked tokens with UNAUTHENTICATED", async () => {
    const agent = await agentFor("so101-c");
    await revokeCell(db, "so101-c");
    agent.open(hello("so101-c"));
    const error = await agent.ended!;
    assert.equal(error?.code, status.UNAUTHENTICATED);
    assert.match(error!.details, /^cell_revoked: /);
    await assert.rejects(agent.artifactStatus({ episodeId: "x", kind: "mcap", fileName: "", bytes: 0, sha256: "" }), (e: ServiceError) => e.code === status.UNAUTHENTICATED);

    const stranger = new ScriptedAgent(`127.0.0.1:${server.port}`, "assay_cell_not-a-token");
    agents.push(stranger);
    stranger.open(hello("so101-c"));
    const refused = await stranger.ended!;
    assert.equal(refused?.code, status.UNAUTHENTICATED);
    assert.match(refused!.details, /^token_unknown: /);
  });

  it("requires Hello first, from the token's own cell", async () => {
    const agent = await agentFor("so101-c");
    agent.open({ seq: 0, heartbeat: { sentAtMs: 0, state: "idle", episodeId: "", dutyCyclePct: 0, uploadBacklog: 0, instrumentsDown: [] } });
    const error = await agent.ended!;
    assert.equal(error?.code, status.INVALID_ARGUMENT);
    assert.match(error!.details, /^hello_required: /);

    agent.open(hello("so101-d"));
    const mismatch = await agent.ended!;
    assert.equal(mismatch?.code, status.INVALID_ARGUMENT);
    assert.match(mismatch!.details, /^cell_id_mismatch: /);
  });

  it("refuses work to a cell whose firmware differs from its pin", async () => {
    await insertFixtures(db, "run_fw", 1);
    const agent = await agentFor("so101-a"); // pinned so101@3.10
    agent.open(hello("so101-a", { firmware: "3.11" }));
    await agent.next((m) => m.welcome);
    const refusal = await agent.next((m) => m.refusal);
    assert.equal(refusal.code, "firmware_mismatch");
    assert.match(refusal.message, /reports so101@3\.11 but .* pins so101@3\.10/);
    assert.equal((await server.fleet.connectedCells())[0].state, "firmware_mismatch");
    assert.equal(await server.scheduler.runPass(), 0);
    assert.equal(agent.pending().filter((m) => m.assignEpisode).length, 0);
    assert.equal((await getEpisode(db, runsRepo.episodeId("run_fw", 0)))!.status, "pending");
  });

  it("puts an episode back to pending with an interruption when its cell disconnects, and reassigns it", async () => {
    await insertFixtures(db, "run_drop", 1);
    const agent = await agentFor("so101-c");
    agent.open(hello("so101-c"));
    const first = await agent.next((m) => m.assignEpisode);
    agent.send({ seq: 1, episodeStarted: { episodeId: first.episodeId, attempt: 1, startedAtMs: Date.now() } });
    await agent.next((m) => m.ack);

    agent.disconnect();
    agent.open(hello("so101-c", { lastSeqSent: 1 }));
    const again = await agent.next((m) => m.assignEpisode);
    assert.equal(again.episodeId, first.episodeId);
    assert.equal(again.attempt, 2);
    const interruptions = JSON.parse((await getEpisode(db, first.episodeId))!.interruptions);
    assert.equal(interruptions.length, 1);
    assert.equal(interruptions[0].attempt, 1);
    assert.equal(interruptions[0].cell, "so101-c");
    assert.equal(interruptions[0].reason, "link_lost");
    assert.ok(interruptions[0].duration_s >= 0);
  });

  it("disconnects a cell that stops heartbeating and requeues its episode", async () => {
    await server.stop();
    server = await startFleet({
      db, runEvents: new RunEvents(), pins: loadFirmwarePins(), objects: new DiskStore(join(dir, "artifacts")),
      baseUrl: "http://127.0.0.1:8080", streamsUrl: "wss://s", heartbeatIntervalMs: 50, heartbeatTimeoutMs: 200, logger: quiet,
    });
    await insertFixtures(db, "run_silent", 1);
    const agent = await agentFor("so101-c");
    agent.open(hello("so101-c"));
    assert.equal((await agent.next((m) => m.welcome)).heartbeatIntervalMs, 50);
    const assign = await agent.next((m) => m.assignEpisode);
    const error = await agent.ended!;
    assert.equal(error?.code, status.UNAVAILABLE);
    assert.match(error!.details, /^heartbeat_timeout: /);
    const episode = (await getEpisode(db, assign.episodeId))!;
    assert.equal(episode.status, "pending");
    assert.equal(JSON.parse(episode.interruptions)[0].reason, "link_lost");
    assert.deepEqual(await server.fleet.connectedCells(), []);
  });

  it("after a coordinator restart, requeues an episode the reconnected cell no longer holds", async () => {
    await insertFixtures(db, "run_restart", 1);
    const agent = await agentFor("so101-c");
    agent.open(hello("so101-c"));
    const assign = await agent.next((m) => m.assignEpisode);
    await server.stop();
    // Shutting down does not requeue: the agent may finish the episode and report it later.
    assert.equal((await getEpisode(db, assign.episodeId))!.status, "assigned");
    server = await startFleet({
      db, runEvents: new RunEvents(), pins: loadFirmwarePins(), objects: new DiskStore(join(dir, "artifacts")),
      baseUrl: "http://127.0.0.1:8080", streamsUrl: "wss://s", logger: quiet,
    });
    const restarted = new ScriptedAgent(`127.0.0.1:${server.port}`, await enrollCell(db, { cellId: "so101-c", model: "so101" }));
    agents.push(restarted);
    restarted.open(hello("so101-c"));
    await restarted.next((m) => m.welcome);
    restarted.send({ heartbeat: { sentAtMs: Date.now(), state: "idle", episodeId: "", dutyCyclePct: 0, uploadBacklog: 0, instrumentsDown: [] } });
    const again = await restarted.next((m) => m.assignEpisode);
    assert.equal(again.episodeId, assign.episodeId);
    assert.equal(again.attempt, 2);
  });

  it("requeues the episode an agent reports interrupted, with the agent's reason", async () => {
    await insertFixtures(db, "run_int", 1);
    const agent = await agentFor("so101-c");
    agent.open(hello("so101-c"));
    const first = await agent.next((m) => m.assignEpisode);
    agent.send({ seq: 1, episodeStarted: { episodeId: first.episodeId, attempt: 1, startedAtMs: Date.now() } });
    agent.send({ seq: 2, episodeInterrupted: { episodeId: first.episodeId, attempt: 1, reason: "policy_error", detail: "container exited 137", durationS: 3.5, artifacts: [] } });
    const again = await agent.next((m) => m.assignEpisode);
    assert.equal(again.attempt, 2);
    const [entry] = JSON.parse((await getEpisode(db, first.episodeId))!.interruptions);
    assert.deepEqual({ ...entry, at: undefined }, { attempt: 1, cell: "so101-c", reason: "policy_error", detail: "container exited 137", duration_s: 3.5, at: undefined });
  });

  it("takes the first finish of a reassigned episode, cancels the other cell's attempt, and refuses that cell's artifacts", async () => {
    await insertFixtures(db, "run_twice", 1);
    const first = await agentFor("so101-b");
    first.open(hello("so101-b"));
    const assign1 = await first.next((m) => m.assignEpisode);
    first.send({ seq: 1, episodeStarted: { episodeId: assign1.episodeId, attempt: 1, startedAtMs: Date.now() } });
    await first.next((m) => m.ack);
    const second = await agentFor("so101-c");
    second.open(hello("so101-c"));
    await second.next((m) => m.welcome);

    // so101-b's link drops mid-episode (its agent was killed after queuing EpisodeFinished): requeued, reassigned.
    first.disconnect();
    const assign2 = await second.next((m) => m.assignEpisode);
    assert.equal(assign2.episodeId, assign1.episodeId);
    assert.equal(assign2.attempt, 2);
    second.send({ seq: 1, episodeStarted: { episodeId: assign2.episodeId, attempt: 2, startedAtMs: Date.now() } });
    await second.next((m) => m.ack);

    const finishedBy = (agentSeq: number, attempt: number, outcome: "success" | "failure", ref: ArtifactRef): Partial<AgentMessage> => ({
      seq: agentSeq,
      episodeFinished: {
        episodeId: assign1.episodeId, attempt, outcome, failureCluster: outcome === "failure" ? "grasp_slip" : "", durationS: 10, resetS: 2,
        replaySpecJson: "{}", metaJson: "{}", artifacts: [ref], evaluationJson: "{}", finishedAtMs: Date.now(),
      },
    });
    const dataB = Buffer.from("so101-b's recording ".repeat(50));
    const refB: ArtifactRef = { episodeId: assign1.episodeId, kind: "mcap", fileName: `${assign1.episodeId}.mcap`, bytes: dataB.length, sha256: sha256(dataB) };
    const dataC = Buffer.from("so101-c's recording ".repeat(60));
    const refC: ArtifactRef = { ...refB, bytes: dataC.length, sha256: sha256(dataC) };

    // The restarted so101-b resends its outbox: the late finish of attempt 1 is the first, so it counts.
    first.open(hello("so101-b", { lastSeqSent: 2 }));
    assert.equal((await first.next((m) => m.welcome)).lastSeqApplied, 1);
    first.send(finishedBy(2, 1, "success", refB));
    assert.equal((await first.next((m) => m.ack)).seq, 2);
    assert.deepEqual(await second.next((m) => m.cancelEpisode), { episodeId: assign1.episodeId, reason: "finished elsewhere" });
    let episode = (await getEpisode(db, assign1.episodeId))!;
    assert.deepEqual([episode.status, episode.cell_id, episode.outcome], ["done", "so101-b", "success"]);

    // so101-c's own finish (sent before the cancel reached it) is acked and ignored, its artifact not announced.
    second.send(finishedBy(2, 2, "failure", refC));
    assert.equal((await second.next((m) => m.ack)).seq, 2);
    episode = (await getEpisode(db, assign1.episodeId))!;
    assert.deepEqual([episode.status, episode.cell_id, episode.outcome], ["done", "so101-b", "success"]);
    assert.equal((await getArtifact(db, assign1.episodeId, "mcap"))!.sha256, refB.sha256);
    assert.equal(events.filter((e) => e.type === "episode").length, 1);
    await assert.rejects(second.artifactStatus(refC), (error: ServiceError) => {
      assert.equal(error.code, status.PERMISSION_DENIED);
      assert.match(error.details, /^artifact_not_yours: /);
      assert.deepEqual(error.metadata.get("assay-reason"), ["artifact_not_yours"]);
      return true;
    });
    await assert.rejects(second.upload([{ ref: refC, offset: 0, data: dataC, last: true }]), (error: ServiceError) => error.code === status.PERMISSION_DENIED);

    // so101-b's upload completes the run; so101-c, cancelled, is free again and the episode stays done.
    assert.deepEqual(await first.upload([{ ref: refB, offset: 0, data: dataB, last: true }]), { receivedBytes: dataB.length, complete: true });
    assert.equal((await runsRepo.getRunRow(db, "run_twice"))!.status, "completed");
    second.send({ seq: 3, episodeInterrupted: { episodeId: assign1.episodeId, attempt: 2, reason: "cancelled", detail: "finished elsewhere", durationS: 1, artifacts: [] } });
    await second.next((m) => m.ack);
    assert.deepEqual((await server.fleet.connectedCells()).map((c) => [c.cellId, c.episodeId ?? ""]), [["so101-b", ""], ["so101-c", ""]]);
    episode = (await getEpisode(db, assign1.episodeId))!;
    assert.equal(episode.status, "done");
    assert.deepEqual(JSON.parse(episode.interruptions).map((i: { cell: string; reason: string }) => [i.cell, i.reason]), [["so101-b", "link_lost"]]);
  });

  it("cancels the newer attempt when the same cell, reassigned the episode after a restart, resends the earlier attempt's finish", async () => {
    await insertFixtures(db, "run_again", 1);
    const agent = await agentFor("so101-c");
    agent.open(hello("so101-c"));
    const first = await agent.next((m) => m.assignEpisode);
    agent.send({ seq: 1, episodeStarted: { episodeId: first.episodeId, attempt: 1, startedAtMs: Date.now() } });
    await agent.next((m) => m.ack);
    agent.disconnect();
    agent.open(hello("so101-c", { lastSeqSent: 2 }));
    const again = await agent.next((m) => m.assignEpisode);
    assert.equal(again.attempt, 2);
    // The outbox resend comes after the new AssignEpisode: the first finish counts.
    agent.send({
      seq: 2,
      episodeFinished: {
        episodeId: first.episodeId, attempt: 1, outcome: "success", failureCluster: "", durationS: 10, resetS: 2, replaySpecJson: "{}", metaJson: "{}",
        artifacts: [], evaluationJson: "{}", finishedAtMs: Date.now(),
      },
    });
    await agent.next((m) => m.ack);
    assert.deepEqual(await agent.next((m) => m.cancelEpisode), { episodeId: first.episodeId, reason: "finished elsewhere" });
    assert.equal((await getEpisode(db, first.episodeId))!.status, "done");
    // Still busy with attempt 2 until it says so; then free.
    assert.deepEqual((await server.fleet.connectedCells()).map((c) => [c.cellId, c.episodeId]), [["so101-c", first.episodeId]]);
    agent.send({ seq: 3, episodeInterrupted: { episodeId: first.episodeId, attempt: 2, reason: "cancelled", detail: "finished elsewhere", durationS: 0, artifacts: [] } });
    await agent.next((m) => m.ack);
    assert.deepEqual((await server.fleet.connectedCells()).map((c) => [c.cellId, c.episodeId ?? ""]), [["so101-c", ""]]);
    assert.equal((await getEpisode(db, first.episodeId))!.status, "done");
  });
});


