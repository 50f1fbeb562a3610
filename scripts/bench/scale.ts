/**
 * What one coordinator serves, on SQLite and on PostgreSQL, and what a second coordinator on the
 * same PostgreSQL database adds (issue 16). Every coordinator is its own process
 * (coordinator-process.ts, startCoordinator as scripts/start.ts runs it) with rate limits too large
 * to refuse, so the figures measure the stack and not the limiter. PostgreSQL is one embedded
 * cluster with fsync and synchronous commit on, as a production server runs (SQLite commits with
 * synchronous = FULL); each setup gets a database of its own.
 *
 * 1. GET /v1/runs/{id} of a completed 20-episode run (played by a scripted cell): a closed loop of
 *    16 HTTP clients, each sending its next request when the last is answered, for 10 s after 2 s of
 *    warm-up, against one coordinator on SQLite and then one on PostgreSQL. Requests per second,
 *    p50 and p99 latency, and PostgreSQL's throughput over SQLite's.
 *
 * 2. Scheduling latency against fleet size: generated so101@3.11 cells in a temp installations
 *    file, each a paced scripted cell (paced-cell.ts) that plays every episode for 2 s of wall time
 *    (the first one delayed by a fraction of that, different per cell, so finishes spread out) and
 *    heartbeats every second; the latency is, per episode, from the cell writing EpisodeFinished to
 *    the cell receiving its next AssignEpisode. Work is README quick-start runs of 2 episodes per
 *    cell, another submitted whenever fewer than that are left unassigned: every cell always finds
 *    work, and the open runs stay a few times the fleet in size (what a pass costs grows with them).
 *    The fleet steps up 8, 16, 32, ... cells; each step connects the new cells, waits 2.5 s for them
 *    to fall into step and records for 8 s, then prints p50 and p95. A setup stops at the first
 *    step whose p95 passes 100 ms; `cells_under_100ms` is the largest fleet below it (the largest
 *    tried, if none passed). Setups: one coordinator on SQLite (the reference), one on PostgreSQL,
 *    and two on one PostgreSQL database with the cells split between them (cell i dials coordinator
 *    i mod 2), whose fleet is twice what each coordinator serves. Per step, stderr shows the
 *    assignments per second, the CPU of each coordinator, of PostgreSQL and of the bench process,
 *    and the bench's event-loop delay (the cells' timestamps are taken on that loop).
 *
 *    Per step, from the coordinators (started with storeStatementMetrics): the statements they sent
 *    to the store per episode finished in the window (/metrics' assay_store_statements_total, BEGIN
 *    and COMMIT included, over assay_episodes_finished_total; submissions of new runs included), the
 *    whole-run reads (getRun) per episode, each coordinator's own event-loop delay (p99 and max, at
 *    1 ms resolution, asked over the child's IPC channel) and the episodes requeued as link_lost (a
 *    missed heartbeat). Figures with a target (issue 29) carry it.
 *
 * NOTE on reading the figures: this machine has 2 cores. The HTTP clients and the scripted cells
 * run in the bench process and PostgreSQL in its own processes, all sharing the cores with the
 * coordinators (two coordinators get no more CPU than one), so the figures are lower bounds of what
 * a coordinator on cores of its own serves.
 *
 *   npm run bench -- scale
 *   ASSAY_BENCH_SCALE_MAX_CELLS=32 npm run bench -- scale     a quick run: fleets of at most 32 cells
 *   ASSAY_BENCH_SCALE_ONLY=postgres_1 npm run bench -- scale   one setup's scheduling steps, no GET part
 *   ASSAY_BENCH_SCALE_STEPS=256,512 npm run bench -- scale     only these fleet sizes (the large ones at once)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { README_RUN_BODY } from "../../test/fixtures.js";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "../../test/support/embedded-postgres.js";
import { ScriptedAgent } from "../../test/support/scripted-agent.js";
import type { Figure } from "../bench.js";
import { startCoordinatorProcess, type CoordinatorProcess } from "./coordinator-process.js";
import { PacedCell } from "./paced-cell.js";
import { processCpuMs, treeCpuMs } from "./process-cpu.js";
import { quantile, round } from "./quantiles.js";

const BENCH = "scale";
const KEY = "asy_live_BenchAdminKey0123456789abcdefgh";
// The per-key limiter still runs on every request; its buckets are only made large enough never to refuse.
const RATE_LIMITS = { general: { perS: 1e9, burst: 1e9 }, submit: { perS: 1e9, burst: 1e9 } };

const HTTP_CLIENTS = 16;
const HTTP_WARMUP_MS = 2_000;
const HTTP_MEASURE_MS = 10_000;
const SEED_EPISODES = 20;

const FLEET_STEPS = [8, 16, 32, 64, 128, 256, 512];
const EPISODE_MS = 2_000;
const HEARTBEAT_MS = 1_000;
/** New cells' first finishes are spread over one episode after they connect. */
const STEP_WARMUP_MS = EPISODE_MS + 500;
const STEP_WINDOW_MS = 4 * EPISODE_MS;
/** Runs of this many episodes per cell are submitted whenever fewer are left unassigned (BenchFleet). */
const RUN_EPISODES_PER_CELL = 2;
const LATENCY_LIMIT_MS = 100;

export interface ScaleSettings {
  /** Largest fleet tried, cells (ASSAY_BENCH_SCALE_MAX_CELLS; default 512). */
  maxCells: number;
  /**
   * The fleet sizes tried, in order (ASSAY_BENCH_SCALE_STEPS, comma-separated, e.g. "256,512";
   * default 8, 16, 32, ... up to maxCells): to measure the large fleets without the small ones.
   */
  steps?: number[];
  /**
   * Only these scheduling setups, and not the GET part (ASSAY_BENCH_SCALE_ONLY, comma-separated
   * setup names; default every part and setup).
   */
  only?: string[];
}

/** The suite's settings from the environment, read here only. */
export function scaleSettingsFromEnv(): ScaleSettings {
  const raw = process.env.ASSAY_BENCH_SCALE_MAX_CELLS;
  const maxCells = raw === undefined || raw === "" ? FLEET_STEPS.at(-1)! : Number(raw);
  if (!Number.isInteger(maxCells) || maxCells < FLEET_STEPS[0]) {
    throw new Error(`ASSAY_BENCH_SCALE_MAX_CELLS must be a whole number of at least ${FLEET_STEPS[0]}; got "${raw}"`);
  }
  const rawSteps = process.env.ASSAY_BENCH_SCALE_STEPS;
  const steps = rawSteps ? rawSteps.split(",").map((n) => Number(n.trim())) : undefined;
  if (steps && !steps.every((n, i) => Number.isInteger(n) && n >= 1 && n <= maxCells && (i === 0 || n > steps[i - 1]!))) {
    throw new Error(`ASSAY_BENCH_SCALE_STEPS lists fleet sizes in increasing order, whole numbers from 1 to ${maxCells}; got "${rawSteps}"`);
  }
  const only = process.env.ASSAY_BENCH_SCALE_ONLY ? process.env.ASSAY_BENCH_SCALE_ONLY.split(",").map((name) => name.trim()) : undefined;
  const unknown = only?.find((name) => !SETUPS.some((setup) => setup.name === name));
  if (unknown !== undefined) throw new Error(`ASSAY_BENCH_SCALE_ONLY names setups among ${SETUPS.map((s) => s.name).join(", ")}; got "${unknown}"`);
  return { maxCells, only, ...(steps ? { steps } : {}) };
}

interface Setup {
  name: string;
  engine: "sqlite" | "postgres";
  coordinators: number;
}

const SETUPS: Setup[] = [
  { name: "sqlite_1", engine: "sqlite", coordinators: 1 },
  { name: "postgres_1", engine: "postgres", coordinators: 1 },
  { name: "postgres_2", engine: "postgres", coordinators: 2 },
];

/** What the parts of the suite share; every process and cell started is listed, for run()'s finally. */
interface Resources {
  root: string;
  installationsPath: string;
  pg: EmbeddedPostgresServer;
  coordinators: CoordinatorProcess[];
  cells: PacedCell[];
}

export async function run(settings: ScaleSettings = scaleSettingsFromEnv()): Promise<Figure[]> {
  const steps = settings.steps ?? FLEET_STEPS.filter((n) => n <= settings.maxCells);
  const root = mkdtempSync(join(tmpdir(), "assay-bench-scale-"));
  const coordinators: CoordinatorProcess[] = [];
  const cells: PacedCell[] = [];
  let pg: EmbeddedPostgresServer | undefined;
  try {
    pg = await startEmbeddedPostgres({ durable: true });
    const resources: Resources = { root, installationsPath: writeInstallations(root, steps.at(-1)!), pg, coordinators, cells };
    const setups = SETUPS.filter((setup) => !settings.only || settings.only.includes(setup.name));
    return [...(settings.only ? [] : await getRunThroughput(resources)), ...(await schedulingLatency(resources, steps, setups))];
  } finally {
    // Each part stops what it started; this is for a part that failed half-way (stopping twice is harmless).
    for (const cell of cells) cell.stop();
    await Promise.all(coordinators.map((c) => c.stop()));
    await pg?.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

function cellId(i: number): string {
  return `bench-${String(i).padStart(4, "0")}`;
}

/** An installations file pinning `count` so101@3.11 cells in tabletop@1 (what ScriptedAgent says in its Hello). */
function writeInstallations(root: string, count: number): string {
  const path = join(root, "installations.json");
  const cells = Array.from({ length: count }, (_, i) => ({ cell: cellId(i), model: "so101", firmware: "3.11", environment: "tabletop@1" }));
  writeFileSync(path, JSON.stringify({ note: "generated by scripts/bench/scale.ts", cells }));
  return path;
}

async function createDatabase(server: EmbeddedPostgresServer, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: server.connectionString.replace(/\/[^/]+$/, "/postgres") });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
  } finally {
    await admin.end();
  }
  return server.connectionString.replace(/\/[^/]+$/, `/${name}`);
}

/** Starts a coordinator process the suite's finally will stop. */
async function startCoordinator(resources: Resources, name: string, databaseUrl: string | undefined): Promise<CoordinatorProcess> {
  const coordinator = await startCoordinatorProcess(name, {
    port: 0, grpcPort: 0, dataDir: join(resources.root, name), databaseUrl, apiKey: KEY,
    installationsPath: resources.installationsPath, rateLimits: RATE_LIMITS, storeStatementMetrics: true,
  });
  resources.coordinators.push(coordinator);
  return coordinator;
}

async function api(coordinator: CoordinatorProcess, path: string, init: { method?: string; json?: unknown; key?: string } = {}): Promise<Record<string, any>> {
  const response = await fetch(coordinator.baseUrl + path, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${init.key ?? KEY}`, ...(init.json !== undefined ? { "content-type": "application/json" } : {}) },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? "GET"} ${path} on coordinator ${coordinator.name} answered ${response.status}: ${text}`);
  return JSON.parse(text) as Record<string, any>;
}

/** Enrolls the cells (through the coordinator the operator key came from); returns their tokens. */
async function enroll(coordinator: CoordinatorProcess, operatorKey: string, cellIds: string[]): Promise<string[]> {
  const tokens: string[] = [];
  // In batches: all at once, a 256-cell step opens more connections than the coordinator allows one address.
  for (let at = 0; at < cellIds.length; at += ENROLL_BATCH) {
    tokens.push(...await Promise.all(cellIds.slice(at, at + ENROLL_BATCH).map(async (id) => {
      const enrolled = await api(coordinator, "/v1/cells", { method: "POST", json: { cell_id: id, model: "so101" }, key: operatorKey });
      return enrolled.enrollment_token as string;
    })));
  }
  return tokens;
}

/** Enrollments sent at once. */
const ENROLL_BATCH = 32;

function operatorKeyOf(coordinator: CoordinatorProcess): string {
  if (!coordinator.operatorKey) throw new Error(`coordinator ${coordinator.name} printed no operator key; its database was not new`);
  return coordinator.operatorKey;
}

// --- 1. GET /v1/runs/{id} on SQLite against PostgreSQL ---------------------------------------

async function getRunThroughput(resources: Resources): Promise<Figure[]> {
  const figures: Figure[] = [];
  const measured: Record<string, number> = {};
  for (const engine of ["sqlite", "postgres"] as const) {
    const databaseUrl = engine === "postgres" ? await createDatabase(resources.pg, "assay_get_run") : undefined;
    const coordinator = await startCoordinator(resources, `get-run-${engine}`, databaseUrl);
    try {
      const runId = await completedRun(coordinator);
      const url = `${coordinator.baseUrl}/v1/runs/${runId}`;
      await closedLoop(url, HTTP_WARMUP_MS);
      const { perSecond, latenciesMs } = await closedLoop(url, HTTP_MEASURE_MS);
      measured[engine] = perSecond;
      figures.push(
        { bench: BENCH, metric: `get_run.${engine}.requests_per_s`, value: Math.round(perSecond), unit: "req/s" },
        { bench: BENCH, metric: `get_run.${engine}.p50`, value: round(quantile(latenciesMs, 0.5)), unit: "ms" },
        { bench: BENCH, metric: `get_run.${engine}.p99`, value: round(quantile(latenciesMs, 0.99)), unit: "ms" },
      );
    } finally {
      await coordinator.stop();
    }
  }
  figures.push({ bench: BENCH, metric: "get_run.postgres_vs_sqlite.throughput", value: round(measured.postgres / measured.sqlite), unit: "ratio" });
  return figures;
}

/** A run of SEED_EPISODES episodes played to completion by one scripted cell; returns its id. */
async function completedRun(coordinator: CoordinatorProcess): Promise<string> {
  const [token] = await enroll(coordinator, operatorKeyOf(coordinator), [cellId(0)]);
  const agent = new ScriptedAgent(coordinator.grpcAddress, token!, cellId(0));
  try {
    await agent.connect();
    const run = await api(coordinator, "/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: SEED_EPISODES } });
    for (let i = 0; i < SEED_EPISODES; i++) await agent.play(i % 3 === 2 ? "failure" : "success");
    for (let polls = 0; (await api(coordinator, `/v1/runs/${run.id}`)).status !== "completed"; polls++) {
      if (polls >= 100) throw new Error(`run ${run.id} did not complete after its ${SEED_EPISODES} episodes were played`);
      await sleep(50);
    }
    return run.id as string;
  } finally {
    agent.close();
  }
}

/** HTTP_CLIENTS clients, each sending its next GET when the last is answered, for `durationMs`. */
async function closedLoop(url: string, durationMs: number): Promise<{ perSecond: number; latenciesMs: number[] }> {
  const headers = { authorization: `Bearer ${KEY}` };
  const latenciesMs: number[] = [];
  const started = performance.now();
  const until = started + durationMs;
  const client = async () => {
    while (performance.now() < until) {
      const t0 = performance.now();
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
      latenciesMs.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: HTTP_CLIENTS }, client));
  return { perSecond: latenciesMs.length / ((performance.now() - started) / 1000), latenciesMs };
}

// --- 2. Scheduling latency against fleet size ------------------------------------------------

interface StepResult {
  cells: number;
  p50Ms: number;
  p95Ms: number;
  /** Statements all the setup's coordinators sent per episode finished in the window. */
  statementsPerEpisode: number;
  /** Whole-run reads (getRun) per episode finished. */
  runReadsPerEpisode: number;
  /** The largest event-loop delay p99 among the coordinators over the window. */
  eventLoopP99Ms: number;
  eventLoopMaxMs: number;
  /** Episode attempts the coordinators put back because a cell's link was lost (a missed heartbeat). */
  linkLost: number;
}

/** Targets of issue 29. */
const STATEMENTS_PER_EPISODE_TARGET = 40;
const RUN_READS_PER_EPISODE_TARGET = 2;
const EVENT_LOOP_P99_TARGET_MS = 20;

async function schedulingLatency(resources: Resources, steps: number[], setups: Setup[]): Promise<Figure[]> {
  const figures: Figure[] = [];
  const underLimit: Record<string, number> = {};
  for (const setup of setups) {
    const results = await runSetup(resources, setup, steps);
    for (const r of results) {
      const at = `scheduling.${setup.name}.cells_${r.cells}`;
      figures.push(
        { bench: BENCH, metric: `${at}.p50`, value: round(r.p50Ms), unit: "ms" },
        { bench: BENCH, metric: `${at}.p95`, value: round(r.p95Ms), unit: "ms" },
        { bench: BENCH, metric: `${at}.statements_per_episode`, value: round(r.statementsPerEpisode), unit: "statements", target: `<= ${STATEMENTS_PER_EPISODE_TARGET}` },
        { bench: BENCH, metric: `${at}.get_run_per_episode`, value: round(r.runReadsPerEpisode), unit: "reads", target: `<= ${RUN_READS_PER_EPISODE_TARGET}` },
        { bench: BENCH, metric: `${at}.coordinator_event_loop_p99`, value: round(r.eventLoopP99Ms), unit: "ms", target: `< ${EVENT_LOOP_P99_TARGET_MS}` },
        { bench: BENCH, metric: `${at}.coordinator_event_loop_max`, value: round(r.eventLoopMaxMs), unit: "ms" },
        { bench: BENCH, metric: `${at}.link_lost`, value: r.linkLost, unit: "episodes", target: "0" },
      );
    }
    const under = results.filter((r) => r.p95Ms <= LATENCY_LIMIT_MS).at(-1)?.cells ?? 0;
    if (results.every((r) => r.p95Ms <= LATENCY_LIMIT_MS)) {
      process.stderr.write(`  ${setup.name}: p95 stayed under ${LATENCY_LIMIT_MS} ms up to ${under} cells, the largest fleet tried\n`);
    }
    underLimit[setup.name] = under;
    figures.push({ bench: BENCH, metric: `scheduling.${setup.name}.cells_under_100ms`, value: under, unit: "cells", ...(setup.name === "postgres_1" ? { target: ">= sqlite_1 (512 on 2026-11-25)" } : {}) });
    if (setup.coordinators > 1) {
      figures.push({ bench: BENCH, metric: `scheduling.${setup.name}.cells_per_coordinator_under_100ms`, value: under / setup.coordinators, unit: "cells" });
    }
  }
  const ratio = (metric: string, over: string, base: string) => {
    if (underLimit[base] > 0 && underLimit[over] !== undefined) figures.push({ bench: BENCH, metric, value: round(underLimit[over] / underLimit[base]), unit: "ratio" });
  };
  ratio("scheduling.postgres_2_vs_postgres_1.cells_under_100ms", "postgres_2", "postgres_1");
  ratio("scheduling.postgres_1_vs_sqlite_1.cells_under_100ms", "postgres_1", "sqlite_1");
  return figures;
}

/** Steps one setup's fleet up until the p95 passes the limit; returns each step's latencies. */
async function runSetup(resources: Resources, setup: Setup, steps: number[]): Promise<StepResult[]> {
  const databaseUrl = setup.engine === "postgres" ? await createDatabase(resources.pg, `assay_${setup.name}`) : undefined;
  const coordinators: CoordinatorProcess[] = [];
  // One after the other: the first start migrates the database and creates the keys.
  for (let i = 0; i < setup.coordinators; i++) coordinators.push(await startCoordinator(resources, `${setup.name}-${"ab"[i]}`, databaseUrl));
  const fleet = new BenchFleet(resources, coordinators);
  const postmasterPid = Number(readFileSync(join(resources.pg.dir, "data", "postmaster.pid"), "utf8").split("\n")[0]);
  const results: StepResult[] = [];
  try {
    for (const n of steps) {
      await fleet.grow(n);
      await sleep(STEP_WARMUP_MS);
      fleet.check(`${setup.name} growing to ${n} cells`);
      const loop = monitorEventLoopDelay({ resolution: 1 });
      const countsBefore = await storeCounts(coordinators);
      await Promise.all(coordinators.map((c) => c.eventLoopDelay())); // resets each coordinator's histogram
      const before = cpuNow(coordinators, postmasterPid);
      loop.enable();
      const samples = await fleet.record(STEP_WINDOW_MS);
      loop.disable();
      const delays = await Promise.all(coordinators.map((c) => c.eventLoopDelay()));
      const counts = minus(await storeCounts(coordinators), countsBefore);
      fleet.check(`${setup.name} at ${n} cells`);
      const cpu = cpuShare(before, cpuNow(coordinators, postmasterPid));
      if (samples.length === 0) throw new Error(`${setup.name} at ${n} cells: no episode was assigned after a finish in ${STEP_WINDOW_MS} ms\n${fleet.output()}`);
      if (counts.episodes === 0) throw new Error(`${setup.name} at ${n} cells: no episode finished in ${STEP_WINDOW_MS} ms\n${fleet.output()}`);
      const result: StepResult = {
        cells: n, p50Ms: quantile(samples, 0.5), p95Ms: quantile(samples, 0.95),
        statementsPerEpisode: counts.statements / counts.episodes, runReadsPerEpisode: counts.runReads / counts.episodes,
        eventLoopP99Ms: Math.max(...delays.map((d) => d.p99Ms)), eventLoopMaxMs: Math.max(...delays.map((d) => d.maxMs)), linkLost: counts.linkLost,
      };
      results.push(result);
      process.stderr.write(
        `  ${setup.name} ${n} cells: p50 ${result.p50Ms.toFixed(1)} ms, p95 ${result.p95Ms.toFixed(1)} ms, max ${Math.max(...samples).toFixed(1)} ms ` +
          `over ${samples.length} assignments (${(samples.length / (STEP_WINDOW_MS / 1000)).toFixed(1)}/s); CPU ${cpu}; ` +
          `bench event-loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms; coordinator event-loop delay p99 ${result.eventLoopP99Ms.toFixed(1)} ms, max ${result.eventLoopMaxMs.toFixed(1)} ms; ` +
          `per episode ${result.statementsPerEpisode.toFixed(1)} statements (${verbsPerEpisode(counts)}), ${result.runReadsPerEpisode.toFixed(2)} getRun; link_lost ${counts.linkLost}\n`,
      );
      if (result.p95Ms > LATENCY_LIMIT_MS) break;
    }
    return results;
  } finally {
    fleet.stop();
    await Promise.all(coordinators.map((c) => c.stop()));
  }
}

/** What the coordinators' /metrics count (storeStatementMetrics on), summed over them. */
interface StoreCounts {
  statements: number;
  byVerb: Record<string, number>;
  runReads: number;
  episodes: number;
  linkLost: number;
}

async function storeCounts(coordinators: CoordinatorProcess[]): Promise<StoreCounts> {
  const total: StoreCounts = { statements: 0, byVerb: {}, runReads: 0, episodes: 0, linkLost: 0 };
  for (const coordinator of coordinators) {
    const response = await fetch(`${coordinator.baseUrl}/metrics`);
    if (!response.ok) throw new Error(`${coordinator.name}'s /metrics answered ${response.status}`);
    for (const line of (await response.text()).split("\n")) {
      const sample = /^(\w+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
      if (!sample) continue;
      const [, name, labels = "", raw] = sample;
      const value = Number(raw);
      if (name === "assay_store_statements_total") {
        const verb = /verb="(\w+)"/.exec(labels)?.[1] ?? "other";
        total.statements += value;
        total.byVerb[verb] = (total.byVerb[verb] ?? 0) + value;
      } else if (name === "assay_store_run_reads_total") total.runReads += value;
      else if (name === "assay_episodes_finished_total") total.episodes += value;
      else if (name === "assay_episodes_interrupted_total" && labels.includes('reason="link_lost"')) total.linkLost += value;
    }
  }
  if (total.statements === 0) throw new Error("the coordinators count no store statements; were they started with storeStatementMetrics?");
  return total;
}

function minus(after: StoreCounts, before: StoreCounts): StoreCounts {
  const byVerb = Object.fromEntries(Object.entries(after.byVerb).map(([verb, n]) => [verb, n - (before.byVerb[verb] ?? 0)]));
  return {
    statements: after.statements - before.statements, byVerb, runReads: after.runReads - before.runReads,
    episodes: after.episodes - before.episodes, linkLost: after.linkLost - before.linkLost,
  };
}

function verbsPerEpisode(counts: StoreCounts): string {
  return Object.entries(counts.byVerb).filter(([, n]) => n > 0).map(([verb, n]) => `${verb} ${(n / counts.episodes).toFixed(1)}`).join(", ");
}

/**
 * The paced cells of one setup, spread over its coordinators, and the work that keeps them busy:
 * whenever fewer than RUN_EPISODES_PER_CELL episodes per cell are left unassigned, another run of
 * that many is submitted, so every cell always finds work and the open runs stay a few times the
 * fleet in size however long the setup runs.
 */
class BenchFleet {
  private readonly cells: PacedCell[] = [];
  private submitted = 0;
  private assigned = 0;
  private samples?: number[];
  private problem?: Error;
  private topUp?: NodeJS.Timeout;
  private submitting = false;

  constructor(private readonly resources: Resources, private readonly coordinators: CoordinatorProcess[]) {}

  /** Adds cells until there are `n`, each dialling coordinator (its index mod the coordinators), with work waiting. */
  async grow(n: number): Promise<void> {
    const [first] = this.coordinators as [CoordinatorProcess];
    const ids = Array.from({ length: n - this.cells.length }, (_, k) => cellId(this.cells.length + k));
    const tokens = await enroll(first, operatorKeyOf(first), ids);
    const added = ids.map((id, k) => {
      const i = this.cells.length + k;
      return new PacedCell({
        address: this.coordinators[i % this.coordinators.length]!.grpcAddress, token: tokens[k]!, cellId: id,
        // Golden-ratio offsets spread any number of cells evenly over one episode.
        episodeMs: EPISODE_MS, firstDelayMs: ((i * 0.6180339887) % 1) * EPISODE_MS, heartbeatMs: HEARTBEAT_MS,
        onAssignment: (latencyMs) => {
          this.assigned += 1;
          if (latencyMs !== undefined) this.samples?.push(latencyMs);
        },
        onLost: (error) => {
          this.problem ??= error;
        },
      });
    });
    this.cells.push(...added);
    this.resources.cells.push(...added);
    await this.submitWhileShort();
    this.topUp ??= setInterval(() => void this.submitWhileShort(), 200);
    await Promise.all(added.map((cell) => cell.start()));
  }

  /** Latency samples of the assignments received in the next `ms`. */
  async record(ms: number): Promise<number[]> {
    const samples: number[] = [];
    this.samples = samples;
    await sleep(ms);
    this.samples = undefined;
    return samples;
  }

  /** Throws what went wrong since the start: a coordinator gone, a cell's stream lost, a submission refused. */
  check(what: string): void {
    const gone = this.coordinators.find((c) => c.exited() !== undefined);
    if (gone) throw new Error(`${what}: coordinator ${gone.name} exited (${gone.exited()})\n${this.output()}`);
    if (this.problem) throw new Error(`${what}: ${this.problem.message}\n${this.output()}`);
  }

  output(): string {
    return this.coordinators.map((c) => c.outputTail()).join("\n");
  }

  stop(): void {
    clearInterval(this.topUp);
    for (const cell of this.cells) cell.stop();
  }

  private async submitWhileShort(): Promise<void> {
    if (this.submitting) return;
    this.submitting = true;
    try {
      const episodes = RUN_EPISODES_PER_CELL * this.cells.length;
      while (this.submitted - this.assigned < episodes) {
        await api(this.coordinators[0]!, "/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes } });
        this.submitted += episodes;
      }
    } catch (error) {
      this.problem ??= error as Error;
    } finally {
      this.submitting = false;
    }
  }
}

interface CpuReading {
  atMs: number;
  coordinatorsMs: Array<{ name: string; ms: number }>;
  postgresMs: number;
  benchMs: number;
}

function cpuNow(coordinators: CoordinatorProcess[], postmasterPid: number): CpuReading {
  const own = process.cpuUsage();
  return {
    atMs: performance.now(),
    coordinatorsMs: coordinators.map((c) => ({ name: c.name, ms: processCpuMs(c.pid) })),
    postgresMs: treeCpuMs(postmasterPid),
    benchMs: (own.user + own.system) / 1000,
  };
}

/** Each process's CPU between two readings, in percent of one core. */
function cpuShare(before: CpuReading, after: CpuReading): string {
  const pct = (ms: number) => `${Math.round((100 * ms) / (after.atMs - before.atMs))}%`;
  const coordinators = after.coordinatorsMs.map((c, i) => `${c.name} ${pct(c.ms - before.coordinatorsMs[i]!.ms)}`);
  return [...coordinators, `postgres ${pct(after.postgresMs - before.postgresMs)}`, `bench ${pct(after.benchMs - before.benchMs)}`].join(", ");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run()) console.log(JSON.stringify(figure));
}
