/**
 * "Nothing lost": real cell-agent processes behind their link proxies, faults injected mid-episode
 * (kill -9 and restart; cable pulled and plugged back), and the run still ends with every requested
 * episode, the interrupted one retried and saying so in its record. Also the attempt cap (with a
 * scripted agent) and `npm run fleet` against a real `npm start` process.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { eventually } from "../support/eventually.js";
import { ScriptedAgent } from "../support/scripted-agent.js";
import { runEnd, startTestService, TEST_ADMIN_KEY, type TestService } from "./helpers.js";
import { nodeArgsFor } from "../../scripts/compiled-entry.mjs";

const REPO = resolve(import.meta.dirname, "..", "..");

const RUN = {
  kind: "run",
  robot: "so101@latest",
  environment: "tabletop@1",
  task: "pick-cube@v1",
  policy: {
    type: "container",
    image: "assay/ref-policy:expert",
    action_space: { type: "joint_position", dim: 6 },
    observation_contract: { cameras: ["top", "wrist"], state: ["joint_positions"] },
  },
};

interface EpisodeRecord {
  id: string;
  attempts: number;
  interruptions: Array<{ attempt: number; cell: string; reason: string; detail: string }>;
}

async function submit(service: TestService, episodes: number, key: string): Promise<string> {
  const created = await service.api("/v1/runs", { method: "POST", json: { ...RUN, episodes }, headers: { "idempotency-key": key } });
  assert.equal(created.status, 201, await created.clone().text());
  return ((await created.json()) as { id: string }).id;
}

/** The episode `cell` is running for `runId` (EpisodeStarted applied), once there is one. */
function runningOn(service: TestService, runId: string, cell: string): Promise<string> {
  return eventually(`an episode of ${runId} running on ${cell}`, async () => {
    const row = await service.coordinator.db
      .prepare("SELECT id FROM episodes WHERE run_id = ? AND cell_id = ? AND status = 'running'")
      .get(runId, cell) as { id: string } | undefined;
    return row?.id;
  }, { deadlineMs: 120_000 });
}

/** Waits until `queued()` lists something ("queued") or the run has ended ("ended"). */
async function finalOrQueued(service: TestService, runId: string, queued: () => string[]): Promise<"queued" | "ended"> {
  return eventually(`an artifact queued on the cell, or run ${runId} to end`, async () => {
    if (queued().length > 0) return "queued" as const;
    const row = await service.coordinator.db.prepare("SELECT status FROM runs WHERE id = ?").get(runId) as { status: string };
    return ["completed", "failed", "stopped"].includes(row.status) ? ("ended" as const) : undefined;
  }, { deadlineMs: 180_000 });
}

async function episodesOf(service: TestService, runId: string): Promise<EpisodeRecord[]> {
  return ((await (await service.api(`/v1/runs/${runId}/episodes`)).json()) as { data: EpisodeRecord[] }).data;
}

async function interruptionsOf(service: TestService, episodeId: string): Promise<EpisodeRecord["interruptions"]> {
  const row = await service.coordinator.db.prepare("SELECT interruptions FROM episodes WHERE id = ?").get(episodeId) as { interruptions: string };
  return JSON.parse(row.interruptions);
}

describe("fleet faults mid-episode (real agent processes behind link proxies)", function () {
  this.timeout(300_000);
  let service: TestService;

  before(async () => {
    // Speed 3: an episode takes seconds of wall time, so "running" is a window a fault can hit.
    service = await startTestService({ cells: ["so101-b", "so101-c"], simSpeed: 3 });
  });

  // A test that fails between a fault and its repair leaves a cell down or unplugged: repair it, so the
  // next test fails (or passes) for its own reasons rather than for a missing cell.
  afterEach(async () => {
    const fleet = service?.fleet;
    if (!fleet) return;
    const up = fleet.pids();
    for (const cell of ["so101-b", "so101-c"]) {
      fleet.plug(cell);
      if (!(cell in up)) await fleet.restart(cell);
    }
  });

  after(async () => {
    await service?.stop();
  });

  it("kill -9 mid-episode, then restart: the episode is retried (agent_restart) and the run completes with all episodes", async () => {
    // Two episodes, one per cell: the one so101-b runs is killed and retried; the count is not what is tested.
    const runId = await submit(service, 2, "fault-kill");
    const episodeId = await runningOn(service, runId, "so101-b");
    // The agent reports EpisodeStarted before it opens the episode's recording, so the coordinator can
    // mark the episode running a moment before the file exists: the kill waits for the recording to begin.
    const recordings = join(service.dataDir, "cells", "so101-b", "agent", "recordings");
    const partial = join(recordings, `${episodeId}.mcap.part`);
    await eventually(`so101-b to begin recording ${episodeId}`, () => existsSync(partial));
    await service.fleet!.kill("so101-b");
    assert.ok(existsSync(partial), "the killed agent left its recording as .mcap.part");

    await service.fleet!.restart("so101-b");
    const { run } = await runEnd(service, runId, { deadlineMs: 180_000 });
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
    assert.equal(run.result.n, 2);
    // The restarted agent's own report (EpisodeInterrupted agent_restart) completes the record.
    const interruptions = await eventually("the agent_restart report", async () => {
      const list = await interruptionsOf(service, episodeId);
      return list.some((i) => i.reason === "agent_restart") && list;
    });
    assert.deepEqual(interruptions.map((i) => [i.cell, i.reason]), [["so101-b", "agent_restart"]]);
    const episodes = await episodesOf(service, runId);
    assert.equal(episodes.length, 2);
    const retried = episodes.find((e) => e.id === episodeId)!;
    assert.equal(retried.attempts, 2);
    assert.equal(retried.interruptions[0].attempt, 1);
    assert.ok(readdirSync(recordings).some((name) => name.includes(".mcap.interrupted")), "the partial recording is kept, marked interrupted");
    // The run completes when the coordinator has stored every file; the agent deletes its copy and
    // then the copy's sidecar right after the confirmation, so wait for that, not just the run.
    const outbox = join(service.dataDir, "cells", "so101-b", "agent", "outbox");
    const left = () => readdirSync(outbox).filter((n) => !n.startsWith("."));
    await eventually("the agent to delete its confirmed uploads", () => left().length === 0 || undefined, { deadlineMs: 10_000 }).catch(() => undefined);
    assert.deepEqual(left(), [], "every artifact in the outbox was uploaded and deleted");
  });

  // A kill while EpisodeFinished is unacked lets the coordinator requeue (link_lost) and reassign
  // the episode; the restarted agent's resent finish then counts (the first finish wins), the other
  // cell is sent CancelEpisode "finished elsewhere", and anything of that attempt the coordinator
  // refuses is set aside in its rejected/ folder instead of blocking its later uploads.
  it("kill -9 while finished recordings wait in the outbox: they are uploaded after the restart and the run completes", async () => {
    const runId = await submit(service, 6, "fault-outbox");
    const outbox = join(service.dataDir, "cells", "so101-b", "agent", "outbox");
    // This run's artifacts only (its episodes are ep_<the run id's suffix>_<index>), whatever an earlier test left queued.
    const ours = `${runId.replace(/^run_/, "ep_")}_`;
    const queued = () => (existsSync(outbox) ? readdirSync(outbox).filter((name) => name.startsWith(ours) && name.endsWith(".json")) : []);
    // The window between "announced" and "confirmed" is short; each miss is retried on the next episode.
    let caught: string[] = [];
    for (let tries = 0; tries < 4 && caught.length === 0; tries++) {
      const open = await finalOrQueued(service, runId, queued);
      if (open === "ended") break;
      await service.fleet!.kill("so101-b");
      caught = queued();
      await service.fleet!.restart("so101-b");
    }
    assert.ok(caught.length > 0, "an artifact was still queued when the agent was killed");
    const { run } = await runEnd(service, runId, { deadlineMs: 180_000 });
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
    const episodes = (await episodesOf(service, runId)) as Array<EpisodeRecord & { mcap_url: string | null }>;
    assert.equal(episodes.length, 6);
    const stored = await service.coordinator.db.prepare("SELECT file_name FROM artifacts WHERE run_id = ? AND status = 'stored'").all(runId) as Array<{ file_name: string }>;
    for (const sidecar of caught) {
      const fileName = sidecar.replace(/\.json$/, "");
      assert.ok(stored.some((a) => a.file_name === fileName), `${fileName} was uploaded after the restart`);
    }
    await eventually("so101-b's outbox to drain", () => queued().length === 0);
  });

  it("link unplugged mid-episode, plugged back: the agent aborts and holds, the episode is retried (link_lost), the run completes", async () => {
    // Two episodes, one per cell: the one so101-c runs is cut off and retried; the count is not what is tested.
    const runId = await submit(service, 2, "fault-unplug");
    const episodeId = await runningOn(service, runId, "so101-c");
    service.fleet!.unplug("so101-c");
    // The coordinator requeues at once (the stream died); the agent aborts the attempt and idles.
    await eventually("the coordinator to requeue the episode", async () => (await interruptionsOf(service, episodeId)).some((i) => i.reason === "link_lost"));
    const controlUrl = service.fleet!.status().find((c) => c.cell === "so101-c")!.controlUrl!;
    await eventually("so101-c to abort its episode", async () => ((await (await fetch(`${controlUrl}/state`)).json()) as { state: string }).state === "idle");
    const pluggedAt = new Date().toISOString();
    service.fleet!.plug("so101-c");

    const { run } = await runEnd(service, runId, { deadlineMs: 180_000 });
    assert.equal(run.status, "completed", JSON.stringify(run.status_detail));
    assert.equal(run.result.n, 2);
    const episodes = await episodesOf(service, runId);
    assert.equal(episodes.length, 2);
    const retried = episodes.find((e) => e.id === episodeId)!;
    assert.ok(retried.attempts >= 2, `attempts ${retried.attempts}`);
    assert.deepEqual(retried.interruptions.map((i) => [i.cell, i.reason]), [["so101-c", "link_lost"]]);
    // so101-c said Hello again after the plug and the coordinator applied everything its outbox held
    // (the EpisodeInterrupted it queued while cut off among them).
    await eventually("so101-c to reconnect and resend its outbox", async () => {
      const cell = await service.coordinator.db.prepare("SELECT last_seen, last_seq_applied, hello FROM cells WHERE id = 'so101-c'").get() as
        { last_seen: string; last_seq_applied: number; hello: string };
      return cell.last_seen > pluggedAt && cell.last_seq_applied >= (JSON.parse(cell.hello) as { lastSeqSent: number }).lastSeqSent;
    });
  });
});

describe("the attempt cap", function () {
  this.timeout(60_000);
  let service: TestService;
  let agent: ScriptedAgent | undefined;

  before(async () => {
    service = await startTestService();
  });

  after(async () => {
    agent?.close();
    await service?.stop();
  });

  it("fails the run, naming the episode, after its fifth interrupted attempt instead of retrying forever", async () => {
    const cell = new ScriptedAgent(service.coordinator.grpcAddress, await service.coordinator.enrollCell("so101-b", "so101"), "so101-b");
    agent = cell;
    await cell.connect();
    const runId = await submit(service, 1, "cap-1");
    let episodeId = "";
    for (let attempt = 1; attempt <= 5; attempt++) {
      const assign = await cell.next((m) => m.assignEpisode);
      assert.equal(assign.attempt, attempt);
      episodeId = assign.episodeId;
      await cell.started(assign);
      await cell.sendSequenced({
        episodeInterrupted: { episodeId, attempt, reason: "hardware_fault", detail: "gripper servo overheated", durationS: 3, artifacts: [] },
      });
    }
    const run = (await (await service.api(`/v1/runs/${runId}`)).json()) as Record<string, any>;
    assert.equal(run.status, "failed");
    assert.match(run.status_detail.message, new RegExp(`episode 0 \\(${episodeId}\\) was interrupted 5 times`));
    assert.equal((await interruptionsOf(service, episodeId)).length, 5);
    assert.equal(cell.pending().filter((m) => m.assignEpisode).length, 0, "no sixth attempt");
  });
});

describe("npm run fleet against a running npm start", function () {
  this.timeout(120_000);
  let dataDir: string;
  let start: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  /** Node's arguments for `npm run fleet` (scripts/fleet.ts, bundled once in before()). */
  let fleetArgs: string[] = [];
  const fleet = (...args: string[]) => {
    const out = spawnSync(process.execPath, [...fleetArgs, ...args], {
      cwd: REPO, env: { ...process.env, ASSAY_DATA_DIR: dataDir }, encoding: "utf8", timeout: 60_000,
    });
    return { code: out.status, stdout: out.stdout.trim(), stderr: out.stderr.trim() };
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "assay-fleet-"));
    fleetArgs = await nodeArgsFor(join(REPO, "scripts", "fleet.ts"));
    start = spawn(process.execPath, await nodeArgsFor(join(REPO, "scripts", "start.ts")), {
      cwd: REPO,
      env: {
        ...process.env, ASSAY_PORT: "0", ASSAY_GRPC_PORT: "0", ASSAY_DATA_DIR: dataDir, ASSAY_API_KEY: TEST_ADMIN_KEY,
        ASSAY_SIM_CELLS: "so101-b", ASSAY_SIM_SPEED: "max",
      },
      stdio: ["ignore", process.env.ASSAY_TEST_LOG ? "inherit" : "ignore", process.env.ASSAY_TEST_LOG ? "inherit" : "ignore"],
    });
    exited = new Promise((done) => start!.once("exit", () => done()));
    await eventually("fleet.json", () => existsSync(join(dataDir, "fleet.json")), { deadlineMs: 60_000 });
  });

  after(async () => {
    if (start && start.exitCode === null && start.signalCode === null) {
      start.kill("SIGTERM");
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("drives a cell (status, unplug, plug, estop, reset, kill, restart), rejects unknown cells, and says when npm start is gone", async () => {
    const file = JSON.parse(readFileSync(join(dataDir, "fleet.json"), "utf8"));
    assert.equal(file.pid, start!.pid);
    assert.equal(typeof file.controlPort, "number");
    const firstPid = file.cells["so101-b"].pid as number;
    assert.ok(firstPid > 0);

    let result = fleet("status");
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`so101-b\\s+pid ${firstPid}\\s+link plugged`));

    result = fleet("unplug", "so101-b");
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /so101-b: link to the coordinator cut/);
    assert.match(fleet("status").stdout, /so101-b\s+pid \d+\s+link unplugged/);
    assert.equal(fleet("plug", "so101-b").code, 0);

    result = fleet("estop", "so101-b");
    assert.equal(result.code, 0, result.stderr);
    assert.match(fleet("status").stdout, /so101-b .*estopped \(e-stop button pressed\)/);
    result = fleet("reset", "so101-b");
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /takes work again/);

    result = fleet("kill", "so101-b");
    assert.equal(result.code, 0, result.stderr);
    assert.match(fleet("status").stdout, /so101-b\s+pid down/);
    assert.equal(JSON.parse(readFileSync(join(dataDir, "fleet.json"), "utf8")).cells["so101-b"].pid, null);
    result = fleet("restart", "so101-b");
    assert.equal(result.code, 0, result.stderr);
    const restartedPid = JSON.parse(readFileSync(join(dataDir, "fleet.json"), "utf8")).cells["so101-b"].pid;
    assert.ok(restartedPid > 0 && restartedPid !== firstPid);

    result = fleet("kill", "so101-z");
    assert.equal(result.code, 1);
    assert.match(result.stderr, /unknown cell "so101-z"; known cells: so101-b/);
    assert.equal(fleet("wiggle", "so101-b").code, 2);

    start!.kill("SIGTERM");
    await exited;
    result = fleet("status");
    assert.equal(result.code, 1);
    assert.match(result.stderr, /npm start is not running/);
  });
});
