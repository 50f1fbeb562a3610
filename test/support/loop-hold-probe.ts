/**
 * How long this process's event loop was held, seen from a 1 ms interval timer: the longest wall-clock gap
 * between its callbacks, and the most CPU time the process spent between two of them. On a busy machine
 * the wall gap also counts the time the OS ran other processes; the CPU gap does not, so it measures the
 * longest stretch of work that ran without letting the loop turn whatever else the machine is doing.
 * On Linux the CPU is the main thread's own (`/proc/self/task/<pid>/schedstat`, in ns): the process's total
 * also counts V8's helper threads (concurrent marking, compilers), which on 2 cores ran beside a 63 ms turn and
 * made it read 116 ms of CPU. Elsewhere it falls back to the process's total.
 */
import { readFileSync } from "node:fs";

const MAIN_THREAD_SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;

/** The main thread's CPU time in ms (the process's, where the kernel does not say per thread). */
function mainThreadCpuMs(): number {
  try {
    return Number(readFileSync(MAIN_THREAD_SCHEDSTAT, "ascii").split(" ", 1)[0]) / 1e6;
  } catch {
    const used = process.cpuUsage();
    return (used.user + used.system) / 1000;
  }
}

export interface LoopHold {
  maxWallGapMs: number;
  maxCpuGapMs: number;
  ticks: number;
}

/** Starts the probe; call the returned function to stop it and read what it saw. */
export function probeLoopHold(): () => LoopHold {
  const cpuMs = mainThreadCpuMs;
  let lastWall = performance.now();
  let lastCpu = cpuMs();
  const seen: LoopHold = { maxWallGapMs: 0, maxCpuGapMs: 0, ticks: 0 };
  const tick = () => {
    const wall = performance.now();
    const cpu = cpuMs();
    seen.maxWallGapMs = Math.max(seen.maxWallGapMs, wall - lastWall);
    seen.maxCpuGapMs = Math.max(seen.maxCpuGapMs, cpu - lastCpu);
    seen.ticks++;
    lastWall = wall;
    lastCpu = cpu;
  };
  const timer = setInterval(tick, 1);
  return () => {
    clearInterval(timer);
    tick();
    return seen;
  };
}
