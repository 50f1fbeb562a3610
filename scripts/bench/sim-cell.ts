/**
 * Benchmark: what a whole simulated cell costs per simulated second, as the test suite and the
 * README's quick start run it. A coordinator in this process and one real sim-cell process
 * (`so101-b`, MuJoCo, unpaced) run the README's pick-cube run; the figures are CPU of the cell's
 * process tree (every thread of the cell, its live children and the ones it reaped: each
 * episode's ffmpeg) from /proc, never wall time, so a loaded machine changes them little.
 *
 * Figures: the cell's CPU from spawn to ready (module loading, MuJoCo's wasm compile), its CPU
 * per simulated second over whole episodes (resets included), the episode video's (ffmpeg) part of
 * it, the same per simulated second over the episodes after the first WARM_UP_EPISODES only (a
 * long-lived cell's figure: V8 compiles most of the agent's hot code in a fresh cell's first
 * episodes), and, side by side from the same run of this suite, the render bench's camera-only
 * figure (scripts/bench/render.ts) so the two can be compared; and what a test pays for a cell that
 * lives a few episodes: the cell's CPU from spawn to the end of its first FIRST_EPISODES episodes.
 *
 * Run alone: npx tsx scripts/bench/sim-cell.ts [episodes, default 6]
 */
import { pathToFileURL } from "node:url";
import { README_RUN_BODY } from "../../test/fixtures.js";
import { runEnd, startTestService } from "../../test/integration/helpers.js";
import type { Figure } from "../bench.js";
import { processCpuMs, treeCpuMs } from "./process-cpu.js";
import { round } from "./quantiles.js";
import { run as runRenderBench } from "./render.js";

const BENCH = "sim-cell";
const CELL = "so101-b";
/** Episodes counted as warm-up by `cell_cpu_per_sim_s_warm`. */
const WARM_UP_EPISODES = 2;
/** Episodes counted by `cell_cpu_start_through_first_episodes` (a test's cell typically lives 3-10). */
const FIRST_EPISODES = 3;
/** How often the warm-up's end is looked for: a later look puts up to this much of the next episode's start in the warm-up. */
const POLL_MS = 50;

type EpisodeList = { data: Array<{ duration_s: number | null }> };

/** Runs `episodes` episodes on one fresh cell and returns its CPU figures. */
export async function measureCell(episodes: number): Promise<{ startupCpuMs: number; cpuMs: number; ffmpegCpuMs: number; simulatedS: number; episodes: number; warm?: { cpuMs: number; simulatedS: number }; firstEpisodesCpuMs?: number }> {
  const service = await startTestService({ cells: [CELL] });
  try {
    const pid = service.fleet!.pids()[CELL]!;
    // Ready: the control channel is up (the launcher waited for it); the agent may still be saying hello.
    const startupCpuMs = treeCpuMs(pid, true);
    const created = (await (await service.api("/v1/runs", { method: "POST", json: { ...README_RUN_BODY, episodes } })).json()) as { id: string };
    const before = { tree: treeCpuMs(pid, true), reaped: processCpuMs(pid, true) - processCpuMs(pid) };
    const ended = runEnd(service, created.id, { deadlineMs: 600_000 });
    let running = true;
    void ended.finally(() => (running = false)).catch(() => undefined);
    // The warm-up's end: CPU and simulated seconds when WARM_UP_EPISODES episodes have ended.
    // And the CPU since spawn when FIRST_EPISODES have ended.
    let warmStart: { tree: number; simulatedS: number } | undefined;
    let firstEpisodesCpuMs: number | undefined;
    const watchWarmUp = episodes > WARM_UP_EPISODES;
    const watchFirst = episodes > FIRST_EPISODES;
    while (running && ((watchWarmUp && !warmStart) || (watchFirst && firstEpisodesCpuMs === undefined))) {
      const list = (await (await service.api(`/v1/runs/${created.id}/episodes`)).json()) as EpisodeList;
      const done = list.data.filter((e) => typeof e.duration_s === "number");
      if (!warmStart && done.length >= WARM_UP_EPISODES) warmStart = { tree: treeCpuMs(pid, true), simulatedS: done.reduce((sum, e) => sum + e.duration_s!, 0) };
      if (firstEpisodesCpuMs === undefined && done.length >= FIRST_EPISODES) firstEpisodesCpuMs = treeCpuMs(pid, true);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const { run } = await ended;
    const after = { tree: treeCpuMs(pid, true), reaped: processCpuMs(pid, true) - processCpuMs(pid) };
    if (run.status !== "completed") throw new Error(`bench run ended ${run.status}`);
    const list = (await (await service.api(`/v1/runs/${created.id}/episodes`)).json()) as EpisodeList;
    const simulatedS = list.data.reduce((sum, e) => sum + (e.duration_s ?? 0), 0);
    const warm = warmStart && simulatedS > warmStart.simulatedS ? { cpuMs: after.tree - warmStart.tree, simulatedS: simulatedS - warmStart.simulatedS } : undefined;
    return { startupCpuMs, cpuMs: after.tree - before.tree, ffmpegCpuMs: after.reaped - before.reaped, simulatedS, episodes: list.data.length, warm, firstEpisodesCpuMs };
  } finally {
    await service.stop();
  }
}

export async function run(episodes = 6): Promise<Figure[]> {
  const r = await measureCell(episodes);
  const figures: Figure[] = [
    { bench: BENCH, metric: "cell_startup_cpu", value: round(r.startupCpuMs, 0), unit: "ms" },
    { bench: BENCH, metric: "episodes", value: r.episodes, unit: "count" },
    { bench: BENCH, metric: "simulated_s_per_episode", value: round(r.simulatedS / r.episodes, 2), unit: "s" },
    { bench: BENCH, metric: "cell_cpu_per_sim_s", value: round(r.cpuMs / r.simulatedS, 1), unit: "ms" },
    { bench: BENCH, metric: "cell_video_ffmpeg_cpu_per_sim_s", value: round(r.ffmpegCpuMs / r.simulatedS, 1), unit: "ms" },
  ];
  if (r.firstEpisodesCpuMs !== undefined) figures.push({ bench: BENCH, metric: `cell_cpu_start_through_${FIRST_EPISODES}_episodes`, value: round(r.firstEpisodesCpuMs, 0), unit: "ms" });
  if (r.warm) figures.push({ bench: BENCH, metric: "cell_cpu_per_sim_s_warm", value: round(r.warm.cpuMs / r.warm.simulatedS, 1), unit: "ms" });
  // Side by side: the cameras alone on a scripted pick (render bench), measured in this same run.
  for (const f of await runRenderBench()) if (f.metric === "cell_cpu_per_sim_s" || f.metric === "cameras_cpu_per_sim_s") figures.push({ ...f, metric: `render_bench_${f.metric}` });
  return figures;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run(Number(process.argv[2] ?? 6))) console.log(JSON.stringify(figure));
}
