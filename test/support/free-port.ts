/**
 * A loopback port nothing listens on right now, for a URL that must refuse connections, or a process
 * that must be started on a known port (then restarted on it).
 *
 * Chosen below the kernel's ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`, 32768-60999 by
 * default), at random, and checked by binding it. A port of the ephemeral range, released for a process
 * to bind later, could be taken in between by any outgoing connection or `listen(0)` of the test
 * processes running beside it (seen: a coordinator started a minute after the pick met EADDRINUSE).
 * Below the range, only an explicit bind of that very port can take it.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** Ports below the ephemeral range to choose from. */
const SPAN = 12_000;

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 1024 + 1000) return low;
  } catch {
    // Not Linux: the IANA dynamic range's start.
  }
  return 49152;
}

function bindable(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  const high = ephemeralLow();
  const low = Math.max(1025, high - SPAN);
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free loopback port found in ${low}-${high - 1} after 200 tries`);
}
