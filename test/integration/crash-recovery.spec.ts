/**
 * Crashes at any moment (issue 15, "Prove it stays fixed"): the coordinator runs as its own process
 * (scripts/start.ts with ASSAY_FLEET=none, as a deployment would) and is killed with SIGKILL and started
 * again on the same data directory and ports, while a simulated fleet in this process works through a
 * multi-kind workload (a run, a paired compare, an export, webhooks to a receiver here); on top, one agent
 * is killed and restarted, and another's link is cut and restored.
 *
 * The faults are placed by the work's progress, not by the clock: each awaits a condition of the store
 * (its SQLite file, read-only, probed every PROBE_MS) and then a delay in proportion to the time the work
 * there takes; which finish places a fault and where in its window it falls are drawn from SEED, so the
 * schedule replays. Whatever the machine's speed, the six kills fall:
 * 1. at an episode's start: once one has been sent to a cell and not yet started;
 * 2. mid-episode (with an agent killed): after the 1st or 2nd finish, a seeded share (1/5 to 3/5) of an
 *    episode's time into the running episode that started last (the first one found short of that share;
 *    an episode that ends early leaves the kill in the other cell's);
 * 3. as a finish is applied and its recordings upload (with a link cut): at the 3rd or 4th finish or a later
 *    one, while a recording is announced and not yet stored;
 * 4. at the first run's completion: once its last episode has finished, a seeded share (0 to 1.5) of the
 *    time a finish's recordings take to store, so the kill falls while its last recordings upload (the run
 *    completes with the last of them: its result, its usage, its run.completed webhook) or just after;
 * 5. as a finish of the compare or the late run is applied and the scheduler assigns the next episode: the
 *    1st or 2nd finish after kill 4, within 50 ms;
 * 6. during the export, asked for once the first run has completed.
 * Each kill logs where it fell: each run's episodes by state, the recordings and webhooks still owed.
 * `ASSAY_CRASH_SEED=<n>` draws another schedule (to look for a failing one); a failed run keeps its data
 * folder (the coordinator's store, the cells' outboxes) and the coordinator's stderr, and prints where.
 *
 * At the end nothing accepted is lost and nothing is counted twice:
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
import { createReadStream, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
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
const SEED = Number(process.env.ASSAY_CRASH_SEED ?? 1125);
/**
 * The workload's sizes: 14 episodes. The first run's six give kills 2 and 3 their finishes (up to the 4th) before
 * kill 4 at its completion; the compare (three pairs) is queued behind it and runs through kills 4 to 6; the late
 * run's two, submitted after kill 4, make sure a finish follows the first run's completion for kill 5 however far
 * the compare has got.
 */
const RUN_EPISODES = 6;
const COMPARE_PAIRS = 3;
const LATE_RUN_EPISODES = 2;
/** Pause between probes of the store's SQLite file while a fault awaits its moment (cheap: a few reads on a read-only connection). */
const PROBE_MS = 50;
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

/** What the coordinator's store holds at one moment, read from its SQLite file (read-only, between or during its writes). */
interface Progress {
  at: number;
  runs: Array<{ id: string; status: string }>;
  episodes: Array<{ run_id: string; status: string; started_at: string | null; finished_at: string | null }>;
  recordingsPending: number;
  /** Per episode whose recordings are stored: milliseconds from its finish to its last recording stored. */
  uploadsMs: number[];
  webhooksPending: number;
  webhooksDelivered: number;
  exports: string[];
}

const TERMINAL = new Set(["done", "cancelled"]);
const terminalEpisodes = (p: Progress) => p.episodes.filter((e) => TERMINAL.has(e.status)).length;

/** An episode's time here, start to finish, as the finished ones took (the median); a guess before any has finished. */
function episodeMs(p: Progress): number {
  const times = p.episodes.filter((e) => e.status === "done" && e.started_at && e.finished_at)
    .map((e) => Date.parse(e.finished_at!) - Date.parse(e.started_at!)).sort((a, b) => a - b);
  return times.length > 0 ? times[Math.floor(times.length / 2)]! : 5000;
}

/** The time a finish's recordings take to be stored here (the median); a guess before any has been. */
function uploadMs(p: Progress): number {
  const times = [...p.uploadsMs].sort((a, b) => a - b);
  return times.length > 0 ? times[Math.floor(times.length / 2)]! : 500;
}

/** The running episode that started last, and milliseconds since its start; undefined when none is running. */
function latestStartedRunning(p: Progress): number | undefined {
  const starts = p.episodes.flatMap((e) => (e.status === "running" && e.started_at ? [Date.parse(e.started_at)] : []));
  return starts.length > 0 ? p.at - Math.max(...starts) : undefined;
}

/** Milliseconds since the latest time of one column among the episodes (a start, a finish), or null when none has one. */
function sinceLatest(p: Progress, column: "started_at" | "finished_at"): number | null {
  const times = p.episodes.flatMap((e) => (e[column] ? [Date.parse(e[column]!)] : []));
  return times.length > 0 ? p.at - Math.max(...times) : null;
}

/** One line for the CI log: each run's status and its episodes by state, the recordings and webhooks still owed, the exports. */
function describeProgress(p: Progress, names: Map<string, string>): string {
  const runs = p.runs.map((run) => {
    const counts = new Map<string, number>();
    for (const e of p.episodes) if (e.run_id === run.id) counts.set(e.status, (counts.get(e.status) ?? 0) + 1);
    const states = ["pending", "assigned", "running", "done", "cancelled", "unlabelled"].filter((s) => counts.has(s)).map((s) => `${counts.get(s)} ${s}`);
    return `${names.get(run.id) ?? run.id} ${run.status} (${states.join(", ")})`;
  });
  const ms = (n: number | null) => (n === null ? "none yet" : `${n} ms before`);
  return `${runs.join("; ")}; episodes take ~${episodeMs(p)} ms and their recordings ~${uploadMs(p)} ms more; latest start ${ms(sinceLatest(p, "started_at"))}, latest finish ${ms(sinceLatest(p, "finished_at"))}; ` +
    `recordings pending ${p.recordingsPending}; webhook deliveries ${p.webhooksDelivered} made, ${p.webhooksPending} pending` + (p.exports.length > 0 ? `, export ${p.exports.join(", ")}` : "");
}

/**
 * A fault placed by the work's progress: it falls once `due` holds of the store (probed every PROBE_MS), after
 * `delayMs` (drawn from SEED, in proportion to an episode's time where the moment is within an episode).
 */
interface Fault {
  name: string;
  awaiting: string;
  due: (p: Progress) => boolean;
  delayMs: (p: Progress) => number;
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
  let probe: Database.Database | undefined;

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

  /** The store's progress, or false while the file cannot be read (a restarting coordinator recovering its WAL). */
  function observe(): Progress | false {
    try {
      // One read-only connection, kept across the kills (a reader of a WAL file sees each restart's recovery).
      probe ??= new Database(join(dir, "coordinator", "assay.sqlite"), { readonly: true, fileMustExist: true });
      const db = probe;
      return {
        at: Date.now(),
        runs: db.prepare("SELECT id, status FROM runs ORDER BY created, id").all() as Progress["runs"],
        episodes: db.prepare("SELECT run_id, status, started_at, finished_at FROM episodes").all() as Progress["episodes"],
        recordingsPending: (db.prepare("SELECT COUNT(*) AS n FROM artifacts WHERE status = 'pending'").get() as { n: number }).n,
        uploadsMs: (db.prepare(
          "SELECT e.finished_at AS finished, MAX(a.stored_at) AS stored FROM artifacts a JOIN episodes e ON e.id = a.episode_id WHERE a.status = 'stored' AND e.finished_at IS NOT NULL GROUP BY a.episode_id",
        ).all() as Array<{ finished: string; stored: string }>).map((u) => Date.parse(u.stored) - Date.parse(u.finished)),
        webhooksPending: (db.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'pending'").get() as { n: number }).n,
        webhooksDelivered: (db.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'delivered'").get() as { n: number }).n,
        exports: (db.prepare("SELECT status FROM exports ORDER BY created").all() as Array<{ status: string }>).map((e) => e.status),
      };
    } catch (error) {
      if (/^SQLITE_(BUSY|LOCKED|CANTOPEN)/.test((error as { code?: string }).code ?? "")) return false;
      throw error;
    }
  }

  /** Kills the coordinator (after `alongside`, an agent's fault that falls with it) and logs where it fell: the store's state just before. */
  async function killCoordinatorLogged(n: number, what: string, names: Map<string, string>, alongside: () => void | Promise<void>): Promise<Progress> {
    await alongside();
    const seen = await eventually("the store to be readable", () => observe(), { deadlineMs: 10_000, intervalMs: PROBE_MS });
    await killCoordinator();
    console.log(`      kill ${n} (${what}): ${describeProgress(seen, names)}`);
    return seen;
  }

  /**
   * An API call that rides out a coordinator that is down or restarting (connection errors), and a 429 as a client
   * should: it waits the Retry-After the coordinator gives and asks again (the key's polls share one rate limit with
   * the download at the end; a CI run met the 429 there).
   */
  async function api(path: string, init: { method?: string; json?: unknown; key?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      let res: Response;
      try {
        res = await fetch(base() + path, {
          method: init.method ?? "GET",
          headers: { authorization: `Bearer ${init.key ?? TEST_ADMIN_KEY}`, ...(init.json !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
          body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
        });
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await sleep(100);
        continue;
      }
      if (res.status !== 429) return res;
      await res.arrayBuffer();
      await sleep(1000 * Number(res.headers.get("retry-after") ?? 1));
    }
  }

  async function json(path: string, init: Parameters<typeof api>[1] = {}, status = 200): Promise<Json> {
    const res = await api(path, init);
    const body = (await res.json()) as Json;
    assert.equal(res.status, status, `${init.method ?? "GET"} ${path}: ${JSON.stringify(body)}`);
    return body;
  }

  /** A submission retried with its Idempotency-Key until it answers: 201, or 200 replaying the first. */
  async function submit(body: Json, key: string): Promise<string> {
    const res = await api("/v1/runs", { method: "POST", json: body, headers: { "idempotency-key": key } });
    if (res.status !== 201 && res.status !== 200) assert.fail(`submission ${key}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as Json).id as string;
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

  after(async function () {
    probe?.close();
    await fleet?.stop();
    if (coordinator && coordinator.exitCode === null) {
      const exited = new Promise<void>((done) => coordinator!.once("exit", () => done()));
      coordinator.kill("SIGTERM");
      await exited;
    }
    await receiver?.close();
    if (this.test?.parent?.tests.some((t) => t.state === "failed")) {
      writeFileSync(join(dir, "coordinator-stderr.log"), log.join(""));
      console.log(`      kept the data folder of the failed run (seed ${SEED}): ${dir}`);
    } else {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("loses no run, episode, recording, export, usage or webhook, and counts nothing twice", async () => {
    await json("/v1/webhooks", { method: "POST", json: { url: receiver.url, events: ["run.completed"] } }, 201);
    const expert = README_RUN_BODY.policy;
    const novice = { ...expert, image: "assay/ref-policy:novice" };
    const runIds = [
      await submit({ ...README_RUN_BODY, episodes: RUN_EPISODES }, "crash-run"),
      await submit({ kind: "compare", robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", episodes: COMPARE_PAIRS, policies: { expert, novice }, paired: true }, "crash-compare"),
    ];
    const names = new Map([[runIds[0]!, "run"], [runIds[1]!, "compare"]]);

    // The schedule, drawn from SEED in a fixed order before anything runs, so it replays: which finish places a
    // fault, and where within its window it falls.
    const seededFinishForMidEpisode = 1 + Math.floor(random() * 2);
    const seededFinishForUploads = 3 + Math.floor(random() * 2);
    const seededFinishesAfterCompletion = 1 + Math.floor(random() * 2);
    const startDelayMs = random() * 200;
    const midEpisodeShare = 0.2 + random() * 0.4;
    const uploadDelayMs = random() * 100;
    const completionShareOfUpload = random() * 1.5;
    const assignDelayMs = random() * 50;
    const placed: Progress[] = [];
    const faults: Fault[] = [
      {
        name: "at an episode's start",
        awaiting: "an episode sent to a cell and not yet started",
        due: (p) => p.episodes.some((e) => e.status === "assigned"),
        delayMs: () => startDelayMs,
      },
      {
        name: `mid-episode, after finish ${seededFinishForMidEpisode}, with agent ${CELLS[0]} killed`,
        awaiting: `finish ${seededFinishForMidEpisode} and an episode running, short of ${midEpisodeShare.toFixed(2)} of an episode's time`,
        due: (p) => {
          const sinceStart = latestStartedRunning(p);
          return terminalEpisodes(p) >= seededFinishForMidEpisode && sinceStart !== undefined && sinceStart < midEpisodeShare * episodeMs(p);
        },
        // At this share of an episode's time into the running episode that started last.
        delayMs: (p) => Math.max(0, midEpisodeShare * episodeMs(p) - latestStartedRunning(p)!),
      },
      {
        name: `as finish ${seededFinishForUploads} or a later one is applied and its recordings upload, with ${CELLS[1]}'s link cut`,
        awaiting: `finish ${seededFinishForUploads} and a recording announced, not yet stored`,
        due: (p) => terminalEpisodes(p) >= seededFinishForUploads && p.recordingsPending > 0,
        delayMs: () => uploadDelayMs,
      },
      {
        name: "as the first run's last recordings upload and complete it (its result, its usage, its run.completed webhook)",
        awaiting: "the first run's last episode finished",
        due: (p) => p.episodes.filter((e) => e.run_id === runIds[0]).every((e) => TERMINAL.has(e.status)),
        // Its last recordings take this long to be stored, and the run completes with the last of them: from
        // none of a share of that time (their upload) to a half more (the completion applied, its webhook sent).
        delayMs: (p) => completionShareOfUpload * uploadMs(p),
      },
      {
        name: `as a finish is applied and the scheduler assigns the next episode (finish ${seededFinishesAfterCompletion} after the first run's)`,
        awaiting: `finish ${seededFinishesAfterCompletion} after the first run's completion`,
        due: (p) => terminalEpisodes(p) >= terminalEpisodes(placed[3]!) + seededFinishesAfterCompletion,
        delayMs: () => assignDelayMs,
      },
    ];

    // Faults placed by the work's progress (the schedule above), each at a seeded moment within its phase: the
    // coordinator killed and restarted, one agent killed and restarted, one link cut and restored; a third
    // submission lands after the first run's completion.
    for (const [k, fault] of faults.entries()) {
      const seen = await eventually(`fault ${k + 1}: ${fault.awaiting}`, () => {
        const p = observe();
        return p && fault.due(p) && p;
      }, { deadlineMs: 300_000, intervalMs: PROBE_MS });
      await sleep(fault.delayMs(seen));
      placed[k] = await killCoordinatorLogged(k + 1, fault.name, names, () => {
        if (k === 1) return fleet!.kill(CELLS[0]!);
        if (k === 2) fleet!.unplug(CELLS[1]!);
      });
      await startCoordinatorProcess();
      if (k === 1) await fleet!.restart(CELLS[0]!);
      if (k === 2) fleet!.plug(CELLS[1]!);
      if (k === 3) {
        const late = await submit({ ...README_RUN_BODY, episodes: LATE_RUN_EPISODES }, "crash-late-run");
        runIds.push(late);
        names.set(late, "late run");
      }
    }

    // The export is asked for once the first run has completed, and a kill falls while it is prepared.
    // Runs take minutes here: a poll every 250 ms (not eventually's 20) leaves the CPU to the cells and the coordinator under test.
    await eventually("the first run to complete", async () => (await json(`/v1/runs/${runIds[0]}`)).status === "completed", { deadlineMs: 300_000, intervalMs: RUN_POLL_MS });
    const exported = await json(`/v1/runs/${runIds[0]}/export`, { method: "POST", json: { format: "mcap-bundle" } }, 202);
    await killCoordinatorLogged(faults.length + 1, "during the export", names, () => undefined);
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
    }, { deadlineMs: 120_000, intervalMs: RUN_POLL_MS });
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
