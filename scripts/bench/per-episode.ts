/**
 * What one episode costs the coordinator's per-episode paths at run sizes 100 and 10,000, on SQLite
 * and PostgreSQL: the budget check after a metered episode of a capped run (`afterEpisodeMetered`),
 * the allowance an assignment of it asks (`episodeAllowance`), the check of the account's hard monthly
 * budget after every metered episode (`checkAccount`), and the run's `progress` after a
 * finish of a compare run (non-sequential, whose kind hook decides nothing; and sequential, whose test
 * replays the complete pairs), and the cells of the pairs a scheduler pass offers (`listCellsOfPairs`; it read
 * every pair of the run before: 18 ms on SQLite and 67 ms on PostgreSQL at 10,000 episodes). Each run has 90% of its episodes done (durations in milliseconds), 8
 * running and the rest pending. A path whose cost grows with the run costs a run of N episodes
 * O(N^2) over its life: the figure to watch is each path's ratio of 10,000 to 100.
 *
 * Median wall time of 15 calls after 3 to warm up, on the store directly (no coordinator process,
 * no network besides PostgreSQL's loopback).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadFirmwarePins } from "../../firmware-pins/pins.js";
import { createRunLifecycle } from "../../coordinator/lifecycle/run-lifecycle.js";
import { RunEvents } from "../../coordinator/runs/run-events.js";
import { createBudgetGuard } from "../../coordinator/scheduler/budget-guard.js";
import { putBudget } from "../../coordinator/billing/budgets.js";
import { listCellsOfPairs } from "../../coordinator/store/episode-subsets-repo.js";
import { openDatabase, type Db } from "../../coordinator/store/database.js";
import { backfillEpisodes, backfilling, getRun, insertRun, setRunStatus, type RunPlan } from "../../coordinator/store/runs-repo.js";
import { startEmbeddedPostgres } from "../../test/support/embedded-postgres.js";
import type { Figure } from "../bench.js";
import { quantile, round } from "./quantiles.js";

const SIZES = [100, 10_000] as const;
const CALLS = 15;
const WARMUP = 3;
const AT = "2026-11-15T12:00:00.000Z";
const PLAN = { model: "so101", firmware: "3.11", environment: "tabletop@1", seed: 1, control_rate_hz: 30, max_duration_s: 20 } as RunPlan;
const SO101 = { robot: "so101@3.11", model: "so101", firmware: "3.11", environment: "tabletop@1", task: "pick-cube@v1", policy: { type: "scripted" } };
const PINS = { robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", perturbation_rev: "assay-perturb@1" };

async function median(call: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARMUP; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const start = process.hrtime.bigint();
    await call();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return quantile(times, 0.5);
}

/** A running run of two units and `n` episodes: 90% done (alternating outcomes, per-pair for compare), 8 running, the rest pending. */
async function insertRunningRun(db: Db, id: string, kind: "matrix" | "compare", n: number, extra: { request?: object; plan?: object } = {}): Promise<void> {
  await insertRun(db, {
    id, accountId: "acct_1", kind, created: AT, request: { kind, ...extra.request }, resolvedPins: PINS, plan: { ...PLAN, ...extra.plan } as RunPlan,
    priority: "standard", episodesTotal: n,
    units: [{ ...SO101, key: "policy:a", policy_name: "a" }, { ...SO101, key: "policy:b", policy_name: "b" }],
    episodes: Array.from({ length: n }, (_, i) => ({ unit: i % 2, seed: i, assign: { pair: Math.floor(i / 2), order: i % 2 } })),
  });
  while (await backfilling(db, id)) await backfillEpisodes(db, id);
  const done = Math.floor(n * 0.9);
  await db.prepare(
    `UPDATE episodes SET status = 'done', cell_id = 'so101-a', outcome = CASE WHEN idx % 3 = 0 THEN 'failure' ELSE 'success' END,
       duration_s = 12.345 + (idx % 97) * 0.001, reset_s = 4.5, finished_at = ?, assigned_at = ?, started_at = ? WHERE run_id = ? AND idx < ?`,
  ).run(AT, AT, AT, id, done);
  await db.prepare("UPDATE episodes SET status = 'running', cell_id = 'so101-b', assigned_at = ? WHERE run_id = ? AND idx >= ? AND idx < ?").run(AT, id, done, done + 8);
  await setRunStatus(db, id, "scheduling", { cell: "so101-a", at: AT });
  await setRunStatus(db, id, "running", { cell: "so101-a", at: AT });
}

async function measure(engine: string, db: Db): Promise<Figure[]> {
  const pins = loadFirmwarePins();
  await db.prepare("INSERT INTO accounts (id, name, created) VALUES ('acct_1', 'Bench', '2026-01-01T00:00:00Z')").run();
  const lifecycle = createRunLifecycle({
    runEvents: new RunEvents(), pins, baseUrl: "http://x", streamsUrl: "ws://x/streams", now: () => new Date(AT),
    cells: { cancelEpisode: async () => true },
  });
  const guard = createBudgetGuard({ db, lifecycle, pins, now: () => new Date(AT) });
  await putBudget(db, "acct_1", { monthlyUsd: 1e9, hard: true }, new Date(AT));
  const ms: Record<string, Record<number, number>> = { "budget check after a metered episode": {}, "allowance of an assignment": {}, "hard monthly budget check": {}, "progress of a compare run": {}, "progress of a sequential compare run": {}, "cells of the pairs a pass offers": {} };
  for (const n of SIZES) {
    await insertRunningRun(db, `run_capped_${n}`, "matrix", n, { request: { max_budget_usd: 1e9 } });
    await insertRunningRun(db, `run_compare_${n}`, "compare", n, { plan: { kind: { compare: { paired: true } } } });
    // A test that never decides (delta tiny, alpha tiny), so every call replays the pairs.
    await insertRunningRun(db, `run_sequential_${n}`, "compare", n, { plan: { kind: { compare: { paired: true, sequential: { alpha: 1e-9, beta: 1e-9, delta: 1e-6 } } } } });
    // PostgreSQL keeps a prepared statement's generic plan, made from the statistics of the table when it was made: the
    // table grew a hundredfold since the first size, so analyse it, as autovacuum would have (it also drops those plans).
    if (db.dialect === "postgres") await db.exec("ANALYZE episodes");
    const capped = (await getRun(db, `run_capped_${n}`))!;
    ms["budget check after a metered episode"][n] = await median(() => guard.afterEpisodeMetered(capped.id, capped, { hardBudget: false }));
    ms["allowance of an assignment"][n] = await median(() => guard.episodeAllowance(capped.id, [{ unit: 0 }], db, capped));
    // The account's month: its runs so far (at 10,000, also the smaller runs before it).
    ms["hard monthly budget check"][n] = await median(() => guard.checkAccount("acct_1"));
    ms["progress of a compare run"][n] = await median(() => lifecycle.progress(db, `run_compare_${n}`));
    // A scheduler pass over a paired compare run reads the cells of the pairs of the 64 pending episodes it offers.
    const offeredPairs = Array.from({ length: 64 }, (_, i) => Math.floor((Math.floor(n * 0.9) + 8 + i) / 2));
    ms["cells of the pairs a pass offers"][n] = await median(() => listCellsOfPairs(db, `run_compare_${n}`, offeredPairs));
    ms["progress of a sequential compare run"][n] = await median(() => lifecycle.progress(db, `run_sequential_${n}`));
  }
  const figures: Figure[] = [];
  for (const [path, bySize] of Object.entries(ms)) {
    for (const n of SIZES) figures.push({ bench: "per-episode", metric: `${engine}: ${path}, run of ${n} episodes`, value: round(bySize[n], 3), unit: "ms" });
    figures.push({ bench: "per-episode", metric: `${engine}: ${path}, ratio ${SIZES[1]} / ${SIZES[0]} episodes`, value: round(bySize[SIZES[1]] / bySize[SIZES[0]], 2), unit: "x" });
  }
  return figures;
}

export async function run(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const dir = mkdtempSync(join(tmpdir(), "assay-bench-per-episode-"));
  try {
    const sqlite = await openDatabase(join(dir, "assay.sqlite"));
    try {
      figures.push(...await measure("sqlite", sqlite));
    } finally {
      await sqlite.close();
    }
    const server = await startEmbeddedPostgres();
    try {
      const postgres = await openDatabase(server.connectionString);
      try {
        figures.push(...await measure("postgres", postgres));
      } finally {
        await postgres.close();
      }
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
