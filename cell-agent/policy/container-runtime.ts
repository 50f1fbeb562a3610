/**
 * Policy type `container` on a real cell: the image runs with the cell's OCI engine (docker or
 * podman) and is driven as an endpoint policy (endpoint-runtime.ts).
 *
 * One container per run on the cell, kept warm across the run's episodes: an episode of the same run
 * reuses it after a reset (the JSON wire's `{"type": "reset"}` message, answered `{"reset": "ok"}`;
 * an openpi server is reset by the new episode's new connection). A server that does not answer the
 * reset within RESET_TIMEOUT_MS, or a container that stopped, is replaced by a fresh one. The warm
 * container is removed when an episode of another run (or another image) starts on the cell, when
 * the cell has run no episode of it for `idleStopMs` (default 600000), and at agent shutdown. A
 * session started without a run id gets a container of its own, removed when it closes.
 * A freshly started container's first inference gets the warm-up allowance `warmupMs` (default
 * 120000), never counted against `latency_budget_ms`.
 *
 * A container is started detached, named `assay-policy-<random>`, with a memory limit (`--memory`,
 * default 16g), the configured GPUs (`--gpus all` or `--gpus device=N`; podman: the CDI devices
 * `nvidia.com/gpu=...`) and nothing else of the host (no volumes, other devices or host network). By
 * default it joins the internal network `assay-policy` (created `--internal` on first use: no route off
 * the host, nothing published) and the agent connects to its address there; with `network:
 * "published"` (rootless podman, whose container addresses the host cannot reach) it sits on the
 * default bridge and publishes its serving port on a free loopback port only
 * (`--publish 127.0.0.1:<hostPort>:<port>`).
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
import WebSocket from "ws";
import type { Observation, PolicyImagePin, PolicyRuntime, PolicySession, PolicyStartContext } from "../hardware/types.js";
import { ContainerEngineCli, findEngine, stderrTail, type EngineName } from "./container-engine.js";
import { EndpointPolicyRuntime, type EndpointRuntimeOptions } from "./endpoint-runtime.js";

/** Every policy container's name starts with this; `cleanup()` removes what carries it. */
export const CONTAINER_NAME_PREFIX = "assay-policy-";

export const CONTAINER_RUNTIME_DEFAULTS = { startTimeoutMs: 120_000, latencyBudgetMs: 200, port: 8000, warmupMs: 120_000, idleStopMs: 600_000, memory: "16g", network: "internal" } as const;

/** How long a warm JSON-wire server has to answer the reset between episodes before it is replaced, ms. */
export const RESET_TIMEOUT_MS = 5000;

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
  /** GPUs: false (default), true for every one (docker `--gpus all`, podman `--device nvidia.com/gpu=all`), or device indices (`--gpus device=0`). */
  gpus?: boolean | number[];
  /** The container's memory limit, docker's `--memory` (default "16g"). */
  memory?: string;
  /**
   * "internal" (default): the container joins the internal network `assay-policy` (no route off the host)
   * and the agent connects to its address there; "published": the default bridge with the port published
   * on 127.0.0.1 (rootless podman, whose container addresses the host cannot reach).
   */
  network?: "internal" | "published";
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
  /** A fresh container's first inference may take this long, ms, never charged as latency (default 120000). */
  warmupMs?: number;
  /** A run's warm container is removed after this long without an episode, ms (default 600000). */
  idleStopMs?: number;
}

/** Host and port the agent connects to: the container's address on the internal network, or the published loopback port. */
interface ServerAddress {
  host: string;
  port: number;
}

/** The container kept for one run between its episodes. */
interface WarmContainer {
  runId: string;
  image: string;
  name: string;
  /** Where the agent reaches the container's server. */
  address: ServerAddress;
  engine: ContainerEngineCli;
  /** An episode's session is open on it. */
  busy: boolean;
  idleTimer?: NodeJS.Timeout;
  /** The image it runs, by digest. */
  pin: PolicyImagePin | undefined;
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

/** True when anything answers HTTP at `http://<host>:<port>/` (any status: a WebSocket server says 426 or 405). */
function answersHttp(address: ServerAddress, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: address.host, port: address.port, path: "/", method: "GET", agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(true);
    });
    req.once("timeout", () => req.destroy());
    req.once("error", () => resolve(false));
    req.end();
  });
}

/**
 * The GPUs a container gets: none (false), every one (true), or the listed device indices; docker's
 * `--gpus`, or for podman the NVIDIA CDI devices (podman's own --gpus is unreliable).
 */
export function gpuArgs(engine: EngineName, gpus: boolean | number[]): string[] {
  if (gpus === false || (Array.isArray(gpus) && gpus.length === 0)) return [];
  if (gpus === true) return engine === "podman" ? ["--device", "nvidia.com/gpu=all"] : ["--gpus", "all"];
  // docker reads --gpus as CSV: several devices must be quoted inside the value.
  if (engine === "podman") return gpus.flatMap((i) => ["--device", `nvidia.com/gpu=${i}`]);
  return ["--gpus", gpus.length === 1 ? `device=${gpus[0]}` : `"device=${gpus.join(",")}"`];
}

/** The internal network (`--internal`: no route off the host) policy containers join by default. */
export const POLICY_NETWORK = "assay-policy";
/** Each of `network inspect` and `network create`, ms. */
const NETWORK_SETUP_TIMEOUT_MS = 30_000;

/** `; its last output: ...` from the container's log, for an error message; "" when it printed nothing. */
async function lastWords(engine: ContainerEngineCli, name: string): Promise<string> {
  const tail = await engine.logTail(name);
  return tail ? `; its last output: ${tail}` : "";
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Asks a JSON-wire server to forget every episode it holds: `{"type": "reset"}` on a WebSocket,
 * answered `{"reset": "ok"}`. False when it does not answer so within `timeoutMs` (an older server).
 */
function resetJsonServer(address: ServerAddress, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`ws://${address.host}:${address.port}/`);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.removeAllListeners();
      socket.on("error", () => undefined);
      socket.terminate();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once("open", () => socket.send(JSON.stringify({ type: "reset" })));
    socket.on("message", (data) => {
      try {
        if ((JSON.parse(String(data)) as { reset?: unknown }).reset === "ok") done(true);
        else done(false);
      } catch {
        done(false);
      }
    });
    socket.once("error", () => done(false));
    socket.once("close", () => done(false));
  });
}

/** One episode's session on a container, driven through the endpoint session it serves. */
class ContainerSession implements PolicySession {
  private closing: Promise<void> | undefined;

  /** `release`: what closing does to the container (remove it, or keep it warm for the run). */
  constructor(private readonly endpoint: PolicySession, private readonly release: () => Promise<void>, readonly image: PolicyImagePin | undefined) {}

  reset(info: { seed: number; instruction?: string; controlRateHz: number }): Promise<void> {
    return this.endpoint.reset(info);
  }

  act(observation: Observation): Promise<number[]> {
    return this.endpoint.act(observation);
  }

  /** Closes the connection, then removes the container; a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        await this.endpoint.close();
      } finally {
        await this.release();
      }
    })();
    return this.closing;
  }
}

export class ContainerPolicyRuntime implements PolicyRuntime {
  readonly policyTypes = ["container"] as const;
  private readonly endpoints: EndpointPolicyRuntime;
  private readonly log: (line: string) => void;
  private readonly startTimeoutMs: number;
  private readonly latencyBudgetMs: number;
  private readonly warmupMs: number;
  private readonly idleStopMs: number;
  private readonly memory: string;
  private readonly network: "internal" | "published";
  /** Containers this runtime started and has not removed yet. */
  private readonly live = new Set<string>();
  /** Set once the internal network is known to exist. */
  private networkReady: Promise<void> | undefined;
  /** The run's container kept between its episodes (at most one: a cell runs one episode at a time). */
  private warm: WarmContainer | undefined;

  constructor(private readonly options: ContainerRuntimeOptions) {
    this.endpoints = new EndpointPolicyRuntime(options.endpoint);
    this.log = options.log ?? (() => undefined);
    this.startTimeoutMs = options.startTimeoutMs ?? CONTAINER_RUNTIME_DEFAULTS.startTimeoutMs;
    this.latencyBudgetMs = options.latencyBudgetMs ?? CONTAINER_RUNTIME_DEFAULTS.latencyBudgetMs;
    this.warmupMs = options.warmupMs ?? CONTAINER_RUNTIME_DEFAULTS.warmupMs;
    this.idleStopMs = options.idleStopMs ?? CONTAINER_RUNTIME_DEFAULTS.idleStopMs;
    this.memory = options.memory ?? CONTAINER_RUNTIME_DEFAULTS.memory;
    this.network = options.network ?? CONTAINER_RUNTIME_DEFAULTS.network;
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

  async start(policy: Record<string, unknown>, robot: { model: string; dof: number }, context: PolicyStartContext = {}): Promise<PolicySession> {
    if (policy.type !== undefined && policy.type !== "container") throw new Error(`the container runtime runs policies of type "container"; got ${JSON.stringify(policy.type)}`);
    const entry = this.options.images.find((i) => i.image === policy.image);
    if (!entry) {
      const list = this.available();
      throw new Error(`this cell does not run image ${JSON.stringify(policy.image)}; it runs ${list.length ? list.join(", ") : "no images"} (policies.images in the agent config)`);
    }
    const runId = context.runId;
    const reused = await this.takeWarm(entry, runId);
    if (reused) {
      const endpoint = await this.connect(entry, policy, robot, reused.address, undefined).catch(async (error: Error) => {
        await this.stopWarm();
        throw error;
      });
      this.log(`policy ${entry.image}: run ${runId} reuses container ${reused.name}`);
      return new ContainerSession(endpoint, async () => this.idle(reused), reused.pin);
    }
    const engine = this.engine();
    // Cell setup, once per agent: not part of the container's start (startTimeoutMs).
    if (this.network === "internal") await this.ensureNetwork(engine);
    const name = `${CONTAINER_NAME_PREFIX}${randomBytes(6).toString("hex")}`;
    const deadline = performance.now() + this.startTimeoutMs;
    this.live.add(name);
    try {
      const hostPort = this.network === "published" ? await freeLoopbackPort() : undefined;
      await this.run(engine, entry, name, hostPort, deadline);
      const address = hostPort !== undefined ? { host: "127.0.0.1", port: hostPort } : { host: await this.containerIp(engine, name, deadline), port: entry.port };
      await this.waitUntilServing(engine, entry, name, address, deadline);
      const endpoint = await this.connect(entry, policy, robot, address, this.warmupMs);
      const pin = await this.pinOf(engine, entry.image);
      this.log(`policy ${entry.image}: container ${name} serves on ${address.host}:${address.port}`);
      if (runId === undefined) return new ContainerSession(endpoint, () => this.remove(engine, name), pin);
      const warm: WarmContainer = { runId, image: entry.image, name, address, engine, busy: true, pin };
      this.warm = warm;
      return new ContainerSession(endpoint, async () => this.idle(warm), pin);
    } catch (error) {
      await this.remove(engine, name).catch((e: Error) => this.log(`policy ${entry.image}: ${e.message}; remove it by hand: ${engine.name} rm -f ${name}`));
      throw error;
    }
  }

  /** The image's id and registry digests, as the engine has it now; undefined (logged) when the engine cannot say. */
  private async pinOf(engine: ContainerEngineCli, image: string): Promise<PolicyImagePin | undefined> {
    const digest = await engine.imageDigest(image).catch(() => undefined);
    if (!digest) {
      this.log(`policy ${image}: ${engine.name} image inspect gave no id; the episode is reported without the image's digest`);
      return undefined;
    }
    return { image, id: digest.id, repo_digests: digest.repoDigests };
  }

  /** The endpoint session on a serving container; `warmupMs` for a fresh container's first inference. */
  private connect(entry: ContainerImage, policy: Record<string, unknown>, robot: { model: string; dof: number }, address: ServerAddress, warmupMs: number | undefined): Promise<PolicySession> {
    return this.endpoints.start({
      type: "endpoint",
      url: `ws://${address.host}:${address.port}/`,
      latency_budget_ms: this.latencyBudgetMs,
      protocol: entry.protocol,
      ...(entry.observationMap ? { observation_map: entry.observationMap } : {}),
      ...(policy.inference !== undefined ? { inference: policy.inference } : {}),
    }, robot, warmupMs !== undefined ? { warmupMs } : {});
  }

  /**
   * The warm container of `runId` running `entry`, reset and marked busy; undefined when there is
   * none, or it stopped, or its server did not answer the reset (then it is removed). A warm
   * container of another run or image is removed first: the run it served has moved on.
   */
  private async takeWarm(entry: ContainerImage, runId: string | undefined): Promise<WarmContainer | undefined> {
    const warm = this.warm;
    if (!warm) return undefined;
    if (warm.busy || warm.runId !== runId || warm.image !== entry.image) {
      if (!warm.busy) await this.stopWarm();
      return undefined;
    }
    clearTimeout(warm.idleTimer);
    warm.busy = true;
    const running = (await warm.engine.containerNames(warm.name, { all: false }).catch((): string[] => [])).includes(warm.name);
    if (!running) {
      this.log(`policy ${entry.image}: container ${warm.name} of run ${runId} stopped between episodes${await lastWords(warm.engine, warm.name)}; starting a fresh one`);
      await this.stopWarm();
      return undefined;
    }
    if (entry.protocol === "json" && !(await resetJsonServer(warm.address, RESET_TIMEOUT_MS))) {
      this.log(`policy ${entry.image}: container ${warm.name} did not answer the reset message ({"type":"reset"} -> {"reset":"ok"}) within ${RESET_TIMEOUT_MS} ms; starting a fresh one (docs/policies.md, The JSON wire)`);
      await this.stopWarm();
      return undefined;
    }
    return warm;
  }

  /** An episode on `warm` ended: keep it for the run's next episode, at most `idleStopMs`. */
  private async idle(warm: WarmContainer): Promise<void> {
    if (this.warm !== warm) {
      // Replaced while its episode ran: nothing will reuse it.
      await this.remove(warm.engine, warm.name);
      return;
    }
    warm.busy = false;
    clearTimeout(warm.idleTimer);
    warm.idleTimer = setTimeout(() => {
      if (this.warm === warm && !warm.busy) {
        this.stopWarm().then(
          () => this.log(`policy ${warm.image}: removed container ${warm.name} of run ${warm.runId}, idle for ${Math.round(this.idleStopMs / 1000)} s (policies.idleStopMs)`),
          (e: Error) => this.log(`policy ${warm.image}: ${e.message}`),
        );
      }
    }, this.idleStopMs);
    warm.idleTimer.unref();
  }

  /** Removes the warm container, if any. */
  private async stopWarm(): Promise<void> {
    const warm = this.warm;
    if (!warm) return;
    this.warm = undefined;
    clearTimeout(warm.idleTimer);
    await this.remove(warm.engine, warm.name);
  }

  /** Creates the internal network policy containers join, unless it exists. */
  private ensureNetwork(engine: ContainerEngineCli): Promise<void> {
    this.networkReady ??= this.createNetwork(engine).catch((error: Error) => {
      this.networkReady = undefined;
      throw error;
    });
    return this.networkReady;
  }

  private async createNetwork(engine: ContainerEngineCli): Promise<void> {
    const inspect = await engine.exec(["network", "inspect", POLICY_NETWORK], NETWORK_SETUP_TIMEOUT_MS);
    if (inspect.code === 0) return;
    const created = await engine.exec(["network", "create", "--internal", POLICY_NETWORK], NETWORK_SETUP_TIMEOUT_MS);
    // Another agent process may have created it in between.
    if (created.code !== 0 && !/already exists/i.test(created.stderr)) {
      throw new Error(`${engine.name} network create --internal ${POLICY_NETWORK} failed (exit ${created.code}): ${stderrTail(created.stderr) || "no message"}; or set policies.network to "published" (docs/install-cell-agent.md, Policies)`);
    }
  }

  /** The container's address on the internal network. */
  private async containerIp(engine: ContainerEngineCli, name: string, deadline: number): Promise<string> {
    const out = await engine.check(["inspect", "--format", `{{(index .NetworkSettings.Networks "${POLICY_NETWORK}").IPAddress}}`, name], "inspect", Math.max(1, deadline - performance.now()));
    const ip = out.trim();
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip)) throw new Error(`${engine.name} gave container ${name} no address on the ${POLICY_NETWORK} network (got ${JSON.stringify(ip.slice(0, 80))}); with rootless podman set policies.network to "published" (docs/install-cell-agent.md, Policies)`);
    return ip;
  }

  /** `docker run` with the cell's flags: see the file's comment. */
  private runArgs(engine: ContainerEngineCli, entry: ContainerImage, name: string, hostPort: number | undefined): string[] {
    return [
      "run", "--detach", "--pull", "never", "--name", name,
      ...(hostPort !== undefined ? ["--publish", `127.0.0.1:${hostPort}:${entry.port}`] : ["--network", POLICY_NETWORK]),
      "--memory", this.memory,
      ...gpuArgs(engine.name, this.options.gpus ?? false),
      ...Object.entries(entry.env).flatMap(([key, value]) => ["--env", `${key}=${value}`]),
      entry.image,
    ];
  }

  private async run(engine: ContainerEngineCli, entry: ContainerImage, name: string, hostPort: number | undefined, deadline: number): Promise<void> {
    const args = this.runArgs(engine, entry, name, hostPort);
    const out = await engine.exec(args, deadline - performance.now());
    if (out.timedOut) throw new Error(`${engine.name} run ${entry.image} did not return within ${Math.round(this.startTimeoutMs / 1000)} s (policies.startTimeoutMs)`);
    if (out.code === 0) return;
    const hint = /no such image|unable to find image|image not known/i.test(out.stderr) ? `; the image is not on this cell: pull it first (${engine.name} pull ${entry.image})` : "";
    throw new Error(`${engine.name} run ${entry.image} failed (exit ${out.code}): ${stderrTail(out.stderr) || "no message"}${hint}`);
  }

  /** Resolves once the server in the container answers; rejects when the container stops or the deadline passes. */
  private async waitUntilServing(engine: ContainerEngineCli, entry: ContainerImage, name: string, address: ServerAddress, deadline: number): Promise<void> {
    let nextAliveCheck = performance.now() + ALIVE_CHECK_INTERVAL_MS;
    for (;;) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      if (await answersHttp(address, Math.min(1000, left))) return;
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
    clearTimeout(this.warm?.idleTimer);
    this.warm = undefined;
    if (this.live.size === 0) return;
    const engine = this.engine();
    const names = [...this.live];
    await engine.remove(names);
    for (const n of names) this.live.delete(n);
  }
}
