/**
 * The agent config's `policies` section: how the cell runs `container` policies
 * (docs/install-cell-agent.md, "Policies"), and the images it offers.
 */
import type { EngineName } from "./policy/container-engine.js";
import { CONTAINER_RUNTIME_DEFAULTS, type ContainerImage } from "./policy/container-runtime.js";
import { integer, isObject, number, oneOf, section } from "./config-fields.js";

/** How the cell runs `container` policies (docs/install-cell-agent.md, "Policies"). */
export interface PoliciesConfig {
  /** "none" (default: the cell runs no images) or "container" (an OCI engine runs them). */
  runtime: "none" | "container";
  /** "docker" or "podman" (default: whichever is on PATH, docker first). */
  engine?: EngineName;
  /** GPUs of policy containers: false (default), true for every one (`--gpus all`), or device indices (`--gpus device=0`). */
  gpus: boolean | number[];
  /** A policy container's memory limit, docker's `--memory` (default "16g"). */
  memory: string;
  /** "internal" (default: the `assay-policy` internal network, no route off the host) or "published" (127.0.0.1 port; rootless podman). */
  network: "internal" | "published";
  /** From starting an image until its server answers, ms (default 120000). */
  startTimeoutMs: number;
  /** latency_budget_ms a policy container is held to each step (default 200). */
  latencyBudgetMs: number;
  /** A fresh container's first inference (loading, compiling) may take this long, never charged as latency, ms (default 120000). */
  warmupMs: number;
  /** A run's container, kept between its episodes, is removed after this long without one, ms (default 600000). */
  idleStopMs: number;
  /** The images this cell runs, reported to the coordinator; a bare string is `{image}` with the defaults. */
  images: ContainerImage[];
}

const POLICY_DEFAULTS = {
  gpus: false as boolean | number[], memory: CONTAINER_RUNTIME_DEFAULTS.memory as string, network: CONTAINER_RUNTIME_DEFAULTS.network as "internal" | "published",
  startTimeoutMs: CONTAINER_RUNTIME_DEFAULTS.startTimeoutMs, latencyBudgetMs: CONTAINER_RUNTIME_DEFAULTS.latencyBudgetMs,
  warmupMs: CONTAINER_RUNTIME_DEFAULTS.warmupMs, idleStopMs: CONTAINER_RUNTIME_DEFAULTS.idleStopMs,
};
/** An image reference as docker and podman take it; never starting with "-", so it cannot pass for an option. */
const IMAGE_REFERENCE = /^[A-Za-z0-9][A-Za-z0-9._\-/:@]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function compilePolicies(raw: unknown): PoliciesConfig {
  if (raw === undefined || raw === null) return { runtime: "none", ...POLICY_DEFAULTS, images: [] };
  const policies = section(raw, "policies", ["runtime", "engine", "gpus", "memory", "network", "startTimeoutMs", "latencyBudgetMs", "warmupMs", "idleStopMs", "images"]);
  const images = policies.images ?? [];
  if (!Array.isArray(images)) throw new Error(`agent config "policies.images" must be an array of images (names, or {image, protocol, port, observationMap, env}); got ${JSON.stringify(images)}`);
  const compiled = images.map((entry, i) => compilePolicyImage(entry, `policies.images[${i}]`));
  const names = compiled.map((c) => c.image);
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) throw new Error(`agent config "policies.images" names "${duplicate}" twice; list each image once`);
  const gpus = policies.gpus;
  if (gpus !== undefined && typeof gpus !== "boolean" && !(Array.isArray(gpus) && gpus.length > 0 && gpus.every((i) => Number.isInteger(i) && i >= 0 && i < 64) && new Set(gpus).size === gpus.length)) {
    throw new Error(`agent config "policies.gpus" must be true, false, or GPU indices such as [0] or [0, 1] (as nvidia-smi numbers them); got ${JSON.stringify(gpus)?.slice(0, 100)}`);
  }
  const memory = policies.memory;
  if (memory !== undefined && (typeof memory !== "string" || !/^[1-9][0-9]*[bkmg]?$/i.test(memory))) {
    throw new Error(`agent config "policies.memory" must be a memory size as docker's --memory takes it, e.g. "16g" or "8192m"; got ${JSON.stringify(memory)?.slice(0, 100)}`);
  }
  return {
    runtime: oneOf(policies, "runtime", "policies.", ["none", "container"] as const, "none"),
    ...(policies.engine !== undefined ? { engine: oneOf(policies, "engine", "policies.", ["docker", "podman"] as const) } : {}),
    gpus: (gpus as boolean | number[] | undefined) ?? POLICY_DEFAULTS.gpus,
    memory: (memory as string | undefined) ?? POLICY_DEFAULTS.memory,
    network: oneOf(policies, "network", "policies.", ["internal", "published"] as const, POLICY_DEFAULTS.network),
    startTimeoutMs: number(policies, "startTimeoutMs", POLICY_DEFAULTS.startTimeoutMs, "policies.", 1000, 3_600_000),
    latencyBudgetMs: number(policies, "latencyBudgetMs", POLICY_DEFAULTS.latencyBudgetMs, "policies.", 1, 60_000),
    warmupMs: number(policies, "warmupMs", POLICY_DEFAULTS.warmupMs, "policies.", 1, 3_600_000),
    idleStopMs: number(policies, "idleStopMs", POLICY_DEFAULTS.idleStopMs, "policies.", 1000, 86_400_000),
    images: compiled,
  };
}

function compilePolicyImage(raw: unknown, where: string): ContainerImage {
  if (typeof raw !== "string" && !isObject(raw)) throw new Error(`agent config "${where}" must be an image name or {image, protocol, port, observationMap, env}; got ${JSON.stringify(raw)}`);
  const entry = typeof raw === "string" ? { image: raw } : section(raw, where, ["image", "protocol", "port", "observationMap", "env"]);
  const image = entry.image;
  if (typeof image !== "string" || !IMAGE_REFERENCE.test(image)) {
    throw new Error(`agent config "${where}${typeof raw === "string" ? "" : ".image"}" must be an image reference such as "ghcr.io/acme/picker:3"; got ${JSON.stringify(image)}`);
  }
  const env = entry.env ?? {};
  if (!isObject(env) || !Object.entries(env).every(([k, v]) => ENV_NAME.test(k) && typeof v === "string")) {
    throw new Error(`agent config "${where}.env" must map variable names (letters, digits, _) to strings, e.g. {"MODEL_DIR": "/models"}; got ${JSON.stringify(env)}`);
  }
  if (entry.observationMap !== undefined && !isObject(entry.observationMap)) {
    throw new Error(`agent config "${where}.observationMap" must be an object; got ${JSON.stringify(entry.observationMap)}`);
  }
  return {
    image,
    protocol: oneOf(entry, "protocol", `${where}.`, ["json", "openpi"] as const, "json"),
    port: integer(entry, "port", CONTAINER_RUNTIME_DEFAULTS.port, `${where}.`, 1, 65535),
    ...(entry.observationMap !== undefined ? { observationMap: entry.observationMap as Record<string, unknown> } : {}),
    env: { ...(env as Record<string, string>) },
  };
}
