/**
 * Policy type `container` on a real cell: each episode's session runs the image with the cell's OCI
 * engine (docker or podman) and drives it as an endpoint policy (endpoint-runtime.ts).
 *
 * A session starts a detached container named `assay-policy-<random>` that publishes the image's
 * serving port on a free loopback port only (`--publish 127.0.0.1:<hostPort>:<port>`), with every
 * GPU when configured (`--gpus all`; podman: the CDI device `nvidia.com/gpu=all`) and nothing else of
 * the host (no volumes, other devices or host network).
 * It never pulls (`--pull never`): a pull would outlast the start timeout, so images are pulled when
 * the cell is set up and the doctor warns about missing ones. The session waits, up to
 * `startTimeoutMs`, until the server answers HTTP on that port, then talks to it over a WebSocket at
 * `/` with the image's wire (`protocol`). A start that fails quotes the engine's or the container's last
 * words. Closing the session, or a start that fails half way, removes the container (`rm -f`);
 * `cleanup()` removes containers a crashed agent left behind.
 *
 * Only configured images run: the cell operator decides what executes on the cell PC.
 */
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { createServer, type AddressInfo } from "node:net";
import type { Observation, PolicyRuntime, PolicySession } from "../hardware/types.js";
import { ContainerEngineCli, findEngine, stderrTail, type EngineName } from "./container-engine.js";
import { EndpointPolicyRuntime, type EndpointRuntimeOptions } from "./endpoint-runtime.js";

/** Every policy container's name starts with this; `cleanup()` removes what carries it. */
export const CONTAINER_NAME_PREFIX = "assay-policy-";

export const CONTAINER_RUNTIME_DEFAULTS = { startTimeoutMs: 120_000, latencyBudgetMs: 200, port: 8000 } as const;

/** One image the cell may run, as `policies.images[]` of the agent config gives it. */
export interface ContainerImage {
  /** Image reference, e.g. "ghcr.io/acme/picker:3". */
  image: string;
  /** The wire the image serves: "json" (the endpoint wire of endpoint-runtime.ts) or "openpi". */
  protocol: "json" | "openpi";
  /** The port the image's policy server listens on inside the container (default 8000). */
  port: number;
  /** Handed to the endpoint runtime as `observation_map` (which observation goes under which key). */
  observationMap?: Record<string, unknown>;
  /** Environment variables set in the container. */
  env: Record<string, string>;
}

export interface ContainerRuntimeOptions {
  /** The engine; default: whichever of docker, podman is on PATH, docker first. */
  engine?: EngineName;
  /** Give the container every GPU (docker `--gpus all`, podman `--device nvidia.com/gpu=all`); default false. */
  gpus?: boolean;
  /** From `run` until the image's server answers, ms (default 120000). */
  startTimeoutMs?: number;
  /** `latency_budget_ms` the container's server is held to each step (default 200). */
  latencyBudgetMs?: number;
  images: ContainerImage[];
  log?: (line: string) => void;
  /** Miss rules of the endpoint runtime (default: its own). */
  endpoint?: EndpointRuntimeOptions;
  /** Directories searched for the engine (default: PATH). */
  searchPath?: string;
}

const READY_PROBE_INTERVAL_MS = 200;
/** How often, while waiting, the engine is asked whether the container still runs. */
const ALIVE_CHECK_INTERVAL_MS = 2000;

/** A loopback port nobody listens on right now. */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** True when anything answers HTTP at `http://127.0.0.1:<port>/` (any status: a WebSocket server says 426 or 405). */
function answersHttp(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/", method: "GET", agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(true);
    });
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve(false));
    req.end();
  });
}

/** Every GPU: docker's flag, or for podman the NVIDIA CDI device (podman's own --gpus is unreliable). */
function gpuArgs(engine: EngineName): string[] {
  return engine === "podman" ? ["--device", "nvidia.com/gpu=all"] : ["--gpus", "all"];
}

/** `; its last output: ...` from the container's log, for an error message; "" when it printed nothing. */
async function lastWords(engine: ContainerEngineCli, name: string): Promise<string> {
  const tail = await engine.logTail(name);
  return tail ? `; its last output: ${tail}` : "";
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One episode's container, driven through the endpoint session it serves. */
class ContainerSession implements PolicySession {
  private closing: Promise<void> | undefined;

  constructor(private readonly endpoint: PolicySession, private readonly removeContainer: () => Promise<void>) {}

  reset(info: { seed: number; instruction?: string; controlRateHz: number }): Promise<void> {
    return this.endpoint.reset(info);
  }

  act(observation: Observation): Promise<number[]> {
    return this.endpoint.act(observation);
  }

  /** Closes the connection, then removes the container; a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= this.endpoint.close().finally(() => this.removeContainer());
    return this.closing;
  }
}

export class ContainerPolicyRuntime implements PolicyRuntime {
  readonly policyTypes = ["container"] as const;
  private readonly endpoints: EndpointPolicyRuntime;
  private readonly log: (line: string) => void;
  private readonly startTimeoutMs: number;
  private readonly latencyBudgetMs: number;
  /** Containers this runtime started and has not removed yet. */
  private readonly live = new Set<string>();

  constructor(private readonly options: ContainerRuntimeOptions) {
    this.endpoints = new EndpointPolicyRuntime(options.endpoint);
    this.log = options.log ?? (() => undefined);
    this.startTimeoutMs = options.startTimeoutMs ?? CONTAINER_RUNTIME_DEFAULTS.startTimeoutMs;
    this.latencyBudgetMs = options.latencyBudgetMs ?? CONTAINER_RUNTIME_DEFAULTS.latencyBudgetMs;
  }

  /** The configured images. */
  available(): string[] {
    return this.options.images.map((i) => i.image);
  }

  /** The engine's CLI; throws in words when neither docker nor podman is installed. */
  engine(): ContainerEngineCli {
    const engine = findEngine(this.options.engine, this.options.searchPath);
    if (engine) return engine;
    const missing = this.options.engine ? `${this.options.engine} is not on PATH` : "docker and podman are not on PATH";
    throw new Error(`No container engine: ${missing}; install one (docs/install-cell-agent.md, Policies) or set policies.runtime to none`);
  }

  async start(policy: Record<string, unknown>, robot: { model: string; dof: number }): Promise<PolicySession> {
    if (policy.type !== undefined && policy.type !== "container") throw new Error(`the container runtime runs policies of type "container"; got ${JSON.stringify(policy.type)}`);
    const entry = this.options.images.find((i) => i.image === policy.image);
    if (!entry) {
      const list = this.available();
      throw new Error(`this cell does not run image ${JSON.stringify(policy.image)}; it runs ${list.length ? list.join(", ") : "no images"} (policies.images in the agent config)`);
    }
    const engine = this.engine();
    const name = `${CONTAINER_NAME_PREFIX}${randomBytes(6).toString("hex")}`;
    const deadline = performance.now() + this.startTimeoutMs;
    this.live.add(name);
    try {
      const hostPort = await freeLoopbackPort();
      await this.run(engine, entry, name, hostPort, deadline);
      await this.waitUntilServing(engine, entry, name, hostPort, deadline);
      const endpoint = await this.endpoints.start({
        type: "endpoint",
        url: `ws://127.0.0.1:${hostPort}/`,
        latency_budget_ms: this.latencyBudgetMs,
        protocol: entry.protocol,
        ...(entry.observationMap ? { observation_map: entry.observationMap } : {}),
        ...(policy.inference !== undefined ? { inference: policy.inference } : {}),
      }, robot);
      this.log(`policy ${entry.image}: container ${name} serves on 127.0.0.1:${hostPort}`);
      return new ContainerSession(endpoint, () => this.remove(engine, name));
    } catch (error) {
      await this.remove(engine, name).catch((e: Error) => this.log(`policy ${entry.image}: ${e.message}; remove it by hand: ${engine.name} rm -f ${name}`));
      throw error;
    }
  }

  private async run(engine: ContainerEngineCli, entry: ContainerImage, name: string, hostPort: number, deadline: number): Promise<void> {
    const args = [
      "run", "--detach", "--pull", "never", "--name", name,
      "--publish", `127.0.0.1:${hostPort}:${entry.port}`,
      ...(this.options.gpus ? gpuArgs(engine.name) : []),
      ...Object.entries(entry.env).flatMap(([key, value]) => ["--env", `${key}=${value}`]),
      entry.image,
    ];
    const out = await engine.exec(args, deadline - performance.now());
    if (out.timedOut) throw new Error(`${engine.name} run ${entry.image} did not return within ${Math.round(this.startTimeoutMs / 1000)} s (policies.startTimeoutMs)`);
    if (out.code === 0) return;
    const hint = /no such image|unable to find image|image not known/i.test(out.stderr) ? `; the image is not on this cell: pull it first (${engine.name} pull ${entry.image})` : "";
    throw new Error(`${engine.name} run ${entry.image} failed (exit ${out.code}): ${stderrTail(out.stderr) || "no message"}${hint}`);
  }

  /** Resolves once the server in the container answers; rejects when the container stops or the deadline passes. */
  private async waitUntilServing(engine: ContainerEngineCli, entry: ContainerImage, name: string, hostPort: number, deadline: number): Promise<void> {
    let nextAliveCheck = performance.now() + ALIVE_CHECK_INTERVAL_MS;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      if (await answersHttp(hostPort, Math.min(1000, left))) return;
      if (performance.now() >= nextAliveCheck) {
        const running = await engine.containerNames(name, { all: false });
        if (!running.includes(name)) {
          throw new Error(`the container of ${entry.image} stopped before its policy server answered${await lastWords(engine, name)}; it must keep serving on port ${entry.port} (try it by hand: ${engine.name} run --rm --publish 127.0.0.1:${entry.port}:${entry.port} ${entry.image})`);
        }
        nextAliveCheck = performance.now() + ALIVE_CHECK_INTERVAL_MS;
      }
      await sleep(Math.min(READY_PROBE_INTERVAL_MS, Math.max(0, deadline - performance.now())));
    }
    throw new Error(`${entry.image} did not answer on its port ${entry.port} within ${Math.round(this.startTimeoutMs / 1000)} s of starting (policies.startTimeoutMs)${await lastWords(engine, name)}; the image must serve its policy on that port (policies.images[].port)`);
  }

  private async remove(engine: ContainerEngineCli, name: string): Promise<void> {
    await engine.remove([name]);
    this.live.delete(name);
  }

  /** Removes policy containers a crashed agent left behind (by name prefix); returns their names. Call at agent start. */
  async cleanup(): Promise<string[]> {
    const engine = this.engine();
    const left = (await engine.containerNames(CONTAINER_NAME_PREFIX, { all: true })).filter((n) => n.startsWith(CONTAINER_NAME_PREFIX) && !this.live.has(n));
    await engine.remove(left);
    if (left.length) this.log(`removed ${left.length} policy container(s) left by an earlier agent: ${left.join(", ")}`);
    return left;
  }

  /** Removes the containers of sessions still open (agent shutdown). */
  async close(): Promise<void> {
    if (this.live.size === 0) return;
    const engine = this.engine();
    const names = [...this.live];
    await engine.remove(names);
    for (const n of names) this.live.delete(n);
  }
}
