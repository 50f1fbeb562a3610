/**
 * Benchmarks: scripts that print figures, one JSON line each
 * ({"bench": "...", "metric": "...", "value": 1.23, "unit": "ms"}), never timed tests.
 *
 *   npm run bench                 every suite, one after the other
 *   npm run bench -- estop        one suite (or several: -- estop mcap)
 *
 * A suite is a module in scripts/bench/ exporting `run(): Promise<Figure[]>`; add it to SUITES.
 * Suites run one at a time so they do not disturb each other's timing.
 */
import { pathToFileURL } from "node:url";

export interface Figure {
  bench: string;
  metric: string;
  value: number;
  unit: string;
  /** The figure an issue asks for, when there is one (e.g. "<= 40"). */
  target?: string;
}

/** Suite name (and aliases) to its module. */
const SUITES: Record<string, { module: string; aliases: string[]; what: string }> = {
  "agent-jitter": { module: "./bench/agent-jitter.js", aliases: ["jitter"], what: "control-loop wake-up jitter at 100 Hz on the wall clock" },
  "estop-latency": { module: "./bench/estop-latency.js", aliases: ["estop"], what: "e-stop trigger to torque-off on the emulated servo bus" },
  "mcap-throughput": { module: "./bench/mcap-throughput.js", aliases: ["mcap"], what: "McapRecorder write throughput against raw file writes" },
  "sequential-compare": { module: "./bench/sequential-compare.js", aliases: [], what: "sequential paired comparison against fixed-n McNemar" },
  "threshold-false-pass": { module: "./bench/threshold-false-pass.js", aliases: [], what: "threshold runs' false-pass rate" },
  stats: { module: "./bench/stats.js", aliases: [], what: "operating characteristics of the statistics in docs/statistics.md (cells, verify, regressions, threshold, compare)" },
  "stats-cells": { module: "./bench/stats-cells.js", aliases: [], what: "rules that model cells: paired compare blocked by cell, the threshold test over cells, regressions when cells drift (also in stats)" },
  physics: { module: "./bench/physics.js", aliases: [], what: "kinematic world against MuJoCo on pick-cube@v1" },
  "leaderboard-tiers": { module: "./bench/leaderboard-tiers.js", aliases: ["leaderboards"], what: "leaderboard tier rule: error rate with equal policies and power to separate, and Bradley-Terry interval coverage" },
  render: { module: "./bench/render.js", aliases: ["cameras"], what: "simulated cameras per cell: CPU ms per simulated second of top 640x480 + wrist 320x240 at 30 Hz (render + JPEG) and of the episode video" },
  "sim-cell": { module: "./bench/sim-cell.js", aliases: ["cell"], what: "a whole simulated cell process through the README's episodes: startup CPU, CPU ms per simulated second of its process tree (ffmpeg included), the same after the first two episodes (warm), beside the render bench" },
  streams: { module: "./bench/streams.js", aliases: ["live"], what: "control-loop jitter and CPU with 0 and 4 viewers of a cell, and MJPEG frame latency" },
  export: { module: "./bench/export.js", aliases: ["exports"], what: "run export throughput per format against copying the same bytes, and the coordinator's peak memory" },
  "big-submissions": { module: "./bench/big-submissions.js", aliases: ["submissions"], what: "event-loop delay and a probe request's latency while one and eight 10,000-episode runs are submitted at once" },
  "episode-listing": { module: "./bench/episode-listing.js", aliases: ["listing"], what: "GET /v1/runs/{id}/episodes of a 10,000-episode run: time to serve and the longest event-loop hold meanwhile (wall and CPU)" },
  "api-overhead": { module: "./bench/api-overhead.js", aliases: ["api"], what: "GET /v1/runs/{id} through the whole stack against a bare express handler" },
  "model-upload": { module: "./bench/model-upload.js", aliases: ["models"], what: "model uploads (a large model and the shape bomb) in 64 MiB chunks: last-chunk answer, coordinator peak RSS growth, slowest GET /v1/robots meanwhile" },
  "render-pdf": { module: "./bench/render-pdf.js", aliases: ["pdf"], what: "PDF labels and reports at their bounds: render time, linear layout work, event-loop delay in process and on the worker thread" },
  "per-episode": { module: "./bench/per-episode.js", aliases: ["episode-cost"], what: "a capped run's budget check and allowance, and a compare run's progress, at run sizes 100 and 10,000 on SQLite and PostgreSQL (the ratio should not grow with the run)" },
  scale: { module: "./bench/scale.js", aliases: [], what: "GET /v1/runs/{id} on SQLite against PostgreSQL, and cells one or two coordinators schedule within 100 ms (ASSAY_BENCH_SCALE_MAX_CELLS caps the fleet)" },
};

function resolveSuite(name: string): string {
  const hit = Object.entries(SUITES).find(([suite, s]) => suite === name || s.aliases.includes(name));
  if (!hit) {
    const known = Object.entries(SUITES).map(([suite, s]) => `${suite}${s.aliases.length ? ` (${s.aliases.join(", ")})` : ""}`).join(", ");
    throw new Error(`no bench suite "${name}"; suites: ${known}`);
  }
  return hit[0];
}

async function main(argv: string[]): Promise<number> {
  const names = argv.length ? argv.map(resolveSuite) : Object.keys(SUITES);
  let failed = 0;
  for (const name of names) {
    process.stderr.write(`bench ${name}: ${SUITES[name].what}\n`);
    try {
      const suite = (await import(SUITES[name].module)) as { run(): Promise<Figure[]> };
      for (const figure of await suite.run()) console.log(JSON.stringify(figure));
    } catch (error) {
      failed += 1;
      process.stderr.write(`bench ${name} failed: ${(error as Error).stack ?? error}\n`);
    }
  }
  return failed ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: Error) => {
      console.error(error.message);
      process.exit(2);
    },
  );
}
