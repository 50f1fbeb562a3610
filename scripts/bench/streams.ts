/**
 * Live streams: what watching costs and how fresh the pictures are. One simulated so101 cell paced
 * at real time (so its control loop runs on the wall clock and its jitter means something) runs the
 * README policy for two episodes with nobody watching, then again with 4 MJPEG viewers (two per
 * camera), and prints for each phase the control loop's wake-up lateness (the agent's own
 * `assay_agent_control_jitter_seconds`, read from the cell's /metrics; on simulated time it is 0 by
 * construction, so the cell process's event-loop delay, `assay_agent_event_loop_delay_seconds`, is
 * the figure that says whether watching could delay a real cell's loop), missed periods, and the
 * CPU of the cell process and of the coordinator; then the MJPEG frame latency from capture on the cell
 * to arrival at the viewer (p50, p99) and the CPU each viewer adds.
 *
 *   npx tsx scripts/bench/streams.ts
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { createApiKey } from "../../coordinator/auth/api-keys.js";
import { CATALOG_ACCOUNT_ID } from "../../coordinator/catalog/tasks.js";
import { README_RUN_BODY } from "../../test/fixtures.js";
import { runEnd, startTestService, type TestService } from "../../test/integration/helpers.js";
import { eventually } from "../../test/support/eventually.js";
import type { Figure } from "../bench.js";
import { quantile } from "./quantiles.js";

const BENCH = "streams";
const CELL = "so101-b";
const VIEWERS = 4;

/** utime + stime of a process, ms (Linux /proc). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks at USER_HZ 100
}

async function jitter(controlUrl: string): Promise<{ sumS: number; count: number; over1ms: number; missed: number; loopDelayP99Ms: number; loopDelayMaxMs: number }> {
  const text = await (await fetch(`${controlUrl}/metrics`)).text();
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
  return {
    sumS: value(/^assay_agent_control_jitter_seconds_sum\{[^}]*\} ([\d.e+-]+)$/m),
    count: value(/^assay_agent_control_jitter_seconds_count\{[^}]*\} ([\d.e+-]+)$/m),
    over1ms: value(/^assay_agent_control_jitter_seconds_count\{[^}]*\} ([\d.e+-]+)$/m) - value(/^assay_agent_control_jitter_seconds_bucket\{le="0.001"[^}]*\} ([\d.e+-]+)$/m),
    missed: value(/^assay_agent_control_missed_periods_total\{[^}]*\} ([\d.e+-]+)$/m),
    loopDelayP99Ms: value(/^assay_agent_event_loop_delay_seconds\{quantile="0.99"[^}]*\} ([\d.e+-]+)$/m) * 1000,
    loopDelayMaxMs: value(/^assay_agent_event_loop_delay_seconds\{quantile="1"[^}]*\} ([\d.e+-]+)$/m) * 1000,
  };
}

/** Reads MJPEG parts until aborted, recording each frame's latency (arrival - X-Captured-At-Ms). */
async function view(url: string, signal: AbortSignal, latenciesMs: number[]): Promise<void> {
  const response = await fetch(url, { signal }).catch(() => undefined);
  if (!response?.body) return;
  const reader = response.body.getReader();
  let buffer = Buffer.alloc(0);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      const now = Date.now();
      buffer = Buffer.concat([buffer, Buffer.from(value)]);
      for (;;) {
        const header = /Content-Length: (\d+)\r\nX-Captured-At-Ms: (\d+)\r\n\r\n/.exec(buffer.toString("latin1"));
        if (!header) break;
        const end = header.index + header[0].length + Number(header[1]);
        if (buffer.length < end) break;
        latenciesMs.push(now - Number(header[2]));
        buffer = buffer.subarray(end);
      }
    }
  } catch {
    // aborted
  }
}

async function phase(service: TestService, controlUrl: string, cellPid: number, viewerUrls: string[], latenciesMs: number[]) {
  const abort = new AbortController();
  const viewers = viewerUrls.map((url) => view(url, abort.signal, latenciesMs));
  const before = { jitter: await jitter(controlUrl), cellCpuMs: processCpuMs(cellPid), coordinatorCpu: process.cpuUsage(), atMs: performance.now() };
  const created = (await (await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes: 2 } })).json()) as { id: string };
  const { run } = await runEnd(service, created.id);
  if (run.status !== "completed") throw new Error(`bench run ended ${run.status}`);
  const after = { jitter: await jitter(controlUrl), cellCpuMs: processCpuMs(cellPid), coordinatorCpu: process.cpuUsage(before.coordinatorCpu), atMs: performance.now() };
  abort.abort();
  await Promise.all(viewers);
  const seconds = (after.atMs - before.atMs) / 1000;
  const steps = after.jitter.count - before.jitter.count;
  return {
    meanJitterMs: ((after.jitter.sumS - before.jitter.sumS) / steps) * 1000,
    over1msPct: ((after.jitter.over1ms - before.jitter.over1ms) / steps) * 100,
    missed: after.jitter.missed - before.jitter.missed,
    // Reset at every scrape: `after` covers exactly this phase.
    loopDelayP99Ms: after.jitter.loopDelayP99Ms,
    loopDelayMaxMs: after.jitter.loopDelayMaxMs,
    cellCpuPct: ((after.cellCpuMs - before.cellCpuMs) / 1000 / seconds) * 100,
    coordinatorCpuPct: ((after.coordinatorCpu.user + after.coordinatorCpu.system) / 1e6 / seconds) * 100,
    steps,
  };
}

export async function run(): Promise<Figure[]> {
  const service = await startTestService({ cells: [CELL], simSpeed: 1 });
  const figures: Figure[] = [];
  const figure = (metric: string, value: number, unit: string) => figures.push({ bench: BENCH, metric, value: Number(value.toFixed(3)), unit });
  try {
    const status = service.fleet!.status().find((s) => s.cell === CELL)!;
    const operator = createApiKey(service.coordinator.db, CATALOG_ACCOUNT_ID, ["streams:read"], new Date()).secret;
    const descriptor = await eventually(`${CELL} to connect with its cameras`, async () => {
      const d = (await (await service.api(`/v1/streams/${CELL}`, { headers: { authorization: `Bearer ${operator}` } })).json()) as { cameras: Array<{ name: string; mjpeg_url: string }> };
      return d.cameras.length > 0 && d;
    });
    const urls = Array.from({ length: VIEWERS }, (_, i) => descriptor.cameras[i % descriptor.cameras.length]!.mjpeg_url);
    const latenciesMs: number[] = [];
    const idle = await phase(service, status.controlUrl!, status.pid!, [], latenciesMs);
    const watched = await phase(service, status.controlUrl!, status.pid!, urls, latenciesMs);
    for (const [name, p] of [["0_viewers", idle], [`${VIEWERS}_viewers`, watched]] as const) {
      figure(`control_jitter_mean_${name}`, p.meanJitterMs, "ms");
      figure(`control_steps_late_over_1ms_${name}`, p.over1msPct, "%");
      figure(`missed_periods_${name}`, p.missed, "count");
      figure(`cell_event_loop_delay_p99_${name}`, p.loopDelayP99Ms, "ms");
      figure(`cell_event_loop_delay_max_${name}`, p.loopDelayMaxMs, "ms");
      figure(`cell_cpu_${name}`, p.cellCpuPct, "% of a core");
      figure(`coordinator_cpu_${name}`, p.coordinatorCpuPct, "% of a core");
    }
    latenciesMs.sort((a, b) => a - b);
    figure("mjpeg_frames_received", latenciesMs.length, "count");
    figure("mjpeg_latency_p50", quantile(latenciesMs, 0.5), "ms");
    figure("mjpeg_latency_p99", quantile(latenciesMs, 0.99), "ms");
    figure("cpu_per_viewer", (watched.cellCpuPct + watched.coordinatorCpuPct - idle.cellCpuPct - idle.coordinatorCpuPct) / VIEWERS, "% of a core");
  } finally {
    await service.stop();
  }
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const f of await run()) console.log(JSON.stringify(f));
}
