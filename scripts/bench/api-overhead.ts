/**
 * What the /v1 stack costs per request: GET /v1/runs/{id} through the real coordinator (bearer auth,
 * scope table, SQLite read, spec view, error envelope machinery, metrics) against a bare express
 * handler that returns the same bytes, both on loopback with keep-alive, measured in the same run.
 * The rate limiter runs but with buckets too large to refuse (the default 20 req/s per key would).
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
import { startCoordinator } from "../../coordinator/server.js";
import { README_RUN_BODY } from "../../test/fixtures.js";
import type { Figure } from "../bench.js";
import { quantile } from "./quantiles.js";

const BENCH = "api-overhead";
const KEY = "asy_live_BenchAdminKey0123456789abcdefgh";
const CONCURRENCY = 8;

async function measure(url: string, headers: Record<string, string>, requests: number): Promise<{ perSecond: number; latenciesMs: number[] }> {
  const latenciesMs: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < requests) {
      next += 1;
      const t0 = performance.now();
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
      latenciesMs.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { perSecond: requests / ((performance.now() - started) / 1000), latenciesMs };
}

export async function run(requests = 3000): Promise<Figure[]> {
  const dataDir = mkdtempSync(join(tmpdir(), "assay-bench-api-"));
  // The per-key limiter still runs on every request; its buckets are only made large enough never to refuse.
  const rateLimits = { general: { perS: 1e9, burst: 1e9 }, submit: { perS: 1e9, burst: 1e9 } };
  const coordinator = await startCoordinator(compileCoordinatorOptions({ port: 0, grpcPort: 0, dataDir, apiKey: KEY, rateLimits }));
  const auth = { authorization: `Bearer ${KEY}` };
  const bare = express();
  let server: ReturnType<typeof bare.listen> | undefined;
  try {
    const created = await fetch(`${coordinator.baseUrl}/v1/runs`, {
      method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(README_RUN_BODY),
    });
    if (created.status !== 201) throw new Error(`could not create a run: ${created.status} ${await created.text()}`);
    const run = (await created.json()) as { id: string };
    const runUrl = `${coordinator.baseUrl}/v1/runs/${run.id}`;
    const body = await (await fetch(runUrl, { headers: auth })).text();

    bare.get("/run", (_req, res) => { res.type("application/json").send(body); });
    server = bare.listen(0, "127.0.0.1");
    await new Promise((resolve) => server!.once("listening", resolve));
    const bareUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/run`;

    // Warm both paths (JIT, SQLite page cache, connection pool) before measuring.
    await measure(runUrl, auth, 300);
    await measure(bareUrl, {}, 300);
    const ours = await measure(runUrl, auth, requests);
    const baseline = await measure(bareUrl, {}, requests);
    const p = (values: number[], q: number) => Number(quantile(values, q).toFixed(3));
    return [
      { bench: BENCH, metric: "get_run.requests_per_s", value: Math.round(ours.perSecond), unit: "req/s" },
      { bench: BENCH, metric: "get_run.p50", value: p(ours.latenciesMs, 0.5), unit: "ms" },
      { bench: BENCH, metric: "get_run.p99", value: p(ours.latenciesMs, 0.99), unit: "ms" },
      { bench: BENCH, metric: "bare_express.requests_per_s", value: Math.round(baseline.perSecond), unit: "req/s" },
      { bench: BENCH, metric: "bare_express.p50", value: p(baseline.latenciesMs, 0.5), unit: "ms" },
      { bench: BENCH, metric: "bare_express.p99", value: p(baseline.latenciesMs, 0.99), unit: "ms" },
      { bench: BENCH, metric: "get_run_vs_bare.throughput", value: Number((ours.perSecond / baseline.perSecond).toFixed(3)), unit: "ratio" },
    ];
  } finally {
    server?.close();
    await coordinator.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run(Number(process.argv[2] ?? 3000))) console.log(JSON.stringify(figure));
}
