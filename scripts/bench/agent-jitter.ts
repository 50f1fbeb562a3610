/**
 * Benchmark: the cell agent's control-loop timing at 100 Hz on the real cell's clock. The loop is
 * the runner's: a fixed deadline advanced by one period per step (periods an overrun step missed
 * are skipped, as the runner does), `WallClock.sleepUntil` between steps, and each step doing
 * about 2 ms of work as a stand-in for the bus reads, policy and recording. Jitter is how late
 * each step woke against its deadline (what `assay_agent_control_jitter_seconds` observes).
 *
 * Run alone: npx tsx scripts/bench/agent-jitter.ts (one JSON line per figure).
 */
import { pathToFileURL } from "node:url";
import { WallClock } from "../../cell-agent/devices/clock/wall-clock.js";
import type { Clock } from "../../cell-agent/hardware/types.js";
import type { Figure } from "../bench.js";
import { quantile, round } from "./quantiles.js";

const BENCH = "agent-jitter";
const RATE_HZ = 100;
const DURATION_S = 5;
const WORK_MS = 2;

/** The runner's loop timing, with `work` as the step; returns each step's wake lateness, ms, and missed periods. */
export async function controlLoop(clock: Clock, rateHz: number, steps: number, work: () => Promise<void> | void): Promise<{ latenessMs: number[]; missed: number }> {
  const periodNs = BigInt(Math.round(1e9 / rateHz));
  const latenessMs: number[] = [];
  let missed = 0;
  let deadlineNs = clock.nowNs();
  for (let i = 0; i < steps; i++) {
    latenessMs.push(Math.max(0, Number(clock.nowNs() - deadlineNs) / 1e6));
    await work();
    deadlineNs += periodNs;
    const afterNs = clock.nowNs();
    if (afterNs > deadlineNs) {
      const skipped = (afterNs - deadlineNs) / periodNs + 1n;
      missed += Number(skipped);
      deadlineNs += skipped * periodNs;
    }
    await clock.sleepUntil(deadlineNs);
  }
  return { latenessMs, missed };
}

function busyMs(ms: number): void {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += Math.sqrt(x + 1);
}

export async function run(): Promise<Figure[]> {
  const { latenessMs, missed } = await controlLoop(new WallClock(), RATE_HZ, RATE_HZ * DURATION_S, () => busyMs(WORK_MS));
  return [
    { bench: BENCH, metric: "jitter_p50", value: round(quantile(latenessMs, 0.5)), unit: "ms" },
    { bench: BENCH, metric: "jitter_p99", value: round(quantile(latenessMs, 0.99)), unit: "ms" },
    { bench: BENCH, metric: "jitter_max", value: round(Math.max(...latenessMs)), unit: "ms" },
    { bench: BENCH, metric: "missed_periods", value: missed, unit: "periods" },
    { bench: BENCH, metric: "steps", value: latenessMs.length, unit: "steps" },
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const figure of await run()) console.log(JSON.stringify(figure));
}
