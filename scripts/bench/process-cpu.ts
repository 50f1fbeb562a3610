/** CPU time of processes from Linux /proc, for the bench suites that watch other processes. */
import { readdirSync, readFileSync } from "node:fs";

/** utime + stime of a process (all its threads), ms; with `reaped`, also cutime + cstime (its waited-for children). */
export function processCpuMs(pid: number, reaped = false): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]) + (reaped ? Number(fields[13]) + Number(fields[14]) : 0);
  return (ticks * 1000) / 100; // clock ticks at USER_HZ 100
}

/** Summed CPU of a process and all its descendants that are alive, ms (`reaped`: see processCpuMs). */
export function treeCpuMs(rootPid: number, reaped = false): number {
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
      total += processCpuMs(pid, reaped);
    } catch {
      return;
    }
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(rootPid);
  return total;
}
