/**
 * Crashes at any moment (issue 15, "Prove it stays fixed"): the coordinator runs as its own process
 * (scripts/start.ts with ASSAY_FLEET=none, as a deployment would) and is killed with SIGKILL at
 * seeded random moments and started again on the same data directory and ports, while a simulated
 * fleet in this process works through a multi-kind workload (a run, a paired compare, an export,
 * webhooks to a receiver here); on top, one agent is killed and restarted, and another's link is cut
 * and restored. At the end nothing accepted is lost and nothing is counted twice:
 * - every run answered 201 (or replayed by its Idempotency-Key) exists and completed, with each of its
 *   episodes exactly once;
 * - every stored recording is on disk with the sha256 its row holds;
 * - the month's usage is the sum of the runs' costs;
 * - the export is ready and its download matches its sha256;
 * - each run's run.completed reached the receiver under one event id (retries reuse it).
 */
import { freePort } from "../support/free-port.js";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { roundCents } from "../../coordinator/runs/meters.js";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { launchSimFleet, type SimFleet } from "../../simulators/fleet/launcher.js";
import { README_RUN_BODY } from "../fixtures.js";
import { eventually } from "../support/eventually.js";
import { TEST_ADMIN_KEY } from "./helpers.js";
import { startReceiver, type Receiver } from "./webhook-receiver.js";
import { nodeArgsFor } from "../../scripts/compiled-entry.mjs";

type Json = Record<string, any>;

const REPO = resolve(import.meta.dirname, "..", "..");
const CELLS = ["so101-b", "so101-c"];
const SEED = 1125;
const KILLS = 5;
/**
 * The workload's sizes. The five kills, the agent kill and the cut link fall in the first ~30 s, while the first run's
 * first two episodes are running and everything else is queued (seen at every kill: no episode finishes before the
 * faults end); the rest of the work runs after them, up to the kill during the export, which falls while the compare
 * runs. So the counts are workload, not faults: six episodes for the run (was 16), three pairs for the compare (was
 * six) and two for the late run (was six) keep every phase above (running and queued work at each kill, a compare
 * running at the export's kill) at 14 episodes instead of 34.
 */
const RUN_EPISODES = 6;
const COMPARE_PAIRS = 3;
const LATE_RUN_EPISODES = 2;
/** Pause between polls of a run's status over HTTP (SSE cannot follow a run across coordinator kills). */
const RUN_POLL_MS = 250;

/** mulberry32: the fault schedule replays from SEED. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}


async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

describe("crashes at any moment: the coordinator killed with SIGKILL mid-workload, agents killed, links cut", function () {
  this.timeout(600_000);
  const random = prng(SEED);
  let dir: string;
  let ports: { http: number; grpc: number };
  let coordinator: ChildProcess | undefined;
  let operatorKey = "";
  let fleet: SimFleet | undefined;
  let receiver: Receiver;
  const log: string[] = [];
  let kills = 0;

  const base = () => `http://127.0.0.1:${ports.http}`;

  async function startCoordinatorProcess(): Promise<void> {
    const child = spawn(process.execPath, await nodeArgsFor(join(REPO, "scripts", "start.ts")), {
      cwd: REPO,
      env: {
        ...process.env, ASSAY_FLEET: "none", ASSAY_PORT: String(ports.http), ASSAY_GRPC_PORT: String(ports.grpc), ASSAY_DATA_DIR: join(dir, "coordinator"),
        ASSAY_API_KEY: TEST_ADMIN_KEY, ASSAY_WEBHOOKS_ALLOW_LOOPBACK: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    coordinator = child;
    let output = "";
    const ready = new Promise<void>((done, fail) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const operator = /operator key\s+(asy_live_\S+)/.exec(output);
        if (operator) operatorKey = operator[1]!;
        if (output.includes("simulated fleet: off")) done();
      };
      child.stdout!.on("data", onData);
      child.stderr!.on("data", (chunk: Buffer) => log.push(chunk.toString()));
      child.once("exit", (code, signal) => fail(new Error(`the coordinator exited while starting (${signal ?? code}): ${output}${log.join("")}`)));
    });
    await ready;
  }

  async function killCoordinator(): Promise<void> {
    const child = coordinator!;
    const exited = new Promise<void>((done) => child.once("exit", () => done()));
    child.kill("SIGKILL");
    await exited;
    kills++;
  }

  /** An API call that rides out a coordinator that is down or restarting (connection errors only). */
  async function api(path: string, init: { method?: string; json?: unknown; key?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        return await fetch(base() + path, {
          method: init.method ?? "GET",
          headers: { authorization: `Bearer ${init.key ?? TEST_ADMIN_KEY}`, ...(init.json !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
          body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
        });
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await sleep(100);
      }
    }
  }

  async function json(path: string, init: Parameters<typeof api>[1] = {}, status = 200): Promise<Json> {
    for (;;) {
      const res = await api(path, init);
      if (res.status === 429) {
        await sleep(1000 * Number(res.headers.get("retry-after") ?? 1));
        continue;
      }
      const body = (await res.json()) as Json;
      assert.equal(res.status, status, `${init.method ?? "GET"} ${path}: ${JSON.stringify(body)}`);
      return body;
    }
  }

  /** A submission retried with its Idempotency-Key until it answers: 201, or 200 replaying the first. */
  async function submit(body: Json, key: string): Promise<string> {
    for (;;) {
      const res = await api("/v1/runs", { method: "POST", json: body, headers: { "idempotency-key": key } });
      if (res.status === 201 || res.status === 200) return ((await res.json()) as Json).id as string;
      if (res.status !== 429) assert.fail(`submission ${key}: ${res.status} ${await res.text()}`);
      await sleep(1000);
    }
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "assay-crash-"));
    ports = { http: await freePort(), grpc: await freePort() };
    await startCoordinatorProcess();
    assert.match(operatorKey, /^asy_live_/, "the first start prints the operator key");
    receiver = await startReceiver(() => 200);
    const tokens = new Map<string, string>();
    const pins = loadFirmwarePins();
    fleet = await launchSimFleet({
      cells: pins.installations.filter((i) => CELLS.includes(i.cell)),
      coordinatorAddress: `127.0.0.1:${ports.grpc}`,
      // Enrolled once through the API; a restarted cell keeps its token.
      enroll: async (cellId, model) => {
        if (!tokens.has(cellId)) tokens.set(cellId, (await json("/v1/cells", { method: "POST", json: { cell_id: cellId, model }, key: operatorKey }, 201)).enrollment_token);
        return tokens.get(cellId)!;
      },
      dataDir: join(dir, "cells"),
      speed: 6,
      seed: 7,
      log: process.env.ASSAY_TEST_LOG ? (line) => console.log(line) : undefined,
    });
  });

  after(async () => {
    await fleet?.stop();
    if (coordinator && coordinator.exitCode === null) {
      const exited = new Promise<void>((done) => coordinator!.once("exit", () => done()));
      coordinator.kill("SIGTERM");
      await exited;
    }
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("loses no run, episode, recording, export, usage or webhook, and counts nothing twice", async () => {
    await json("/v1/webhooks", { method: "POST", json: { url: receiver.url, events: ["run.completed"] } }, 201);
    const expert = README_RUN_BODY.policy;
    const novice = { ...expert, image: "assay/ref-policy:novice" };
    const runIds = [
      await submit({ ...README_RUN_BODY, episodes: RUN_EPISODES }, "crash-run"),
      await submit({ kind: "compare", robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", episodes: COMPARE_PAIRS, policies: { expert, novice }, paired: true }, "crash-compare"),
    ];

    // Faults at seeded moments while the work runs: the coordinator killed and restarted, one agent
    // killed and restarted, one link cut and restored; a third submission lands between two kills.
    for (let k = 0; k < KILLS; k++) {
      await sleep(600 + random() * 2400);
      if (k === 1) await fleet!.kill(CELLS[0]!);
      if (k === 2) fleet!.unplug(CELLS[1]!);
      await killCoordinator();
      await startCoordinatorProcess();
      if (k === 1) await fleet!.restart(CELLS[0]!);
      if (k === 2) fleet!.plug(CELLS[1]!);
      if (k === 3) runIds.push(await submit({ ...README_RUN_BODY, episodes: LATE_RUN_EPISODES }, "crash-late-run"));
    }

    // The export is asked for once the first run has completed, and a kill falls while it is prepared.
    // Runs take minutes here: a poll every 250 ms (not eventually's 20) leaves the CPU to the cells and the coordinator under test.
    await eventually("the first run to complete", async () => (await json(`/v1/runs/${runIds[0]}`)).status === "completed", { deadlineMs: 300_000, intervalMs: RUN_POLL_MS });
    const exported = await json(`/v1/runs/${runIds[0]}/export`, { method: "POST", json: { format: "mcap-bundle" } }, 202);
    await killCoordinator();
    await startCoordinatorProcess();

    const runs = new Map<string, Json>();
    await eventually("every run to end", async () => {
      for (const id of runIds) runs.set(id, await json(`/v1/runs/${id}`));
      return [...runs.values()].every((run) => ["completed", "failed", "stopped"].includes(run.status));
    }, { deadlineMs: 300_000, intervalMs: RUN_POLL_MS });

    // Every accepted run completed, each episode exactly once (a compare may stop early: its rest is cancelled).
    const db = new Database(join(dir, "coordinator", "assay.sqlite"), { readonly: true });
    for (const [id, run] of runs) {
      assert.equal(run.status, "completed", `${id}: ${JSON.stringify(run.status_detail)}`);
      const episodes = (await json(`/v1/runs/${id}/episodes`)).data as Json[];
      const indices = episodes.map((e) => e.index);
      assert.equal(new Set(indices).size, indices.length, `${id}: an episode listed twice`);
      const rows = db.prepare("SELECT status, COUNT(*) AS n FROM episodes WHERE run_id = ? GROUP BY status").all(id) as Array<{ status: string; n: number }>;
      const total = (db.prepare("SELECT episodes_total FROM runs WHERE id = ?").get(id) as { episodes_total: number }).episodes_total;
      assert.equal(rows.reduce((n, r) => n + r.n, 0), total, `${id}: every planned episode has one row`);
      assert.deepEqual(rows.filter((r) => r.status !== "done" && r.status !== "cancelled"), [], `${id}: no episode left open`);
      const done = rows.find((r) => r.status === "done")?.n ?? 0;
      assert.equal(episodes.filter((e) => e.outcome === "success" || e.outcome === "failure").length, done, `${id}: each finished episode once, with its outcome`);
    }
    const runResult = runs.get(runIds[0]!)!.result;
    assert.equal(runResult.n, RUN_EPISODES, `the run's n counts each of its ${RUN_EPISODES} episodes once`);

    // Every stored recording is on disk with its sha256.
    try {
      const artifacts = db.prepare(
        "SELECT a.run_id, a.episode_id, a.file_name, a.sha256 FROM artifacts a WHERE a.status = 'stored' AND a.run_id IN (" + runIds.map(() => "?").join(",") + ")",
      ).all(...runIds) as Array<{ run_id: string; episode_id: string; file_name: string; sha256: string }>;
      const episodesDone = (db.prepare("SELECT COUNT(*) AS n FROM episodes WHERE status = 'done' AND run_id IN (" + runIds.map(() => "?").join(",") + ")").get(...runIds) as { n: number }).n;
      assert.ok(artifacts.length >= 2 * episodesDone, `${artifacts.length} recordings for ${episodesDone} episodes (an MCAP and a video each)`);
      for (const a of artifacts) {
        const path = join(dir, "coordinator", "artifacts", a.run_id, a.episode_id, a.file_name);
        assert.ok(existsSync(path), `${path} is missing`);
        assert.equal(await sha256File(path), a.sha256, path);
      }
      const pending = (db.prepare("SELECT COUNT(*) AS n FROM artifacts WHERE status != 'stored' AND run_id IN (" + runIds.map(() => "?").join(",") + ")").get(...runIds) as { n: number }).n;
      assert.equal(pending, 0, "no recording left unstored");
    } finally {
      db.close();
    }

    // The month's usage is the sum of the runs' costs.
    const period = new Date().toISOString().slice(0, 7);
    const usage = await json(`/v1/usage?period=${period}`);
    const costs = [...runs.values()].reduce((sum, run) => sum + run.result.cost_usd, 0);
    assert.equal(roundCents(usage.usd_total), roundCents(costs));

    // The export is ready and its bytes are what it says.
    const ready = await eventually("the export to be ready", async () => {
      const e = await json(`/v1/exports/${exported.id}`);
      return e.status === "ready" ? e : e.status === "preparing" ? false : assert.fail(`export ${e.status}: ${JSON.stringify(e.failure)}`);
    }, { deadlineMs: 120_000 });
    const download = await api(new URL(ready.download_url).pathname);
    assert.equal(download.status, 200);
    assert.equal(createHash("sha256").update(Buffer.from(await download.arrayBuffer())).digest("hex"), ready.file.sha256);

    // Each run's completion reached the receiver, under one event id however often it was sent.
    await receiver.waitFor((received) => runIds.every((id) => received.some((r) => JSON.parse(r.rawBody).data.run.id === id)));
    for (const id of runIds) {
      const ids = new Set(receiver.received.filter((r) => JSON.parse(r.rawBody).data.run.id === id).map((r) => r.headers["assay-event-id"]));
      assert.equal(ids.size, 1, `run ${id}: run.completed under ${ids.size} event ids`);
    }
    console.log(`      survived ${kills} coordinator kills (SIGKILL), an agent kill and a cut link; ${runIds.length} runs, ${[...runs.values()].reduce((n, r) => n + (r.result?.n ?? 0), 0)} episodes counted once`);
  });
});
