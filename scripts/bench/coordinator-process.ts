/**
 * A coordinator in a child process, for suites whose load must not share the coordinator's event
 * loop (scale.ts): `startCoordinatorProcess(name, options)` runs this file with the options as JSON,
 * waits for its ready line and returns its addresses and the keys a first start creates. The child
 * runs what scripts/start.ts runs, startCoordinator(compileCoordinatorOptions(...)), without a
 * simulated fleet and with options start.ts does not take from the environment (rateLimits,
 * installationsPath). `stop()` ends it with SIGTERM, then SIGKILL if it has not exited in 10 s; a
 * child not ready within 60 s is stopped and its start fails.
 *
 * `eventLoopDelay()` asks the child, over the IPC channel (bench only), for its event-loop delay since
 * the last ask: a monitorEventLoopDelay at 1 ms resolution in the coordinator's process, reset per ask.
 *
 *   npx tsx scripts/bench/coordinator-process.ts '<coordinator options as JSON>'
 */
import { spawn } from "node:child_process";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { compileCoordinatorOptions } from "../../coordinator/options.js";
import { startCoordinator } from "../../coordinator/server.js";

const REPO = resolve(import.meta.dirname, "..", "..");
/** Marks the child's one line the parent parses; everything else on stdout is the coordinator's log. */
const READY = "assay-bench-coordinator-ready ";
const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;

export interface CoordinatorProcess {
  name: string;
  pid: number;
  baseUrl: string;
  grpcAddress: string;
  /** The keys' secrets, when this start created them (the first coordinator on a database). */
  adminKey?: string;
  operatorKey?: string;
  /** How the process ended (an exit code or a signal), or undefined while it runs. */
  exited(): string | undefined;
  /** The last lines the process wrote, for an error message. */
  outputTail(): string;
  /** The coordinator's event-loop delay since the last call (or its start), in ms. */
  eventLoopDelay(): Promise<EventLoopDelay>;
  /** Ends the process; safe to call twice. */
  stop(): Promise<void>;
}

export interface EventLoopDelay {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Starts a coordinator process with `options` (compileCoordinatorOptions' input; give ports 0). */
export async function startCoordinatorProcess(name: string, options: Record<string, unknown>): Promise<CoordinatorProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/bench/coordinator-process.ts", JSON.stringify(options)], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const delayAnswers: Array<(delay: EventLoopDelay) => void> = [];
  child.on("message", (message: { eventLoopDelay?: EventLoopDelay }) => {
    if (message.eventLoopDelay) delayAnswers.shift()?.(message.eventLoopDelay);
  });
  const eventLoopDelay = () => new Promise<EventLoopDelay>((answer, fail) => {
    if (exit !== undefined) return fail(new Error(`coordinator ${name} has exited (${exit})`));
    delayAnswers.push(answer);
    child.send("eventLoopDelay");
  });
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    tail.push(...chunk.toString().split("\n").filter(Boolean).map((line) => `[${name}] ${line}`));
    tail.splice(0, Math.max(0, tail.length - 40));
  };
  let exit: string | undefined;
  const exited = new Promise<void>((done) => child.once("exit", (code, signal) => {
    exit = signal ?? `exit code ${code}`;
    done();
  }));
  const stop = async () => {
    if (exit !== undefined) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  };
  child.stderr!.on("data", keep);
  let pending = "";
  let startTimer: NodeJS.Timeout | undefined;
  const ready = await new Promise<{ baseUrl: string; grpcAddress: string; adminKey?: string; operatorKey?: string }>((done, fail) => {
    startTimer = setTimeout(() => {
      fail(new Error(`coordinator ${name} was not ready after ${START_TIMEOUT_MS} ms:\n${tail.join("\n")}`));
      void stop();
    }, START_TIMEOUT_MS);
    child.stdout!.on("data", (chunk: Buffer) => {
      keep(chunk);
      pending += chunk.toString();
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) if (line.startsWith(READY)) done(JSON.parse(line.slice(READY.length)));
    });
    child.once("exit", (code, signal) => fail(new Error(`coordinator ${name} exited while starting (${signal ?? code}):\n${tail.join("\n")}`)));
  }).finally(() => clearTimeout(startTimer));
  return { name, pid: child.pid!, ...ready, exited: () => exit, outputTail: () => tail.join("\n"), eventLoopDelay, stop };
}

async function main(json: string): Promise<void> {
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  process.on("message", (message) => {
    if (message !== "eventLoopDelay") return;
    const ms = (ns: number) => ns / 1e6;
    process.send?.({ eventLoopDelay: { p50Ms: ms(loop.percentile(50)), p99Ms: ms(loop.percentile(99)), maxMs: ms(loop.max) } });
    loop.reset();
  });
  // The IPC channel must not keep the process alive after the coordinator stops.
  process.channel?.unref();
  const coordinator = await startCoordinator(compileCoordinatorOptions(JSON.parse(json)));
  const { baseUrl, grpcAddress, adminKey, operatorKey } = coordinator;
  console.log(READY + JSON.stringify({ baseUrl, grpcAddress, adminKey, operatorKey }));
  process.once("SIGTERM", () => {
    void coordinator.stop().then(() => process.exit(0));
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main(process.argv[2] ?? "{}");
}
