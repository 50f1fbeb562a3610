/**
 * What the /v1 stack costs per request: GET /v1/runs/{id} through the real coordinator (bearer auth,
 * scope table, store read, spec view, error envelope machinery, metrics) on SQLite and on
 * PostgreSQL (an embedded cluster, durable as a production server runs), against a bare express
 * handler that returns the same bytes, all on loopback with keep-alive, measured in the same run.
 * The three targets take turns in ROUNDS slices, so a load that comes and goes on a shared machine
 * falls on all of them alike. The rate limiter runs but with buckets too large to refuse (the default
 * 20 req/s per key would).
 *
 * Figures (issue 29): get_run.postgres_vs_sqlite.throughput >= 0.7 and get_run.sqlite_vs_bare.throughput
 * >= 0.7, each printed beside its `.target`; and the store statements one GET costs on each engine
 * (counted on the coordinator's Db over STATEMENT_COUNT_REQUESTS sequential GETs; the scheduler's
 * background passes over the queued run may add a fraction).
 * Beside each throughput, `.cpu_per_request`: this process's CPU time (process.cpuUsage, client
 * included) per request while the target was measured, which a busy machine disturbs far less than
 * req/s; `get_run.sqlite_vs_bare.cpu` is bare's CPU per request over SQLite's, the throughput ratio
 * the two would have with a core each to themselves, and `get_run.sqlite_vs_bare.cpu_round_median` the
 * median of that ratio taken round by round (both measured within the same round, so a load that comes and
 * goes between rounds drops out). (PostgreSQL's server runs in its own processes, outside this count.)
 *
 *   npx tsx scripts/bench/api-overhead.ts [requests per target, default 3000]
 */
import express from "express";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator, type RunningCoordinator } from "../../coordinator/server.js";
import { startEmbeddedPostgres, type EmbeddedPostgresServer } from "../../test/support/embedded-postgres.js";
import { README_RUN_BODY } from "../../test/fixtures.js";
import type { Figure } from "../bench.js";
import { quantile } from "./quantiles.js";

const BENCH = "api-overhead";
const KEY = "asy_live_BenchAdminKey0123456789abcdefgh";
const CONCURRENCY = 8;
/** Slices per target: many short ones, so that each SQLite slice and the bare slice after it see the same load. */
const ROUNDS = 15;
/** Issue 29's floor for both ratios. */
const RATIO_TARGET = 0.7;
const STATEMENT_COUNT_REQUESTS = 200;

interface Target {
  name: "sqlite" | "postgres" | "bare_express";
  url: string;
  headers: Record<string, string>;
  ms: number;
  /** CPU time of this process (user + system) while the target was measured: server, client and whatever ran meanwhile. */
  cpuUs: number;
  /** CPU time per request of each round. */
  roundCpuUs: number[];
  requests: number;
  latenciesMs: number[];
}

async function measure(target: Target, requests: number): Promise<void> {
  let next = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const worker = async () => {
    while (next < requests) {
      next += 1;
      const t0 = performance.now();
      const response = await fetch(target.url, { headers: target.headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${target.url} answered ${response.status}`);
      target.latenciesMs.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  target.ms += performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  target.cpuUs += cpu.user + cpu.system;
  target.roundCpuUs.push((cpu.user + cpu.system) / requests);
  target.requests += requests;
}

/** Statements the coordinator's store runs per GET of `url`, counted by wrapping its Db's prepare(). */
async function statementsPerGet(coordinator: RunningCoordinator, url: string): Promise<number> {
  const db = coordinator.db;
  const prepare = db.prepare;
  let statements = 0;
  db.prepare = (sql: string) => {
    statements += 1;
    return prepare.call(db, sql);
  };
  try {
    for (let i = 0; i < STATEMENT_COUNT_REQUESTS; i++) await (await fetch(url, { headers: { authorization: `Bearer ${KEY}` } })).arrayBuffer();
  } finally {
    db.prepare = prepare;
  }
  return Number((statements / STATEMENT_COUNT_REQUESTS).toFixed(2));
}

/** A coordinator in this process with one queued run; returns the run's URL and its body. */
async function coordinatorWithRun(dataDir: string, databaseUrl?: string): Promise<{ coordinator: RunningCoordinator; url: string; body: string }> {
  // The per-key limiter still runs on every request; its buckets are only made large enough never to refuse.
  const rateLimits = { general: { perS: 1e9, burst: 1e9 }, submit: { perS: 1e9, burst: 1e9 } };
  const coordinator = await startCoordinator(compileCoordinatorOptions({ port: 0, grpcPort: 0, dataDir, databaseUrl, apiKey: KEY, rateLimits }));
  const auth = { authorization: `Bearer ${KEY}` };
  const created = await fetch(`${coordinator.baseUrl}/v1/runs`, {
    method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(README_RUN_BODY),
  });
  if (created.status !== 201) throw new Error(`could not create a run: ${created.status} ${await created.text()}`);
  const url = `${coordinator.baseUrl}/v1/runs/${((await created.json()) as { id: string }).id}`;
  return { coordinator, url, body: await (await fetch(url, { headers: auth })).text() };
}

export async function run(requests = 3000): Promise<Figure[]> {
  const root = mkdtempSync(join(tmpdir(), "assay-bench-api-"));
  const coordinators: RunningCoordinator[] = [];
  let pg: EmbeddedPostgresServer | undefined;
  let server: ReturnType<express.Express["listen"]> | undefined;
  try {
    pg = await startEmbeddedPostgres({ durable: true });
    const sqlite = await coordinatorWithRun(join(root, "sqlite"));
    coordinators.push(sqlite.coordinator);
    const postgres = await coordinatorWithRun(join(root, "postgres"), pg.connectionString);
    coordinators.push(postgres.coordinator);

    const bare = express();
    bare.get("/run", (_req, res) => { res.type("application/json").send(sqlite.body); });
    server = bare.listen(0, "127.0.0.1");
    await new Promise((resolve) => server!.once("listening", resolve));
    const auth = { authorization: `Bearer ${KEY}` };
    const targets: Target[] = [
      { name: "sqlite", url: sqlite.url, headers: auth, ms: 0, cpuUs: 0, roundCpuUs: [], requests: 0, latenciesMs: [] },
      { name: "postgres", url: postgres.url, headers: auth, ms: 0, cpuUs: 0, roundCpuUs: [], requests: 0, latenciesMs: [] },
      { name: "bare_express", url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/run`, headers: {}, ms: 0, cpuUs: 0, roundCpuUs: [], requests: 0, latenciesMs: [] },
    ];

    // Warm every path (JIT, page caches, connection pools, the key cache) before measuring.
    for (const target of targets) await measure(target, 300);
    for (const target of targets) Object.assign(target, { ms: 0, cpuUs: 0, roundCpuUs: [], requests: 0, latenciesMs: [] });
    for (let round = 0; round < ROUNDS; round++) for (const target of targets) await measure(target, Math.ceil(requests / ROUNDS));

    const statements = { sqlite: await statementsPerGet(sqlite.coordinator, sqlite.url), postgres: await statementsPerGet(postgres.coordinator, postgres.url) };
    const p = (values: number[], q: number) => Number(quantile(values, q).toFixed(3));
    const perSecond = (target: Target) => target.requests / (target.ms / 1000);
    const ratio = (a: Target, b: Target) => Number((perSecond(a) / perSecond(b)).toFixed(3));
    const [s, q, b] = targets as [Target, Target, Target];
    return [
      ...targets.flatMap((target) => {
        const prefix = target.name === "bare_express" ? "bare_express" : `get_run.${target.name}`;
        return [
          { bench: BENCH, metric: `${prefix}.requests_per_s`, value: Math.round(perSecond(target)), unit: "req/s" },
          { bench: BENCH, metric: `${prefix}.p50`, value: p(target.latenciesMs, 0.5), unit: "ms" },
          { bench: BENCH, metric: `${prefix}.p99`, value: p(target.latenciesMs, 0.99), unit: "ms" },
          { bench: BENCH, metric: `${prefix}.cpu_per_request`, value: Math.round(target.cpuUs / target.requests), unit: "us" },
        ];
      }),
      { bench: BENCH, metric: "get_run.sqlite.statements_per_request", value: statements.sqlite, unit: "statements" },
      { bench: BENCH, metric: "get_run.postgres.statements_per_request", value: statements.postgres, unit: "statements" },
      { bench: BENCH, metric: "get_run.postgres_vs_sqlite.throughput", value: ratio(q, s), unit: "ratio" },
      { bench: BENCH, metric: "get_run.postgres_vs_sqlite.target", value: RATIO_TARGET, unit: "ratio (at least)" },
      { bench: BENCH, metric: "get_run.sqlite_vs_bare.throughput", value: ratio(s, b), unit: "ratio" },
      { bench: BENCH, metric: "get_run.sqlite_vs_bare.target", value: RATIO_TARGET, unit: "ratio (at least)" },
      { bench: BENCH, metric: "get_run.sqlite_vs_bare.cpu", value: Number((b.cpuUs / b.requests / (s.cpuUs / s.requests)).toFixed(3)), unit: "ratio" },
      { bench: BENCH, metric: "get_run.sqlite_vs_bare.cpu_round_median", value: Number(quantile(b.roundCpuUs.map((bare, i) => bare / s.roundCpuUs[i]), 0.5).toFixed(3)), unit: "ratio" },
    ];
  } finally {
    server?.close();
    for (const coordinator of coordinators) await coordinator.stop();
    await pg?.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run(Number(process.argv[2] ?? 3000))) console.log(JSON.stringify(figure));
}
