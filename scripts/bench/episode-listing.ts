/**
 * GET /v1/runs/{run_id}/episodes of a large run (default 10,000 episodes, 4 artifact rows each, seeded straight
 * into the store: test/support/large-run.ts) through an in-process coordinator on SQLite, read by a client in the
 * same process as it streams: the time to serve it, and how long the process's event loop was held meanwhile
 * (the longest gap between the ticks of a 1 ms timer, in wall-clock time and in the process's CPU time, which
 * other processes on a busy machine do not inflate; test/support/loop-hold-probe.ts). Each listing is measured
 * `repeats` times; the first, cold (code not yet compiled), is reported apart from the best and worst of the rest.
 *
 *   npx tsx scripts/bench/episode-listing.ts [episodes, default 10000] [repeats, default 5]
 */
import { get } from "node:http";
import { loadavg } from "node:os";
import { pathToFileURL } from "node:url";
import { seedLargeRun } from "../../test/support/large-run.js";
import { probeLoopHold, type LoopHold } from "../../test/support/loop-hold-probe.js";
import { startTestService, TEST_ADMIN_KEY } from "../../test/integration/helpers.js";
import type { Figure } from "../bench.js";

const BENCH = "episode-listing";
const RUN = "run_BenchListing000000001";

export async function run(episodes = 10_000, repeats = 5): Promise<Figure[]> {
  if (!Number.isInteger(repeats) || repeats < 2) throw new Error(`repeats must be a whole number from 2; got ${repeats}`);
  const figures: Figure[] = [];
  const figure = (metric: string, value: number, unit: string, target?: string) =>
    figures.push({ bench: BENCH, metric, value: Number(value.toFixed(3)), unit, ...(target ? { target } : {}) });
  const service = await startTestService({ rateLimits: { general: { perS: 100_000, burst: 100_000 }, submit: { perS: 100_000, burst: 100_000 } } });
  try {
    const seeding = performance.now();
    await seedLargeRun(service.coordinator.db, RUN, episodes);
    figure("seed", performance.now() - seeding, "ms");
    const listings: Array<LoopHold & { serveMs: number; bytes: number }> = [];
    for (let i = 0; i < repeats; i++) {
      const stop = probeLoopHold();
      const started = performance.now();
      const bytes = await new Promise<number>((resolve, reject) => {
        get(new URL(`/v1/runs/${RUN}/episodes`, service.coordinator.baseUrl), { agent: false, headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } }, (res) => {
          let n = 0;
          res.on("data", (chunk: Buffer) => (n += chunk.length));
          res.on("end", () => resolve(n));
          res.on("error", reject);
        }).on("error", reject);
      });
      listings.push({ ...stop(), serveMs: performance.now() - started, bytes });
    }
    const [cold, ...warm] = listings;
    figure("bytes", cold.bytes, "bytes");
    figure("cold_serve", cold.serveMs, "ms");
    figure("cold_loop_hold_max", cold.maxWallGapMs, "ms");
    figure("cold_loop_hold_cpu_max", cold.maxCpuGapMs, "ms");
    figure("warm_serve_best", Math.min(...warm.map((l) => l.serveMs)), "ms");
    figure("warm_loop_hold_max", Math.max(...warm.map((l) => l.maxWallGapMs)), "ms", "a few ms");
    figure("warm_loop_hold_cpu_max", Math.max(...warm.map((l) => l.maxCpuGapMs)), "ms", "a few ms");
    figure("load_average_1m", loadavg()[0], "runnable");
  } finally {
    await service.stop();
  }
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [episodes, repeats] = process.argv.slice(2).map(Number);
  for (const f of await run(episodes || undefined, repeats || undefined)) console.log(JSON.stringify(f));
}
