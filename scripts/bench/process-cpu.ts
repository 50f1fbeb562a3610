/** CPU time of processes from Linux /proc, for the bench suites that watch other processes. */
import { readdirSync, readFileSync } from "node:fs";

/** utime + stime of a process (all its threads), ms. */
export function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks at USER_HZ 100
}

/** Summed CPU of a process and all its descendants that are alive, ms. */
export function treeCpuMs(rootPid: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited while we looked
    }
  }
  let total = 0;
  const visit = (pid: number) => {
    try {
      total += processCpuMs(pid);
    } catch {
      return;
    }
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(rootPid);
  return total;
}
