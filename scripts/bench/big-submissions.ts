/**
 * Big submissions against the rest of the API (issue 24): one, then eight 10,000-episode runs, then
 * eight paired compares of 2 x 5,000 episodes (whose episodes are listed, not generated from the
 * seed), POSTed at once to a coordinator in its own process (coordinator-process.ts, no fleet), while a
 * probe client sends GET /v1/robots back to back. Figures per case: the coordinator's event-loop
 * delay over the window (its max and p99, from prom-client's `monitorEventLoopDelay` histogram in
 * /metrics, which each scrape resets, 10 ms resolution), the probe's p50 and max latency, and the
 * time until every submission had its 201 (all episodes stored), with the coordinator's CPU time
 * over that window and the machine's 1-minute load average. The goal is a loop delay under 50 ms;
 * docs/api.md, "Large runs", says how submissions take turns.
 *
 * NOTE on reading the figures: the probe client and the coordinator share this machine's cores; on
 * a loaded machine (load average above the cores) the loop delay includes time the coordinator was
 * runnable but not scheduled: its CPU time then falls far below the window's wall time.
 *
 *   npm run bench -- big-submissions
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { README_RUN_BODY } from "../../test/fixtures.js";
import type { Figure } from "../bench.js";
import { startCoordinatorProcess } from "./coordinator-process.js";
import { processCpuMs } from "./process-cpu.js";
import { quantile, round } from "./quantiles.js";

const BENCH = "big-submissions";
const KEY = "asy_live_BenchAdminKey0123456789abcdefgh";
// The per-key limiter still runs on every request; its buckets are only made large enough never to refuse.
const RATE_LIMITS = { general: { perS: 1e9, burst: 1e9 }, submit: { perS: 1e9, burst: 1e9 } };
const EPISODES = 10_000;
const NOVICE = { ...README_RUN_BODY.policy, image: "assay/ref-policy:novice" };
const COMPARE_BODY = {
  kind: "compare", robot: "so101@3.11", environment: "tabletop@1", task: "pick-cube@v1", episodes: EPISODES / 2,
  policies: { expert: README_RUN_BODY.policy, novice: NOVICE }, paired: true,
};
const CASES = [
  { name: `1x${EPISODES}`, runs: 1, body: { ...README_RUN_BODY, episodes: EPISODES } },
  { name: `8x${EPISODES}`, runs: 8, body: { ...README_RUN_BODY, episodes: EPISODES } },
  { name: `8x${EPISODES}_compare`, runs: 8, body: COMPARE_BODY },
];

/** `name` of the Prometheus text, in ms. */
function gaugeMs(text: string, name: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`/metrics has no ${name}`);
  return Number(line.split(" ")[1]) * 1000;
}

export async function run(): Promise<Figure[]> {
  const dataDir = mkdtempSync(join(tmpdir(), "assay-bench-big-submissions-"));
  const coordinator = await startCoordinatorProcess("big-submissions", { port: 0, grpcPort: 0, dataDir, apiKey: KEY, rateLimits: RATE_LIMITS });
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  const get = async (path: string) => {
    const res = await fetch(`${coordinator.baseUrl}${path}`, { headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}: ${text.slice(0, 200)}`);
    return text;
  };
  const submit = async (body: object) => {
    const res = await fetch(`${coordinator.baseUrl}/v1/runs`, { method: "POST", headers, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`POST /v1/runs answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
    await res.arrayBuffer();
  };
  const figures: Figure[] = [];
  try {
    // Warm-up: the first submission of each kind and the first read compile their code paths.
    await submit(README_RUN_BODY);
    await submit({ ...COMPARE_BODY, episodes: 2 });
    await get("/v1/robots");
    for (const { name, runs, body } of CASES) {
      await get("/metrics"); // resets the loop-delay histogram
      const probesMs: number[] = [];
      let submitting = true;
      const probe = (async () => {
        while (submitting) {
          const started = performance.now();
          await get("/v1/robots");
          probesMs.push(performance.now() - started);
        }
      })();
      const started = performance.now();
      const cpuBefore = processCpuMs(coordinator.pid);
      await Promise.all(Array.from({ length: runs }, () => submit(body)));
      const wallMs = performance.now() - started;
      const cpuMs = processCpuMs(coordinator.pid) - cpuBefore;
      submitting = false;
      await probe;
      const metrics = await get("/metrics");
      const figure = (metric: string, value: number, unit: string) => figures.push({ bench: BENCH, metric: `${name}_${metric}`, value: round(value, 1), unit });
      figure("loop_delay_max", gaugeMs(metrics, "nodejs_eventloop_lag_max_seconds"), "ms");
      figure("loop_delay_p99", gaugeMs(metrics, "nodejs_eventloop_lag_p99_seconds"), "ms");
      figure("probe_p50", quantile(probesMs, 0.5), "ms");
      figure("probe_max", Math.max(...probesMs), "ms");
      figure("all_201", wallMs, "ms");
      figure("coordinator_cpu", cpuMs, "ms");
      figure("load_average_1m", loadavg()[0], "runnable");
      process.stderr.write(`  ${name}: ${probesMs.length} probe requests during the submissions\n`);
    }
  } finally {
    await coordinator.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return figures;
}
